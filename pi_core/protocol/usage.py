"""Usage summed over a run: what a subagent or a batch task reports for all its turns."""

from __future__ import annotations

from typing import Iterable

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
        total.input += usage.input
        total.output += usage.output
        total.cache_read += usage.cache_read
        total.cache_write += usage.cache_write
        total.total_tokens += usage.total_tokens
        cost = usage.cost
        total.cost.input += cost.input
        total.cost.output += cost.output
        total.cost.cache_read += cost.cache_read
        total.cost.cache_write += cost.cache_write
        total.cost.total += cost.total
        if usage._extra and usage._extra.get("estimated"):
            total.extra["estimated"] = True
    return total


def final_assistant(messages: list[object]) -> AssistantMessage | None:
    """The last assistant message: whose text is the answer of a run."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage):
            return message
    return None
