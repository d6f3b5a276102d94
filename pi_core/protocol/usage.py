"""Usage summed over a run: what a subagent or a batch task reports for all its turns."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pi_core.protocol.messages import AssistantMessage, Cost, Usage


def total_usage(messages: Iterable[object]) -> Usage:
    """The usage of every assistant message in ``messages``, added up field by field;
    ``"estimated": true`` beside the counts when any of them was an estimate (a server
    that reports no usage)."""
    total = Usage(cost=Cost())
    for message in messages:
        if not isinstance(message, AssistantMessage):
            continue
        usage = message.usage
        for name in ("input", "output", "cache_read", "cache_write", "total_tokens"):
            setattr(total, name, getattr(total, name) + getattr(usage, name))
        for name in ("input", "output", "cache_read", "cache_write", "total"):
            setattr(total.cost, name, getattr(total.cost, name) + getattr(usage.cost, name))
        if usage.reasoning is not None:  # a total of reasoning only where some answer split it out
            total.reasoning = (total.reasoning or 0) + usage.reasoning
        if usage._extra and usage._extra.get("estimated"):
            total.extra["estimated"] = True
    return total


def final_assistant(messages: Sequence[object]) -> AssistantMessage | None:
    """The last assistant message: whose text is the answer of a run."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage):
            return message
    return None
