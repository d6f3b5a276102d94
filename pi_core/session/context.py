"""What the model sees of a session: the messages on the path from the root to the leaf.

As pi builds it: the model and thinking level are the last ones set on the path (a
``model_change`` or an assistant message's provider and model); if a compaction is on the
path, its summary comes first (after pi 1.6's ``systemMessage``, which stands for the
system messages among those kept), then the messages it kept (from ``firstKeptEntryId``
up to the compaction), then everything after it. Branch summaries and custom messages take part
as their message forms; ``custom``, ``label``, ``session_info`` and ``usage`` entries never
do. pi 1.6's ``context_edit`` entries among those (the latest per target wins) leave their
target out (``replacement`` null) or replace only its content, the history untouched.

One guard pi lacks: a tool result whose call is not just before it (a compaction or a
damaged file can cut a call from its result) is left out, since every provider refuses
such a request.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pi_core.protocol.codec import message_from_json, to_json
from pi_core.protocol.entries import (
    CompactionEntry,
    ContextEditEntry,
    Entry,
    MessageEntry,
    ModelChangeEntry,
    message_of,
)
from pi_core.protocol.messages import AgentMessage, AssistantMessage, ToolCall, ToolResultMessage
from pi_core.protocol.records import field, record


@record(frozen=True)
class ModelRef:
    provider: str
    model_id: str


@record
class SessionContext:
    messages: list[AgentMessage] = field(factory=list)
    thinking_level: str = "off"
    model: ModelRef | None = None
    selected: ModelRef | None = None  # the latest model_change: the selection (pi 1.6's virtual models)


def build_session_context(
    path: Sequence[Any], read: Callable[[Any], Entry] = lambda entry: entry,
    read_all: Callable[[Sequence[Any]], Sequence[Entry]] | None = None,
) -> SessionContext:
    """The context for the path root → leaf. ``read`` makes a path item (maybe not yet
    parsed; its ``type`` is known) into its entry, ``read_all`` a run of them: only for
    the items the context needs, so what a compaction summarised is never built."""
    if read_all is None:
        read_all = lambda items: [read(item) for item in items]  # noqa: E731
    compaction_at = next((i for i in range(len(path) - 1, -1, -1)
                          if path[i].type == "compaction"), -1)
    messages: list[AgentMessage] = []
    selected, kept = path, 0
    compaction = read(path[compaction_at]) if compaction_at >= 0 else None
    if isinstance(compaction, CompactionEntry):
        first = next((i for i in range(compaction_at)
                      if path[i].id == compaction.first_kept_entry_id), compaction_at)
        selected, kept = [*path[first:compaction_at], *path[compaction_at + 1:]], compaction_at - first
    edits = {e.target_id: e.replacement for e in read_all(
        [i for i in selected if i.type == "context_edit"]) if isinstance(e, ContextEditEntry)}
    if isinstance(compaction, CompactionEntry):
        messages += [compaction.system_message] if compaction.system_message else []
        _add(messages, message_of(compaction), edits.get(compaction.id, ()))
    add = messages.append
    for n, entry in enumerate(read_all(selected)):  # read in bulk first: the scan below
        if type(entry) is MessageEntry and not edits:  # then finds most of it already read
            if n >= kept or entry.message.role != "system":
                add(entry.message)
        elif not isinstance(entry, CompactionEntry):  # an earlier one among those kept
            message = message_of(entry)
            if n >= kept or getattr(message, "role", None) != "system":
                _add(messages, message, edits.get(entry.id, ()))

    thinking_level = model = chosen = None
    for item in reversed(path):  # the last of each on the path counts
        kind = item.type
        if kind == "thinking_level_change" and thinking_level is None:
            thinking_level = getattr(read(item), "thinking_level", None)
        elif (kind == "message" and model is None) or (kind == "model_change" and chosen is None):
            entry = read(item)
            if isinstance(entry, ModelChangeEntry):
                chosen = ModelRef(entry.provider, entry.model_id)
                model = model or chosen
            elif isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage):
                model = ModelRef(entry.message.provider, entry.message.model)
        if thinking_level is not None and chosen is not None:
            break
    return SessionContext(_without_orphan_results(messages), thinking_level or "off", model, chosen)


def _add(messages: list[AgentMessage], message: AgentMessage | None, edit: Any) -> None:
    """``message`` as its latest context edit leaves it (``()``: none), as pi 1.6 projects
    it: a string replaces an assistant's or a tool result's content as one text block."""
    if message is None or edit is None:
        return
    if edit != () and message.role in ("user", "assistant", "toolResult", "custom"):
        content = edit.get("content") if isinstance(edit, dict) else None
        if isinstance(content, str) and message.role in ("assistant", "toolResult"):
            content = [{"type": "text", "text": content}]
        message = message_from_json({**to_json(message), "content": content})
    messages.append(message)


_NONE_OWED: frozenset = frozenset()


def _without_orphan_results(messages: list[AgentMessage]) -> list[AgentMessage]:
    # The exact classes are tested through ``kind`` (a long history has 20,000 messages),
    # which mypy does not narrow ``message`` by: hence the ignores below.
    owed: set[str] | frozenset = _NONE_OWED  # the latest answer's calls still without a result
    kept = []
    for message in messages:
        kind = type(message)
        if kind is ToolResultMessage or (kind is not AssistantMessage
                                         and isinstance(message, ToolResultMessage)):
            if message.tool_call_id not in owed:  # type: ignore[union-attr]  # a tool result
                continue
            # A non-empty owed is a set: only _NONE_OWED is a frozenset.
            owed.discard(message.tool_call_id)  # type: ignore[union-attr]
        elif kind is AssistantMessage or isinstance(message, AssistantMessage):
            calls = [b.id for b in message.content  # type: ignore[union-attr]  # an answer
                     if isinstance(b, ToolCall)]
            owed = set(calls) if calls else _NONE_OWED
        elif owed:
            owed = _NONE_OWED
        kept.append(message)
    return kept
