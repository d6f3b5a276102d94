"""How many output tokens to ask for: pi 1.6 asks for the model's whole output limit (or
the caller's), fitted into what the context window has left after the input. The input is
estimated as pi 1.6 does (the last answer's reported usage plus 3.5 characters a token for
what came after it; before any answer, the system prompt and the tools' declaration too),
so a margin is kept: 15%
of the input, at least 4096 tokens, and where that leaves under 32768 tokens only the 4096
are kept and at most 32768 are asked for (OpenRouter counts input higher than providers)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from pi_core.protocol.messages import ImageContent, TextContent, ThinkingContent, ToolCall
from pi_core.protocol.model import Model
from pi_core.protocol.provider import LlmContext

CHARS_PER_TOKEN = 3.5
IMAGE_CHARS = 4800
SAFETY_TOKENS = 4096
SAFETY_RATIO = 0.15
MIN_OUTPUT_WITH_RATIO_MARGIN = 32768


def _content_chars(content: Any) -> int:
    if isinstance(content, str):
        return len(content)
    return sum(len(b.text) if isinstance(b, TextContent) else IMAGE_CHARS if isinstance(b, ImageContent) else 0
               for b in content or ())


def _message_tokens(message: Any) -> int:
    role = getattr(message, "role", "")
    if role == "assistant":
        chars = 0
        for block in message.content:
            if isinstance(block, TextContent):
                chars += len(block.text)
            elif isinstance(block, ThinkingContent):
                chars += len(block.thinking)
            elif isinstance(block, ToolCall):
                chars += len(block.name) + len(json.dumps(block.arguments, separators=(",", ":"),
                                                          ensure_ascii=False))
        return math.ceil(chars / CHARS_PER_TOKEN)
    return math.ceil(_content_chars(getattr(message, "content", "")) / CHARS_PER_TOKEN)


def _usage_total(usage: Any) -> int:
    return usage.total_tokens or usage.input + usage.output + usage.cache_read + usage.cache_write


def _declaration_tokens(system_prompt: str, tools: Sequence) -> int:
    """pi 1.6 keeps the system prompt and the tools' declaration in a system message at the
    start of the transcript, so they count until an answer's usage covers them."""
    tokens = math.ceil(len(system_prompt or "") / CHARS_PER_TOKEN)
    if tools:
        declared = [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in tools]
        tokens += math.ceil(len(json.dumps(declared, separators=(",", ":"), ensure_ascii=False)) / CHARS_PER_TOKEN)
    return tokens


def estimate_input_tokens(messages: list, system_prompt: str = "", tools: Sequence = ()) -> int:
    """The last usable reported usage (an answer that neither failed nor was stopped, not
    older than a message placed before it) plus an estimate of every message after it;
    before any, every message, the system prompt and the tools' declaration."""
    last, latest_prefix = None, -math.inf
    for index, message in enumerate(messages):
        usage = getattr(message, "usage", None)
        if (getattr(message, "role", "") == "assistant" and usage is not None
                and getattr(message, "timestamp", 0) >= latest_prefix
                and message.stop_reason not in ("aborted", "error") and _usage_total(usage) > 0):
            last = index
        latest_prefix = max(latest_prefix, getattr(message, "timestamp", 0) or 0)
    if last is None:
        return _declaration_tokens(system_prompt, tools) + sum(_message_tokens(m) for m in messages)
    return _usage_total(messages[last].usage) + sum(_message_tokens(m) for m in messages[last + 1:])


def fit_to_context(model: Model, context: LlmContext, wanted: int) -> int:
    """``wanted`` output tokens, fewer where the context window has not room for them."""
    if model.context_window <= 0:
        return max(1, wanted)
    used = estimate_input_tokens(context.messages, context.system_prompt, context.tools)
    # ours, not pi 1.6's: a window under 16384 tokens (a small local model) keeps a quarter of
    # itself spare, not 4096 tokens, which would leave a 4096-token window nothing to answer in
    fixed = min(SAFETY_TOKENS, model.context_window // 4)
    room = model.context_window - used - max(fixed, math.ceil(used * SAFETY_RATIO))
    if room < MIN_OUTPUT_WITH_RATIO_MARGIN:
        room = min(MIN_OUTPUT_WITH_RATIO_MARGIN, model.context_window - used - fixed)
    return min(wanted, max(1, room))
