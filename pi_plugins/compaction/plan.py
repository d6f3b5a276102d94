"""Planning a compaction on the branch's entries: what is summarised and what is kept.

Walk back from the newest entry summing token estimates until ``keep_recent_tokens`` is
reached; cut there, but only at a user, assistant, bashExecution or custom message (or a
branch summary / custom_message entry), never at a tool result, which must stay with its
call. When the cut lands inside a turn (a single turn larger than the budget), the turn's
prefix is summarised separately: a *split turn*. A repeated compaction starts where the
previous one kept from, so what survived it is summarised again with its summary given
as context. The plugin plans in ``prepare_compaction``, before ``session_before_compact``,
which hands the plan to every plugin on the event (``event.preparation``), so a plugin's
own summariser needs nothing from the built-in one.
"""

from __future__ import annotations

from collections.abc import Iterable

from attrs import define, field

from pi_core.app.tokens import context_tokens, estimate_tokens
from pi_core.protocol.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
    message_of,
)
from pi_core.protocol.messages import AssistantMessage, ToolCall, ToolResultMessage


def _default_files(name: str, arguments: dict) -> dict:
    """What a call of a tool that is not loaded any more touched, by pi's built-in names
    (sessions written by pi, or by an earlier run with other tools)."""
    path = arguments.get("path") if isinstance(arguments, dict) else None
    if not isinstance(path, str):
        return {}
    if name == "read":
        return {"read": [path]}
    if name in ("write", "edit"):
        return {"modified": [path]}
    return {}


CUT_ROLES = frozenset({"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"})
TURN_START_ROLES = frozenset({"user", "bashExecution"})


@define
class FileOps:
    """Files the summarised work read and changed, accumulated across compactions."""

    read: set[str] = field(factory=set)
    modified: set[str] = field(factory=set)

    #: The tools by name, whose ``files(args)`` say what each call read and changed.
    tools: dict = field(factory=dict, eq=False, repr=False)

    def add_from(self, message) -> None:
        """The calls an answer made, or (pi 1.6) those a tool made, a codemode script's,
        as recorded on its result (``nestedCalls``)."""
        if isinstance(message, ToolResultMessage) and isinstance(message.nested_calls, dict):
            calls = [(str(c.get("name")), c.get("arguments") or {}) for c in message.nested_calls.get("calls") or ()
                     if isinstance(c, dict)]
        elif isinstance(message, AssistantMessage):
            calls = [(block.name, block.arguments) for block in message.content if isinstance(block, ToolCall)]
        else:
            return
        for name, arguments in calls:
            tool = self.tools.get(name)
            effects = tool.files(arguments) if tool is not None else _default_files(name, arguments)
            self.read.update(effects.get("read") or ())
            self.modified.update(effects.get("modified") or ())

    def add_details(self, details) -> None:
        if isinstance(details, dict):
            self.read.update(f for f in details.get("readFiles") or () if isinstance(f, str))
            self.modified.update(f for f in details.get("modifiedFiles") or () if isinstance(f, str))

    def lists(self) -> tuple[list[str], list[str]]:
        """(files only read, files modified), each sorted."""
        return sorted(self.read - self.modified), sorted(self.modified)


@define
class Preparation:
    first_kept_entry_id: str
    messages_to_summarize: list
    turn_prefix_messages: list
    is_split_turn: bool
    tokens_before: int
    previous_summary: str | None
    file_ops: FileOps


def _cuttable(entry) -> bool:
    if isinstance(entry, (BranchSummaryEntry, CustomMessageEntry)):
        return True
    return isinstance(entry, MessageEntry) and entry.message.role in CUT_ROLES


def _turn_start(entries: list, index: int, start: int) -> int:
    for i in range(index, start - 1, -1):
        entry = entries[i]
        if isinstance(entry, (BranchSummaryEntry, CustomMessageEntry)):
            return i
        if isinstance(entry, MessageEntry) and entry.message.role in TURN_START_ROLES:
            return i
    return -1


