"""Session stats (``Harness.stats()``, RPC's ``get_session_stats``) and the context's use
of the window. As pi 1.6 adds them up: every message entry of the file (all branches),
and the usage of assistant messages, tool results that report some, compaction and
branch summaries, and ``usage`` entries (pi 0.73.1 counted the context only).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from pi_core.protocol.entries import BranchSummaryEntry, CompactionEntry, MessageEntry, UsageEntry
from pi_core.protocol.messages import AssistantMessage, ToolResultMessage

if TYPE_CHECKING:
    from pi_core.app.harness import Harness


def usage_totals(entries: Iterable) -> dict[str, float]:
    """Tokens (``input``, ``output``, ``cacheRead``, ``cacheWrite``) and ``cost`` spent over ``entries``."""
    totals = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "cost": 0.0}
    for entry in entries:
        if isinstance(entry, MessageEntry):
            message = entry.message
            usage = (message.usage if isinstance(message, (AssistantMessage, ToolResultMessage))
                     else None)
        else:
            usage = (entry.usage if isinstance(entry, (UsageEntry, CompactionEntry,
                                                        BranchSummaryEntry)) else None)
        if usage is not None:
            totals["input"] += usage.input
            totals["output"] += usage.output
            totals["cacheRead"] += usage.cache_read
            totals["cacheWrite"] += usage.cache_write
            totals["cost"] += usage.cost.total
    return totals


def session_stats(harness: Harness) -> dict:
    """pi 1.6's ``get_session_stats``: message counts, tokens, cost, context use."""
    counts: dict[str | None, int] = {"user": 0, "assistant": 0, "toolResult": 0}
    tool_calls = total = 0
    entries = harness.session.entries
    for entry in entries:
        if isinstance(entry, MessageEntry):
            total += 1
            role = getattr(entry.message, "role", None)
            counts[role] = counts.get(role, 0) + 1
            if isinstance(entry.message, AssistantMessage):
                tool_calls += len(entry.message.tool_calls)
    spent = usage_totals(entries)
    tokens = {key: spent[key] for key in ("input", "output", "cacheRead", "cacheWrite")}
    tokens["total"] = sum(tokens.values())
    stats = {
        "sessionFile": str(harness.session.file) if harness.session.file else None,
        "sessionId": harness.session.id,
        "userMessages": counts["user"],
        "assistantMessages": counts["assistant"],
        "toolCalls": tool_calls,
        "toolResults": counts["toolResult"],
        "totalMessages": total,
        "tokens": tokens,
        "cost": spent["cost"],
    }
    usage = context_usage(harness)
    if usage is not None:
        stats["contextUsage"] = usage
    return stats


def context_usage(harness: Harness) -> dict | None:
    """Tokens in the context against the window (None without one); unknown after a
    compaction until a model has answered again, as pi reports it."""
    from pi_core.app.tokens import context_tokens, usage_tokens

    window = harness.model.context_window or 0
    if window <= 0:
        return None
    branch = harness.session.path()
    last_compaction = max((i for i, e in enumerate(branch) if isinstance(e, CompactionEntry)),
                          default=None)
    if last_compaction is not None:
        answered = False
        for entry in reversed(branch[last_compaction + 1:]):
            message = getattr(entry, "message", None)
            if isinstance(message, AssistantMessage) and message.stop_reason not in ("aborted", "error"):
                answered = usage_tokens(message.usage) > 0
                break
        if not answered:
            return {"tokens": None, "contextWindow": window, "percent": None}
    used = context_tokens(harness.agent.messages)
    return {"tokens": used, "contextWindow": window, "percent": 100 * used / window}
