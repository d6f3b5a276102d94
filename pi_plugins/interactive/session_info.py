"""``/session``: pi 1.6's Session Info screen, its layout and words."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_plugins.interactive.port import ChatPort


async def session(tui: ChatPort, args: str) -> None:
    """pi 1.6's ``Session Info``: name, file and id; messages; tokens (the prompt split
    into cached and uncached when a cache was used); cache warming; the cost, per model
    when more than the selected one spent."""
    stats = tui.harness.stats()
    tokens = stats["tokens"]
    name = tui.harness.session.name
    lines = ["Session Info", "", *([f"Name: {name}"] if name else []),
             f"File: {stats['sessionFile'] or 'In-memory'}", f"ID: {stats['sessionId']}", "",
             "Messages", f"Total: {stats['totalMessages']}", f"User: {stats['userMessages']}",
             f"Assistant: {stats['assistantMessages']}",
             f"Tools: {stats['toolCalls']} calls, {stats['toolResults']} results", "", "Tokens"]
    uncached, read, written = tokens["input"], tokens["cacheRead"], tokens["cacheWrite"]
    prompt = uncached + read + written
    lines.append(f"Input: {prompt:,}")
    if prompt > 0 and (read > 0 or written > 0):
        lines.append(f"  Cached: {read:,} ({read / prompt * 100:.1f}%)")
        lines.append(f"  Uncached: {uncached + written:,}" + (f" ({written:,} written to cache)" if written else ""))
    lines += [f"Output: {tokens['output']:,}", f"Total: {tokens['total']:,}"]
    from pi_plugins.cache_warming.status import session_lines  # (without the plugin: "unavailable")

    lines += ["", "Cache Warming", *session_lines(tui.harness.ctx)]
    from pi_plugins.interactive.cost_breakdown import cost_lines, rebilled_line

    entries = tui.harness.session.entries
    rebilled = rebilled_line(entries, getattr(tui.harness, "model_registry", None))
    if stats["cost"] > 0 or rebilled is not None:
        model = tui.harness.model
        lines += ["", "Cost", f"Total: ${stats['cost']:.3f}",
                  *cost_lines(entries, f"{model.provider}/{model.id}" if model else ""),
                  *([rebilled] if rebilled is not None else [])]
    tui.add_text("\n".join(lines), "none")
