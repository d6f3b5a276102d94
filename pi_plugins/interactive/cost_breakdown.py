"""``/session``'s cost per model, as pi 1.6 gives it: assistant answers and ``usage``
entries grouped by ``provider/(responseModel or model)``, the usage of tool results,
compactions and branch summaries under ``Tools/summaries``; most expensive first, keys
with neither cost nor tokens left out. A router's or OpenRouter's ``auto`` so shows the
models that really answered, and the lines add up to the session's total."""

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
