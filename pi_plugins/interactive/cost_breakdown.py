"""``/session``'s cost per model, as pi 1.6 gives it: assistant answers and ``usage``
entries grouped by ``provider/(responseModel or model)``, the usage of tool results,
compactions and branch summaries under ``Tools/summaries``; most expensive first, keys
with neither cost nor tokens left out. A router's or OpenRouter's ``auto`` so shows the
models that really answered, and the lines add up to the session's total. A virtual
model's answers name the physical model that answered, so each of those has its line.
Under them, ``Cache Re-billed``: what the session's cache misses cost (pi 1.6's
``computeCacheWaste``, counted as the chat's cache-miss notices count them)."""

from __future__ import annotations

from typing import Any

OTHER = "Tools/summaries"


def _attributed(entry: Any) -> tuple[str, Any] | None:
    kind = getattr(entry, "type", None)
    message: Any = getattr(entry, "message", None)
    role = getattr(message, "role", None)
    if kind == "message" and role == "assistant":
        model = message.extra.get("responseModel") or message.model
        return f"{message.provider}/{model}", message.usage
    if kind == "usage":
        return f"{entry.provider}/{entry.model}", entry.usage
    if kind == "message" and role == "toolResult" and getattr(message, "usage", None) is not None:
        return OTHER, message.usage
    if kind in ("branch_summary", "compaction") and getattr(entry, "usage", None) is not None:
        return OTHER, entry.usage
    return None


def cost_breakdown(entries: list) -> list[tuple[str, float, int]]:
    """(key, dollars, tokens) per key, most expensive first."""
    totals: dict[str, list[float]] = {}
    for entry in entries:
        found = _attributed(entry)
        if found is None:
            continue
        key, usage = found
        spent = totals.setdefault(key, [0.0, 0])
        spent[0] += usage.cost.total
        spent[1] += usage.input + usage.output + usage.cache_read + usage.cache_write
    rows = [(key, cost, int(tokens)) for key, (cost, tokens) in totals.items() if cost > 0 or tokens > 0]
    return sorted(rows, key=lambda row: -row[1])


def cost_lines(entries: list, selected: str) -> list[str]:
    """The lines under the Cost total: none when the one key is the selected model."""
    from pi_plugins.interactive.footer import format_tokens

    rows = cost_breakdown(entries)
    if not rows or (len(rows) == 1 and rows[0][0] == selected):
        return []
    return [f"  {key}: ${cost:.3f} ({format_tokens(tokens)} tokens)" for key, cost, tokens in rows]


def cache_waste(entries: list, models: Any) -> tuple[int, float, int]:
    """(missed tokens, their extra cost, misses) over every entry, as pi 1.6 scans: a
    compaction or branch summary starts afresh, a ``cache_warm`` refresh is the previous
    request."""
    from pi_plugins.interactive.cache_notices import Previous, _cache_read_price, _epoch_ms, detect_miss

    tokens, cost, count = 0, 0.0, 0
    previous: Previous | None = None
    for entry in entries:
        kind = getattr(entry, "type", None)
        message: Any = getattr(entry, "message", None)
        if kind in ("compaction", "branch_summary"):
            previous = None
        elif kind == "usage" and entry.kind == "cache_warm":
            prompt = entry.usage.input + entry.usage.cache_read + entry.usage.cache_write
            if prompt > 0:
                previous = Previous(prompt, f"{entry.provider}/{entry.model}", _epoch_ms(entry.timestamp), True)
        elif kind == "message" and getattr(message, "role", None) == "assistant":
            miss = detect_miss(previous, message, _cache_read_price(models, message))
            if miss is not None:
                tokens, cost, count = tokens + miss.missed_tokens, cost + miss.missed_cost, count + 1
            usage = message.usage
            prompt = usage.input + usage.cache_read + usage.cache_write
            if prompt > 0:
                reported = bool(previous and previous.reported_cache) or usage.cache_read + usage.cache_write > 0
                previous = Previous(prompt, f"{message.provider}/{message.model}", message.timestamp, reported)
    return tokens, cost, count


def rebilled_line(entries: list, models: Any) -> str | None:
    """``Cache Re-billed: $0.015 (5,000 tokens, 1 miss)``; the cost left out under $0.0001."""
    tokens, cost, count = cache_waste(entries, models)
    if tokens <= 0:
        return None
    detail = f"{tokens:,} tokens, {'1 miss' if count == 1 else f'{count} misses'}"
    return f"Cache Re-billed: ${cost:.3f} ({detail})" if cost >= 0.0001 else f"Cache Re-billed: {detail}"
