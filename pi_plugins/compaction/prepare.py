"""What a compaction summarises and what it keeps, decided on the branch's entries.

Walk back from the newest entry summing token estimates until ``keep_recent_tokens`` is
reached; cut there, but only at a user, assistant, bashExecution or custom message (or a
branch summary / custom_message entry), never at a tool result, which must stay with its
call. When the cut lands inside a turn (a single turn larger than the budget), the turn's
prefix is summarised separately: a *split turn*. A repeated compaction starts where the
previous one kept from, so what survived it is summarised again with its summary given
as context.
"""

from __future__ import annotations

from attrs import define, field

from pi_core.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
    message_of,
)
from pi_core.messages import AssistantMessage, ToolCall

from pi_core.tokens import context_tokens, estimate_tokens

CUT_ROLES = frozenset({"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"})
TURN_START_ROLES = frozenset({"user", "bashExecution"})


@define
class FileOps:
    """Files the summarised work read and changed, accumulated across compactions."""

    read: set[str] = field(factory=set)
    modified: set[str] = field(factory=set)

    def add_from(self, message) -> None:
        if not isinstance(message, AssistantMessage):
            return
        for block in message.content:
            if isinstance(block, ToolCall) and isinstance(block.arguments.get("path"), str):
                if block.name == "read":
                    self.read.add(block.arguments["path"])
                elif block.name in ("write", "edit"):
                    self.modified.add(block.arguments["path"])

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


def prepare_compaction(path: list, keep_recent_tokens: int, context: list | None = None) -> Preparation | None:
    """Plan a compaction of the branch ``path`` (root → leaf), or ``None`` when there is
    nothing to compact (the branch already ends in a compaction, or has no entries).
    ``context`` is the branch's current context, for ``tokens_before``."""
    if not path or isinstance(path[-1], CompactionEntry):
        return None
    previous = next((i for i in range(len(path) - 1, -1, -1) if isinstance(path[i], CompactionEntry)), -1)
    start, previous_summary = 0, None
    file_ops = FileOps()
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
            if message is not None:
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


def branch_messages(entries: list, token_budget: int = 0) -> tuple[list, FileOps]:
    """The messages of an abandoned branch worth summarising, newest first until the
    budget is spent (tool results left out), and the files it touched."""
    file_ops = FileOps()
    for entry in entries:
        if isinstance(entry, BranchSummaryEntry) and not entry.from_hook:
            file_ops.add_details(entry.details)
    chosen, total = [], 0
    for entry in reversed(entries):
        message = message_of(entry)
        if message is None or message.role == "toolResult":
            continue
        file_ops.add_from(message)
        tokens = estimate_tokens(message)
        if token_budget and total + tokens > token_budget:
            if isinstance(entry, (CompactionEntry, BranchSummaryEntry)) and total < token_budget * 0.9:
                chosen.append(message)
            break
        chosen.append(message)
        total += tokens
    chosen.reverse()
    return chosen, file_ops
