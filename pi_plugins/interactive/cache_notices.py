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

from pi_plugins.interactive.blocks import TextBlock
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


# ------------------------------------------------ cache warming and dropped reasoning (pi 1.6)

class CacheWarmedBlock(TextBlock):
    """``Cache warmed (note): $0.0123``, dim: the refreshes since the last thing said in
    the chat, their costs added up. Live (not printed into the scrollback) while it may
    still grow; whatever comes into the chat next finishes it."""

    def __init__(self, total: float, note: str | None) -> None:
        super().__init__(cache_warming_notice(total, note), "dim")
        self.total, self.note, self.final = total, note, False

    def add(self, cost: float) -> None:
        self.total += cost
        self.text = cache_warming_notice(self.total, self.note)
        self.changed()


def add_cache_warming_notice(tui: Any, entry: Any) -> None:
    """A refresh written (``entry_appended`` of a ``cache_warm`` usage entry): a new line,
    or the cost added to the line just above when nothing came in between and the note
    is the same, as 1.6 collapses back-to-back warms."""
    if not shown(tui.harness):
        return
    last = tui.transcript.blocks[-1] if tui.transcript.blocks else None
    if isinstance(last, CacheWarmedBlock) and not last.final and last.note == entry.note:
        last.add(entry.usage.cost.total)
        tui.changed()
        return
    settle_cache_warming_notice(tui)
    tui.add(CacheWarmedBlock(entry.usage.cost.total, entry.note))


def settle_cache_warming_notice(tui: Any) -> None:
    """Something else comes into the chat: a growing ``Cache warmed`` line is finished."""
    for block in tui.transcript.live:
        if isinstance(block, CacheWarmedBlock) and not block.final:
            block.final = True
            block.changed()


#: pi 1.6's diagnostics of reasoning a provider withheld from the model: the diagnostic's
#: type → (provider, the dropped transformation's type, singular and plural noun)
DROPPED_REASONING = {
    "anthropic_input_transformations": ("Anthropic", "thinking_dropped", ("thinking block", "thinking blocks")),
    "openai_input_transformations": ("OpenAI", "reasoning", ("reasoning item", "reasoning items")),
}


def dropped_reasoning(message: Any) -> tuple[str, int, list[str]] | None:
    """(diagnostic type, how many blocks, the reasons given) the provider reported it
    withheld from the request that produced ``message`` (its ``diagnostics``), or None."""
    extra = getattr(message, "_extra", None) or {}
    for diagnostic in extra.get("diagnostics") or []:
        kind = DROPPED_REASONING.get(str(diagnostic.get("type"))) if isinstance(diagnostic, dict) else None
        details = diagnostic.get("details") if kind else None
        changes = details.get("transformations") if isinstance(details, dict) else None
        if kind is None or not isinstance(changes, list):
            continue
        dropped = [c for c in changes if isinstance(c, dict) and c.get("type") == kind[1]]
        if dropped:
            reasons = list(dict.fromkeys(c["reason"] for c in dropped if isinstance(c.get("reason"), str)))
            return diagnostic["type"], len(dropped), reasons
    return None


def dropped_reasoning_notice(harness: Any, message: Any) -> str | None:
    """``Anthropic dropped 2 thinking blocks: reason (details in session)`` after an answer
    whose provider withheld reasoning, under ``showCacheMissNotices``; only when more were
    dropped than for the answer before (a provider reports a withheld block on every
    later request that replays it)."""
    if not shown(harness):
        return None
    found = dropped_reasoning(message)
    if found is None:
        return None
    for entry in reversed(harness.session.path()):
        earlier: Any = getattr(entry, "message", None)
        if entry.type == "message" and getattr(earlier, "role", None) == "assistant" and earlier is not message:
            previous = dropped_reasoning(earlier)
            if previous is not None and previous[0] == found[0] and found[1] <= previous[1]:
                return None
            break
    provider, _, nouns = DROPPED_REASONING[found[0]]
    reasons = f": {', '.join(found[2])}" if found[2] else ""
    return f"{provider} dropped {found[1]} {nouns[found[1] != 1]}{reasons} (details in session)"


# ------------------------------------------------ the notices again when the chat is rebuilt

def with_cache_notices(blocks: list, harness: Any) -> list:
    """The rebuilt chat's blocks with pi 1.6's derived notices: after each answer that paid
    for a cache miss, its notice (misses are not saved; they are counted again from the
    branch), and each run of refreshes (``cache_warm`` usage entries) after the answer
    it followed, collapsed into one line; only under ``showCacheMissNotices``."""
    if not shown(harness):
        return blocks
    from pi_plugins.interactive.blocks import AssistantBlock

    models = getattr(harness, "model_registry", None)
    after: dict[int, list[TextBlock]] = {}  # id(answer) → the notices under it
    previous: Previous | None = None
    answer: Any = None
    last_warm: CacheWarmedBlock | None = None  # the run of refreshes still growing
    for entry in harness.session.path():
        kind = entry.type
        if kind in ("compaction", "branch_summary"):
            previous, last_warm = None, None
        elif kind == "usage" and entry.kind == "cache_warm":
            prompt = _prompt_tokens(entry.usage)
            if prompt > 0:
                previous = Previous(prompt, f"{entry.provider}/{entry.model}", _epoch_ms(entry.timestamp), True)
            if last_warm is not None and last_warm.note == entry.note:
                last_warm.total += entry.usage.cost.total
                last_warm.text = cache_warming_notice(last_warm.total, last_warm.note)
            else:
                last_warm = CacheWarmedBlock(entry.usage.cost.total, entry.note)
                last_warm.final = True
                after.setdefault(id(answer), []).append(last_warm)
        elif kind == "message":
            last_warm = None
            message = entry.message
            if message.role != "assistant":
                continue
            miss = None
            if message.stop_reason not in ("aborted", "error"):
                miss = detect_miss(previous, message, _cache_read_price(models, message))
            line = notice(miss) if miss is not None else None
            if line is not None:
                after.setdefault(id(message), []).append(TextBlock(line, "warning"))
            usage = message.usage
            if _prompt_tokens(usage) > 0:
                reported = bool(previous and previous.reported_cache) or usage.cache_read + usage.cache_write > 0
                previous = Previous(_prompt_tokens(usage), f"{message.provider}/{message.model}",
                                    message.timestamp, reported)
            answer = message
    out: list = []
    for block in blocks:
        out.append(block)
        if isinstance(block, AssistantBlock):
            out.extend(after.get(id(block.message), []))
    return out


def _cache_read_price(models: Any, message: Any) -> float:
    find = getattr(models, "find", None)
    model = find(message.provider, message.model) if find is not None else None
    return model.cost.cache_read if model is not None else 0.0


def _epoch_ms(timestamp: str) -> int:
    from datetime import datetime

    try:
        return int(datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return 0
