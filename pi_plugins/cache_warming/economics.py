"""The numbers of pi 1.6's prompt-cache warming: when a refresh is due, whether a request
may be repeated, and whether repeating it pays for itself. No timers here (the warmer
owns those), so each rule is a plain function a test can call.
"""

from __future__ import annotations

import os
from typing import Any, Literal

from pi_core import Model, Usage, calculate_cost
from pi_core.protocol.records import record

Phase = Literal["streaming", "idle"]
Action = Literal["warm", "stop"]

#: While a run streams, warming never goes on past an hour after the request it repeats;
#: while idle, past 30 minutes (pi's guesses of a reply in time grow worse with age).
MAX_STREAMING_AGE_MS = 60 * 60_000
MAX_IDLE_AGE_MS = 30 * 60_000
#: A refresh is sent only when it is expected to save at least this many dollars.
MINIMUM_EXPECTED_SAVINGS = 0.05
#: pi 1.6's measured chance that a real request arrives before an idle cache expires.
IDLE_CONTINUATION_PROBABILITY = 0.15


@record
class Decision:
    """What a refresh would cost and save, and pi's verdict (``action``)."""

    phase: Phase
    warm_cost: float
    miss_cost: float
    continuation_probability: float
    expected_savings: float
    economics_available: bool
    action: Action


def warm_delay_ms(ttl_ms: int) -> int | None:
    """When to refresh a cache entry that lives ``ttl_ms``: at 90% of its life, and at
    least ten seconds before it ends; None for a life of ten seconds or less."""
    if ttl_ms <= 10_000:
        return None
    return max(1, int(min(ttl_ms * 0.9, ttl_ms - 10_000)))


def cache_retention(options: Any) -> str:
    """``short``, ``long`` or ``none``: ``PI_CACHE_RETENTION`` as the provider reads it
    (a stored key's own variables first, then the process's)."""
    env = getattr(options, "env", None) or {}
    value = env.get("PI_CACHE_RETENTION") or os.environ.get("PI_CACHE_RETENTION")
    return value if value in ("long", "none") else "short"


def cache_ttl_ms(model: Model, options: Any) -> int | None:
    """How long the cache entry the request wrote lives (None: caching off, or the
    model declares no lifetime for that tier, pi 1.6's ``promptCache``)."""
    retention = cache_retention(options)
    if retention == "none":
        return None
    seconds = (model.prompt_cache or {}).get(retention)
    return int(seconds * 1000) if seconds else None


def replayable(model: Model, options: Any) -> bool:
    """Whether a one-token repeat keeps the cache entry: Anthropic's budget-based thinking
    derives its budget from the output cap, which the cache is keyed on, so a thinking
    request there repeats safely only with adaptive thinking."""
    thinking = model.reasoning and getattr(options, "thinking_level", "off") not in (None, "off")
    if not thinking or model.api != "anthropic-messages":  # (a model without reasoning is sent none)
        return True
    return (model.compat or {}).get("forceAdaptiveThinking") is True


def _price(model: Model, input: int = 0, output: int = 0, cache_read: int = 0, cache_write: int = 0) -> float:
    usage = Usage(input=input, output=output, cache_read=cache_read, cache_write=cache_write)
    return calculate_cost(model, usage).cost.total


def evaluate(model: Model, prompt_tokens: int, phase: Phase) -> Decision:
    """Whether refreshing the cache entry of a ``prompt_tokens``-token request pays:
    the expected saving (the chance of a next request in time, times what a miss would
    add) less the refresh's own price, against :data:`MINIMUM_EXPECTED_SAVINGS`."""
    hit = _price(model, cache_read=prompt_tokens)
    miss = _price(model, cache_write=prompt_tokens) if model.cost.cache_write > 0 else _price(model, input=prompt_tokens)
    warm = _price(model, cache_read=prompt_tokens, output=1)
    miss_cost = max(0.0, miss - hit)
    probability = IDLE_CONTINUATION_PROBABILITY if phase == "idle" else 1.0
    savings = probability * miss_cost - warm
    return Decision(phase, warm, miss_cost, probability, savings, prompt_tokens > 0 and (hit > 0 or miss > 0),
                    "warm" if savings >= MINIMUM_EXPECTED_SAVINGS else "stop")


def last_prompt_tokens(entries: list) -> int:
    """The prompt of the branch's latest answer, as its provider counted it."""
    for entry in reversed(entries):
        message: Any = getattr(entry, "message", None)
        if getattr(entry, "type", None) == "message" and getattr(message, "role", None) == "assistant":
            usage = message.usage
            return usage.input + usage.cache_read + usage.cache_write
    return 0
