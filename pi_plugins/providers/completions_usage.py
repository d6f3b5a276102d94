"""What a chat-completions answer cost and why it ended: the ``usage`` object read as pi
reads it (cached and written prompt tokens apart, OpenRouter's own bill where complete),
an estimate for a server that reports none, and ``finish_reason`` mapped to pi's stop
reasons."""

from __future__ import annotations

import json
from typing import Any

from pi_core.app.tokens import estimate_text_tokens, estimate_tokens
from pi_core.protocol.messages import Usage
from pi_core.protocol.model import Model, calculate_cost


def parse_usage(raw: dict, model: Model) -> Usage:
    prompt = raw.get("prompt_tokens") or 0
    details = raw.get("prompt_tokens_details") or {}
    cached = details.get("cached_tokens")
    if cached is None:
        cached = raw.get("prompt_cache_hit_tokens") or 0
    written = details.get("cache_write_tokens") or 0
    cache_read = max(0, cached - written) if written > 0 else cached
    input_tokens = max(0, prompt - cache_read - written)
    output = raw.get("completion_tokens") or 0
    reasoning = (raw.get("completion_tokens_details") or {}).get("reasoning_tokens") or raw.get("reasoning_tokens") or 0
    usage = Usage(input=input_tokens, output=output, cache_read=cache_read, cache_write=written,
                  reasoning=reasoning, total_tokens=input_tokens + output + cache_read + written)
    calculate_cost(model, usage)
    if model.provider == "openrouter" or "openrouter.ai" in (model.base_url or ""):
        billed_by_openrouter(usage, raw)
    return usage


def billed_by_openrouter(usage: Usage, raw: dict) -> None:
    """OpenRouter's own bill for the answer, in place of the catalogue's prices, where its
    accounting is complete (pi 1.6's rule): ``cost``, plus the upstream provider's cost
    for a request on the user's own key (``is_byok``)."""
    def valid(value: Any) -> bool:
        return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < float("inf")

    cost = raw.get("cost")
    if not valid(cost):
        return
    total = None
    if raw.get("is_byok") is False:
        total = cost
    elif raw.get("is_byok") is True and isinstance(raw.get("cost_details"), dict):
        details = raw["cost_details"]
        upstream = details.get("upstream_inference_cost")
        if upstream is None:
            prompt, completion = (details.get("upstream_inference_prompt_cost"),
                                  details.get("upstream_inference_completions_cost"))
            upstream = prompt + completion if valid(prompt) and valid(completion) else None
        total = cost + upstream if valid(upstream) else None
    if total is not None:
        usage.cost.total = total
        usage.cost.extra["totalFromProvider"] = True


def map_finish_reason(reason: str | None) -> tuple[str, str | None]:
    if reason in (None, "stop", "end"):
        return "stop", None
    if reason == "length":
        return "length", None
    if reason in ("function_call", "tool_calls"):
        return "toolUse", None
    return "error", f"Provider finish_reason: {reason}"


def estimate_usage(system_prompt: str, messages: list, tools: list, answer: Any) -> Usage:
    """Usage for a server that reports none (llama-cpp-python ignores
    ``stream_options.include_usage``): the request (system prompt, messages, tool
    schemas) as input, ``answer`` (an assistant message) as output, marked estimated so
    stats can say so; compaction then sees the context fill up as it does with a
    server that counts."""
    tool_text = "".join(getattr(t, "name", "") + getattr(t, "description", "")
                        + json.dumps(getattr(t, "parameters", None) or {}, ensure_ascii=False)
                        for t in tools or ())
    prompt = (estimate_text_tokens(system_prompt or "") + estimate_text_tokens(tool_text)
              + sum(estimate_tokens(m) for m in messages))
    output = estimate_tokens(answer)
    usage = Usage(input=prompt, output=output, total_tokens=prompt + output)
    usage.extra["estimated"] = True
    return usage