def find_cut(entries: list, start: int, end: int, keep_recent_tokens: int) -> tuple[int, int]:
    """(index of the first kept entry, index of its turn's start or -1 when the cut is
    at a turn boundary)."""
    cut_points = [i for i in range(start, end) if _cuttable(entries[i])]
    if not cut_points:
        return start, -1
    cut = cut_points[0]
    total = 0
    for i in range(end - 1, start - 1, -1):
        if not isinstance(entries[i], MessageEntry):
            continue
        total += estimate_tokens(entries[i].message)
        if total >= keep_recent_tokens:
            cut = next((c for c in cut_points if c >= i), cut_points[-1])
            break
    # Keep the settings entries (model or thinking changes, labels) just before the cut.
    while cut > start and not isinstance(entries[cut - 1], (MessageEntry, CompactionEntry)):
        cut -= 1
    entry = entries[cut]
    if isinstance(entry, MessageEntry) and entry.message.role == "user":
        return cut, -1
    return cut, _turn_start(entries, cut, start)


def prepare_compaction(path: list, keep_recent_tokens: int, context: list | None = None,
                       tools: Iterable | None = None) -> Preparation | None:
    """Plan a compaction of the branch ``path`` (root → leaf), or ``None`` when there is
    nothing to compact (the branch already ends in a compaction or has no entries). A
    branch shorter than ``keep_recent_tokens`` is planned as pi 0.73 plans it: everything
    is kept and the summary is of what came before it (nothing, or the earlier summary).
    ``context`` is the branch's current context, for ``tokens_before``; ``tools`` tell
    which files each tool call touched."""
    if not path or isinstance(path[-1], CompactionEntry):
        return None
    previous = next((i for i in range(len(path) - 1, -1, -1) if isinstance(path[i], CompactionEntry)), -1)
    start, previous_summary = 0, None
    file_ops = FileOps(tools={t.name: t for t in tools or ()})
    if previous >= 0:
        earlier = path[previous]
        previous_summary = earlier.summary
        kept = next((i for i, e in enumerate(path) if getattr(e, "id", None) == earlier.first_kept_entry_id), -1)
        start = kept if kept >= 0 else previous + 1
        if not earlier.from_hook:
            file_ops.add_details(earlier.details)
    cut, turn_start = find_cut(path, start, len(path), keep_recent_tokens)
    first_kept = getattr(path[cut], "id", None)
    if not first_kept:
        return None
    split = turn_start != -1
    history_end = turn_start if split else cut

    def messages(lo: int, hi: int) -> list:
        found = []
        for entry in path[lo:hi]:
            if isinstance(entry, CompactionEntry):
                continue
            message = message_of(entry)
            if message is not None and getattr(message, "role", None) != "system":  # pi 1.6: never summarised
                found.append(message)
                file_ops.add_from(message)
        return found

    to_summarize = messages(start, history_end)
    prefix = messages(turn_start, cut) if split else []
    tokens_before = context_tokens(context) if context is not None else context_tokens(
        [m for m in (message_of(e) for e in path) if m is not None])
    return Preparation(
        first_kept_entry_id=first_kept,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=prefix,
        is_split_turn=split and bool(prefix),
        tokens_before=tokens_before,
        previous_summary=previous_summary,
        file_ops=file_ops,
    )


def to_event(plan: Preparation | None):
    """The plan as the public :class:`pi_core.protocol.events.CompactionPreparation`."""
    from pi_core.protocol.events import CompactionPreparation

    if plan is None:
        return None
    read, modified = plan.file_ops.lists()
    return CompactionPreparation(
        first_kept_entry_id=plan.first_kept_entry_id, tokens_before=plan.tokens_before,
        messages_to_summarize=list(plan.messages_to_summarize),
        turn_prefix_messages=list(plan.turn_prefix_messages), is_split_turn=plan.is_split_turn,
        previous_summary=plan.previous_summary, read_files=read, modified_files=modified)
