"""The session events a plain prompt never emits (a session renamed, a custom entry, a
dialog, a failed compaction), built on first use through :mod:`.session_events`."""

from __future__ import annotations

from typing import Any, Literal

from pi_core.protocol.records import field, record


@record
class SessionInfoChanged:
    """The session's display name changed (``None``: cleared)."""

    type: Literal["session_info_changed"] = field(default="session_info_changed", init=False)
    name: str | None = None


@record
class EntryAppended:
    """A plugin appended a custom entry (``ctx.append_entry``, pi's ``appendEntry``):
    the entry as the file holds it (pi 1.6's ``entry_appended``)."""

    type: Literal["entry_appended"] = field(default="entry_appended", init=False)
    entry: Any = None


@record
class UiPromptStart:
    """A plugin's dialog is waiting for the user (pi 1.6): ``kind`` select, confirm,
    input or editor; nested dialogs make one span."""

    type: Literal["ui_prompt_start"] = field(default="ui_prompt_start", init=False)
    reason: str = "ui_prompt"
    kind: str = "confirm"
    title: str | None = None


@record
class UiPromptEnd:
    type: Literal["ui_prompt_end"] = field(default="ui_prompt_end", init=False)
    reason: str = "ui_prompt"


@record
class SessionCompactFailed:
    """pi 1.6's ``session_compact_failed``: a compaction that wrote no entry (for the
    plugins' hook). ``error_message`` is None when it was cancelled or aborted."""

    type: Literal["session_compact_failed"] = field(default="session_compact_failed", init=False)
    reason: str = "manual"
    error_message: str | None = None
    aborted: bool = False
    will_retry: bool = False
    from_hook: bool = False
