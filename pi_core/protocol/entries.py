"""Session file lines (format version 3): the header and the entry types, as pi writes
them, attributes in pi's key order (docs/sessions.md; :mod:`pi_core.protocol.codec`
keeps unknown keys and entry types, so a newer pi's file survives a load and append)."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from typing import Any, Literal, cast

from pi_core.protocol.messages import AgentMessage, SystemMessage, Usage, UserContent, _Extra, _filled
from pi_core.protocol.records import field, record

SESSION_VERSION = 3


def iso_now() -> str:
    """The current UTC time as pi writes it: ``2026-11-30T04:04:52.055Z``."""
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def new_entry_id() -> str:
    """Eight hex characters: the start of a random UUID, as pi's entry ids are."""
    return os.urandom(4).hex()


def new_session_id() -> str:
    """A UUIDv7 (time-ordered, random below), as pi's session ids are."""
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    rand_a, rand_b = rand >> 68, rand & ((1 << 62) - 1)
    value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | rand_a << 64 | 0b10 << 62 | rand_b
    h = f"{value:032x}"  # spelled out: the uuid module's import pulls in platform (1 ms a start)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


@record
class SessionHeader(_Extra):
    type: Literal["session"] = field(default="session", init=False)
    version: int = SESSION_VERSION
    id: str = field(factory=new_session_id)
    timestamp: str = field(factory=iso_now)
    cwd: str = ""
    parent_session: str | None = None


@record
class _EntryLine(_Extra):
    """What every entry line has besides its ``type``, which :func:`_type_first` puts
    before these (pi's key order)."""

    id: str = field(factory=new_entry_id, kw_only=True)
    # Written even when None: pi's first entry says "parentId": null.
    parent_id: str | None = field(default=None, kw_only=True, metadata={"always_written": True})
    timestamp: str = field(factory=iso_now, kw_only=True)


def _type_first(cls: type, fields: list[Any]) -> list[Any]:
    return sorted(fields, key=lambda a: a.name != "type")


@record(field_transformer=_type_first)
class MessageEntry(_EntryLine):
    type: Literal["message"] = field(default="message", init=False)
    message: AgentMessage = _filled()


@record(field_transformer=_type_first)
class ModelChangeEntry(_EntryLine):
    type: Literal["model_change"] = field(default="model_change", init=False)
    provider: str = ""
    model_id: str = ""


@record(field_transformer=_type_first)
class ThinkingLevelChangeEntry(_EntryLine):
    type: Literal["thinking_level_change"] = field(default="thinking_level_change", init=False)
    thinking_level: str = "off"


@record(field_transformer=_type_first)
class CompactionEntry(_EntryLine):
    """Everything before ``first_kept_entry_id`` reaches the model as ``summary``."""

    type: Literal["compaction"] = field(default="compaction", init=False)
    summary: str = ""
    first_kept_entry_id: str = ""
    tokens_before: int = 0
    details: Any = None
    usage: Usage | None = None  # of the summary's own request (pi 1.6): counted in the totals
    from_hook: bool | None = None
    system_message: SystemMessage | None = None  # pi 1.6: the prompt and tools replayed at the cut


@record(field_transformer=_type_first)
class BranchSummaryEntry(_EntryLine):
    """A summary of the branch that was left, hung where the new branch starts."""

    type: Literal["branch_summary"] = field(default="branch_summary", init=False)
    from_id: str = ""
    summary: str = ""
    details: Any = None
    usage: Usage | None = None
    from_hook: bool | None = None


@record(field_transformer=_type_first)
class UsageEntry(_EntryLine):
    """pi 1.6: spending outside the conversation (cache warming, a plugin's calls)."""

    type: Literal["usage"] = field(default="usage", init=False)
    kind: str = ""
    provider: str = ""
    model: str = ""
    usage: Usage = field(factory=Usage)
    note: str | None = None


@record(field_transformer=_type_first)
class ContextEditEntry(_EntryLine):
    """pi 1.6: what the model sees of ``target_id`` from here on, the history untouched:
    ``replacement`` None leaves it out, ``{"content": ...}`` replaces only its content."""

    type: Literal["context_edit"] = field(default="context_edit", init=False)
    target_id: str = ""
    replacement: Any = field(default=None, metadata={"always_written": True})


@record(field_transformer=_type_first)
class CustomEntry(_EntryLine):
    """Plugin state kept in the session; never sent to the model."""

    type: Literal["custom"] = field(default="custom", init=False)
    custom_type: str = ""
    data: Any = None


@record(field_transformer=_type_first)
class CustomMessageEntry(_EntryLine):
    """A plugin's message that takes part in the context."""

    type: Literal["custom_message"] = field(default="custom_message", init=False)
    custom_type: str = ""
    content: str | list[UserContent] = ""
    display: bool = True
    details: Any = None


@record(field_transformer=_type_first)
class LabelEntry(_EntryLine):
    """Sets (or, with ``label`` None, clears) the label of ``target_id``."""

    type: Literal["label"] = field(default="label", init=False)
    target_id: str = ""
    label: str | None = None


@record(field_transformer=_type_first)
class SessionInfoEntry(_EntryLine):
    type: Literal["session_info"] = field(default="session_info", init=False)
    name: str | None = None


@record
class UnknownEntry:
    """An entry of a type this version does not know, kept as read."""

    data: dict

    @property
    def type(self) -> str:
        return self.data.get("type", "")

    @property
    def id(self) -> str:
        # Every entry of a session has one: the reader skips a line without an id.
        return cast(str, self.data.get("id"))

    @property
    def parent_id(self) -> str | None:
        return self.data.get("parentId")


Entry = (MessageEntry | ModelChangeEntry | ThinkingLevelChangeEntry | CompactionEntry | BranchSummaryEntry
         | UsageEntry | ContextEditEntry | CustomEntry | CustomMessageEntry | LabelEntry | SessionInfoEntry
         | UnknownEntry)


def iso_to_ms(stamp: str) -> int:
    """``2026-11-30T04:04:55.206Z`` → Unix milliseconds (0 when unreadable), as pi's
    ``new Date(timestamp).getTime()``."""
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except (AttributeError, ValueError):
        return 0
    return round(moment.timestamp() * 1000)


def message_of(entry: Any) -> AgentMessage | None:
    """The agent message an entry contributes to the context, if any: messages as they
    are, plugin messages, branch summaries and compaction summaries."""
    from pi_core.protocol import messages as m
    if isinstance(entry, MessageEntry):
        return entry.message
    if isinstance(entry, CustomMessageEntry):
        return m.CustomMessage(custom_type=entry.custom_type, content=entry.content, display=entry.display,
                               details=entry.details, timestamp=iso_to_ms(entry.timestamp))
    if isinstance(entry, BranchSummaryEntry):
        if not entry.summary:
            return None
        return m.BranchSummaryMessage(summary=entry.summary, from_id=entry.from_id,
                                      timestamp=iso_to_ms(entry.timestamp))
    if isinstance(entry, CompactionEntry):
        return m.CompactionSummaryMessage(summary=entry.summary, tokens_before=entry.tokens_before,
                                          timestamp=iso_to_ms(entry.timestamp))
    return None
