"""Token counts: what the provider reported for the last answer, plus an estimate of
what came after it. The estimate is tiktoken's where its encoding is already on this
machine (it would download it otherwise, never allowed at run time), else pi's chars / 4.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_core.protocol.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)

IMAGE_CHARS = 4800  # an image counts as about 1,200 tokens
ENCODING = "cl100k_base"
_ENCODING_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


def _tiktoken_cache_file() -> Path:
    import hashlib

    folder = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    if not folder:
        import tempfile  # (with shutil, random, bz2 and lzma: 3 ms at import)

        folder = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    return Path(folder) / hashlib.sha1(_ENCODING_URL.encode()).hexdigest()


@functools.lru_cache(maxsize=1)
def _counter() -> tuple[str, Callable[[str], int]]:
    """tiktoken's count when its encoding file is cached locally, else chars / 4."""
    if _tiktoken_cache_file().is_file():
        try:
            import tiktoken

            encoding = tiktoken.get_encoding(ENCODING)
            return "tiktoken", lambda text: len(encoding.encode_ordinary(text))
        except Exception:
            pass
    return "chars/4", lambda text: -(-len(text) // 4)


def estimate_method() -> str:
    """Which estimate is in use: ``tiktoken`` or ``chars/4``."""
    return _counter()[0]


def _content_chars(content: Any) -> tuple[str, int]:
    if isinstance(content, str):
        return content, 0
    text, extra = [], 0
    for block in content or ():
        if isinstance(block, TextContent):
            text.append(block.text)
        elif isinstance(block, ImageContent):
            extra += IMAGE_CHARS
    return "".join(text), extra


def _text_of(message: Any) -> tuple[str, int] | None:
    """The text a message's estimate counts and its images' chars (``None``: nothing)."""
    role = getattr(message, "role", "")
    extra = 0
    if role in ("user", "custom", "toolResult"):
        text, extra = _content_chars(message.content)
    elif role == "assistant":
        parts = []
        for block in message.content:
            if isinstance(block, TextContent):
                parts.append(block.text)
            elif isinstance(block, ThinkingContent):
                parts.append(block.thinking)
            elif isinstance(block, ToolCall):
                parts.append(block.name + json.dumps(block.arguments, ensure_ascii=False))
        text = "".join(parts)
    elif role == "bashExecution":
        text = message.command + message.output
    elif role in ("branchSummary", "compactionSummary"):
        text = message.summary
    else:
        return None
    return text, extra


def estimate_tokens(message: Any) -> int:
    """A conservative token estimate for one agent message."""
    found = _text_of(message)
    if found is None:
        return 0
    text, extra = found
    return _counter()[1](text) + -(-extra // 4)


def _tokens_at_most(message: Any) -> int:
    """A bound no estimate exceeds: a token is at least a byte of UTF-8, at most 4 a char."""
    found = _text_of(message)
    if found is None:
        return 0
    text, extra = found
    return 4 * len(text) + -(-extra // 4)


def usage_tokens(usage: Usage) -> int:
    return usage.total_tokens or usage.input + usage.output + usage.cache_read + usage.cache_write


def _reported(message: Any) -> Usage | None:
    if isinstance(message, AssistantMessage) and message.stop_reason not in ("error", "aborted"):
        return message.usage
    return None


def context_tokens(messages: list, *, at_most: bool = False) -> int:
    """Tokens of a context: the last reported usage plus estimates for what follows;
    ``at_most``: a bound no estimate exceeds, known without the tokenizer."""
    estimate = _tokens_at_most if at_most else estimate_tokens
    for index in range(len(messages) - 1, -1, -1):
        usage = _reported(messages[index])
        if usage is not None and usage_tokens(usage):
            return usage_tokens(usage) + sum(estimate(m) for m in messages[index + 1 :])
    return sum(estimate(m) for m in messages)


def estimate_text_tokens(text: str) -> int:
    """Tokens of ``text`` by the same estimate as :func:`estimate_tokens`."""
    return _counter()[1](text) if text else 0
