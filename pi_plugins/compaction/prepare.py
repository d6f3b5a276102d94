"""Choosing what a branch summary covers when ``/tree`` leaves a branch (planning a
compaction is :mod:`pi_plugins.compaction.plan`)."""

from __future__ import annotations

from pi_core.app.tokens import estimate_tokens
from pi_core.protocol.entries import BranchSummaryEntry, CompactionEntry, message_of
from pi_plugins.compaction.plan import FileOps


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
