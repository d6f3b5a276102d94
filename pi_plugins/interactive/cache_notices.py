"""pi 1.6's cache-miss notices (``showCacheMissNotices``): after an answer whose prompt
re-billed, at the full rate, tokens the previous request had in the provider's cache, a
warning line such as ``Cache miss after model switch: 48k tokens re-billed (~$0.13)``.

Counted as pi counts: from the previous request's prompt (a compaction or branch summary
starts afresh), ignoring misses of 1,024 tokens or fewer and providers that never
reported caching; shown from 20k tokens or $0.10 up.
"""

from __future__ import annotations

from typing import Any

from attrs import define

from pi_plugins.interactive.footer import format_tokens

CACHE_TTL_MS = 5 * 60 * 1000  # Anthropic's default cache lifetime: a longer gap explains a miss
NOISE_FLOOR_TOKENS = 1024
SHOWN_FROM_TOKENS, SHOWN_FROM_DOLLARS = 20_000, 0.10


@define
class Previous:
    prompt_tokens: int
    model_key: str
    timestamp: int
    reported_cache: bool


@define
class Miss:
    missed_tokens: int
    missed_cost: float
    idle_ms: int
    model_changed: bool


def _prompt_tokens(usage: Any) -> int:
    return usage.input + usage.cache_read + usage.cache_write


def previous_request(entries: list, stop_at: Any = None) -> Previous | None:
    """The last request before ``stop_at`` (the message just answered), as pi scans."""
    previous: Previous | None = None
    for entry in entries:
        kind = getattr(entry, "type", None)
        if kind in ("compaction", "branch_summary"):
            previous = None  # the context changed on purpose: new content, not re-billed
            continue
        message: Any = getattr(entry, "message", None)
        if kind != "message" or getattr(message, "role", None) != "assistant":
            continue
        if message is stop_at:
            break
        usage = message.usage
        if _prompt_tokens(usage) > 0:
            reported = bool(previous and previous.reported_cache) or usage.cache_read + usage.cache_write > 0
            previous = Previous(_prompt_tokens(usage), f"{message.provider}/{message.model}",
                                message.timestamp, reported)
    return previous


def detect_miss(previous: Previous | None, message: Any, cache_read_price: float = 0.0) -> Miss | None:
    """The miss ``message`` paid for (None when nothing counts); ``cache_read_price`` is
    the model's $ per million cache-read tokens, for an answer that read nothing."""
    usage = message.usage
    prompt = _prompt_tokens(usage)
    if previous is None or prompt <= 0 or (usage.cache_read + usage.cache_write == 0
                                           and not previous.reported_cache):
        return None
    missed = min(previous.prompt_tokens, prompt) - usage.cache_read
    if missed <= NOISE_FLOOR_TOKENS:
        return None
    paid = usage.input + usage.cache_write
    paid_rate = (usage.cost.input + usage.cost.cache_write) / paid if paid > 0 else 0.0
    read_rate = usage.cost.cache_read / usage.cache_read if usage.cache_read > 0 else cache_read_price / 1e6
    return Miss(missed, missed * max(0.0, paid_rate - read_rate), max(0, message.timestamp - previous.timestamp),
                f"{message.provider}/{message.model}" != previous.model_key)


def notice(miss: Miss) -> str | None:
    """The line pi shows, or None for a miss too small to mention."""
    if miss.missed_tokens < SHOWN_FROM_TOKENS and miss.missed_cost < SHOWN_FROM_DOLLARS:
        return None
    cost = f" (~${miss.missed_cost:.2f})" if miss.missed_cost >= 0.01 else ""
    if miss.model_changed:
        label = "Cache miss after model switch"
    elif miss.idle_ms >= CACHE_TTL_MS:
        label = f"Cache miss after {round(miss.idle_ms / 60_000)}m idle"
    else:
        label = "Cache miss"
    return f"{label}: {format_tokens(miss.missed_tokens)} tokens re-billed{cost}"


def cache_miss_notice(harness: Any, message: Any) -> str | None:
    """The notice for an answer just finished, when ``showCacheMissNotices`` is on."""
    if not harness.ctx.settings.get("showCacheMissNotices", False):
        return None
    if message.stop_reason in ("aborted", "error"):
        return None
    model = harness.model
    price = model.cost.cache_read if model.provider == message.provider and model.id == message.model else 0.0
    miss = detect_miss(previous_request(harness.session.entries, message), message, price)
    return notice(miss) if miss is not None else None


# ------------------------------------------------ what summaries and cache warming cost (pi 1.6)

def shown(harness: Any) -> bool:
    return harness.ctx.settings.get("showCacheMissNotices", False) is True


def summary_cost_notice(kind: str, usage: Any) -> str:
    """``Compaction: 12k tokens billed (~$0.03)`` (``Branch summary: …``): what a summary's
    own requests cost, as 1.6 shows it under the summary; the price from a cent up."""
    tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
    cost = f" (~${usage.cost.total:.2f})" if usage.cost.total >= 0.01 else ""
    label = "Compaction" if kind == "compaction" else "Branch summary"
    return f"{label}: {format_tokens(tokens)} tokens billed{cost}"


def cache_warming_notice(total_cost: float, note: str | None) -> str:
    """``Cache warmed (note): $0.0123``: a refresh that kept the provider's cache warm, the
    cost to at least three decimals with trailing zeros dropped past them (1.6's format)."""
    cost = f"{total_cost:.6f}"
    whole, _, decimals = cost.partition(".")
    decimals = decimals[:3] + decimals[3:].rstrip("0")
    return f"Cache warmed{f' ({note})' if note else ''}: ${whole}.{decimals}"


def summary_usages(entries: Any) -> dict[tuple[str, str], Any]:
    """(kind, summary text) -> the usage its compaction or branch summary entry recorded."""
    found: dict[tuple[str, str], Any] = {}
    for entry in entries:
        if entry.type in ("compaction", "branch_summary") and getattr(entry, "usage", None) is not None:
            found[(entry.type, entry.summary)] = entry.usage
    return found


def with_summary_notices(blocks: list, harness: Any) -> list:
    """The chat's blocks with each summary's cost notice after it, where its entry
    recorded one and ``showCacheMissNotices`` is on (1.6 derives them from the entries)."""
    if not shown(harness):
        return blocks
    from pi_plugins.interactive.blocks import SummaryBlock, TextBlock

    usages = summary_usages(harness.session.entries)
    out = []
    for block in blocks:
        out.append(block)
        if isinstance(block, SummaryBlock):
            kind = "compaction" if block.label == "[compaction]" else "branch_summary"
            usage = usages.get((kind, block.summary))
            if usage is not None:
                out.append(TextBlock(summary_cost_notice(kind, usage), "warning"))
    return out
