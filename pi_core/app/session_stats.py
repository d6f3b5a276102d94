"""Session stats and context use, what ``AgentSession.stats()`` and ``context_usage()``
give the modes (RPC's ``get_session_stats``): counts, tokens and cost of what the model
sees now, and its share of the window."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_core.protocol.messages import AssistantMessage

if TYPE_CHECKING:
    from pi_core.app.agent_session import AgentSession


def session_stats(harness: "AgentSession") -> dict:
    """Message counts, token totals and cost of the current context (what the model
    sees: after a compaction, only what came after it), and the context's use of the
    window; pi's ``get_session_stats`` shape."""
    counts = {"user": 0, "assistant": 0, "toolResult": 0}
    tokens = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    tool_calls, cost = 0, 0.0
    for message in harness.agent.messages:
        role = getattr(message, "role", None)
        counts[role] = counts.get(role, 0) + 1
        if isinstance(message, AssistantMessage):
            tool_calls += len(message.tool_calls)
            usage = message.usage
            tokens["input"] += usage.input
            tokens["output"] += usage.output
            tokens["cacheRead"] += usage.cache_read
            tokens["cacheWrite"] += usage.cache_write
            cost += usage.cost.total
    tokens["total"] = tokens["input"] + tokens["output"] + tokens["cacheRead"] + tokens["cacheWrite"]
    stats = {
        "sessionFile": str(harness.session.file) if harness.session.file else None,
        "sessionId": harness.session.id,
        "userMessages": counts["user"],
        "assistantMessages": counts["assistant"],
        "toolCalls": tool_calls,
        "toolResults": counts["toolResult"],
        "totalMessages": len(harness.agent.messages),
        "tokens": tokens,
        "cost": cost,
    }
    usage = context_usage(harness)
    if usage is not None:
        stats["contextUsage"] = usage
    return stats

def context_usage(harness: "AgentSession") -> dict | None:
    """Tokens in the context against the window (None without a window). Right after
    a compaction the count is unknown (null) until a model has answered again, as pi
    reports it."""
    from pi_core.protocol.entries import CompactionEntry
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
