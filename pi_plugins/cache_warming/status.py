"""What ``/session`` says of cache warming, in pi 1.6's words: ``Decision in 4m 30s (15%
continuation probability, expected savings $0.087 >= $0.050 -> warm)``, ``Stopped (…)``,
``Inactive (reason)``; and the two prices behind the decision."""

from __future__ import annotations

import math
import time
from typing import Any

from pi_plugins.cache_warming.economics import MINIMUM_EXPECTED_SAVINGS, Decision


def _dollars(value: float) -> str:
    return f"-${abs(value):.3f}" if value < 0 else f"${value:.3f}"


def _economics(decision: Decision) -> str:
    if not decision.economics_available:
        return "cache economics unavailable"
    probability = f"{round(decision.continuation_probability * 100)}% continuation probability"
    if decision.phase == "streaming":
        probability += " while agent is running"
    comparison = ">=" if decision.action == "warm" else "<"
    return (f"{probability}, expected savings {_dollars(decision.expected_savings)} {comparison} "
            f"${MINIMUM_EXPECTED_SAVINGS:.3f}")


def _when(next_warm_at: float | None, now: float) -> str:
    if next_warm_at is None or next_warm_at <= now:
        return "Decision now"
    seconds = math.ceil((next_warm_at - now) / 1000)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    parts = [f"{hours}h"] * bool(hours) + [f"{minutes}m"] * bool(minutes)
    if seconds or not parts:
        parts.append(f"{seconds}s")
    return f"Decision in {' '.join(parts)}"


def status_line(warmer: Any) -> str:
    """The ``Status:`` line for ``warmer`` (None: no warmer, as without the plugin)."""
    if warmer is None:
        return "Inactive (cache warming unavailable)"
    state, reason, decision, override, next_at = warmer.status()
    if decision is None or (state == "inactive" and not decision.economics_available and not override):
        return f"Inactive ({reason or 'unknown reason'})"
    details = (f"extension override, {_economics(decision)}" if override
               else f"{_economics(decision)} -> {decision.action}")
    if state == "inactive":
        return f"Stopped ({details})"
    if state == "refreshing":
        return f"Warming cache ({details})"
    return f"{_when(next_at, time.monotonic() * 1000)} ({details})"


def session_lines(ctx: Any) -> list[str]:
    """pi 1.6's ``Cache Warming`` part of ``/session``: the mode, the status and, where the
    economics are known, the miss penalty and the refresh's cost."""
    from pi_plugins.cache_warming import _WARMERS, warming_mode

    warmer = _WARMERS.get(ctx)
    lines = [f"Mode: {warming_mode(ctx.settings)}", f"Status: {status_line(warmer)}"]
    decision = warmer.status()[2] if warmer is not None else None
    if decision is not None and decision.economics_available:
        lines += [f"Cache miss penalty: ${decision.miss_cost:.3f}", f"Refresh cost: ${decision.warm_cost:.3f}"]
    return lines
