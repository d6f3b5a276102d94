"""Classifying provider failures for the harness, which owns retries and compaction.

Every failure becomes a :class:`~pi_core.protocol.messages.Failure`: ``retryable`` (rate limits,
overload, server errors, lost connections; with the server's retry-after when it gave
one), ``overflow`` (the request did not fit the model's context window, recognised in
each provider's own wording) or ``other`` (a retry would fail the same way).
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from pi_core.protocol.messages import Failure

#: Context-overflow wording of the providers and servers we know (pi's list).
#: Patterns, not compiled ones: ``re`` compiles each on first use (an error), not on
#: every start.
OVERFLOW_PATTERNS = "|".join([
        r"prompt is too long",  # Anthropic
        r"request_too_large",  # Anthropic, request bytes (413)
        r"input is too long for requested model",  # Bedrock
        r"exceeds the context window",  # OpenAI
        r"input token count.*exceeds the maximum",  # Gemini
        r"maximum prompt length is \d+",  # xAI
        r"reduce the length of the messages",  # Groq
        r"maximum context length is \d+ tokens",  # OpenRouter, vLLM
        r"exceeds the limit of \d+",  # GitHub Copilot
        r"exceeds the available context size",  # llama.cpp server
        r"greater than the context length",  # LM Studio
        r"context window exceeds limit",  # MiniMax
        r"exceeded model token limit",  # Kimi
        r"too large for model with \d+ maximum context length",  # Mistral
        r"model_context_window_exceeded",  # z.ai
        r"prompt too long; exceeded (?:max )?context length",  # Ollama
        r"context[_ ]length[_ ]exceeded",
        r"too many tokens",
        r"token limit exceeded",
])
#: Wording that looks like overflow but is throttling.
NOT_OVERFLOW = r"rate limit|too many requests|throttl"
#: Wording of transient trouble reported inside a stream (no HTTP status to go by).
RETRYABLE_WORDING = (
    r"overloaded|rate.?limit|too many requests|service.?unavailable|server.?error|"
    r"internal.?error|api_error|timed? ?out|timeout|connection|temporarily|try again"
)

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})


def is_overflow(text: str) -> bool:
    return bool(re.search(OVERFLOW_PATTERNS, text, re.IGNORECASE)) and not re.search(NOT_OVERFLOW, text, re.IGNORECASE)


def classify(status: int | None, text: str, retry_after_ms: int | None = None) -> Failure:
    """The failure for an HTTP status (``None``: no status, e.g. an error event inside
    the stream) and the server's message."""
    if is_overflow(text) or status == 413:
        return Failure(kind="overflow", status=status)
    if status is not None:
        retryable = status in RETRYABLE_STATUS or status >= 500
    else:
        retryable = bool(re.search(RETRYABLE_WORDING, text, re.IGNORECASE))
    if retryable:
        return Failure(kind="retryable", status=status, retry_after_ms=retry_after_ms)
    return Failure(kind="other", status=status)


def retry_after_ms(headers: Any, body: Any = None, text: str = "") -> int | None:
    """The wait the server asked for, in ms: ``retry-after-ms``, ``retry-after`` (seconds
    or an HTTP date), Gemini's ``RetryInfo.retryDelay`` in the body, or "try again in
    1.5s" in the message."""
    value = _header(headers, "retry-after-ms")
    if value is not None:
        try:
            return max(0, int(float(value)))
        except ValueError:
            pass
    value = _header(headers, "retry-after")
    if value is not None:
        try:
            return max(0, int(float(value) * 1000))
        except ValueError:
            import email.utils  # rare: an HTTP date instead of seconds

            try:
                parsed = email.utils.parsedate_to_datetime(value)
            except (TypeError, ValueError):
                parsed = None
            if parsed is not None:
                return max(0, int((parsed.timestamp() - time.time()) * 1000))
    for detail in _details(body):
        delay = detail.get("retryDelay") if isinstance(detail, dict) else None
        if isinstance(delay, str) and delay.endswith("s"):
            try:
                return int(float(delay[:-1]) * 1000)
            except ValueError:
                pass
    match = re.search(r"try again in (\d+(?:\.\d+)?)\s*(ms|s)\b", text, re.IGNORECASE)
    if match:
        amount = float(match.group(1))
        return int(amount if match.group(2).lower() == "ms" else amount * 1000)
    return None


def server_message(body_text: str) -> tuple[str, Any]:
    """The human message in an error body (JSON of any provider's shape, or plain text),
    and the parsed body."""
    text = body_text.strip()
    try:
        body = json.loads(text)
    except ValueError:
        return (text[:2000] or "(no body)"), None
    return _message_of(body) or text[:2000], body


def _message_of(body: Any) -> str | None:
    if isinstance(body, list) and body:  # Gemini sometimes wraps the error in a list
        return _message_of(body[0])
    if not isinstance(body, dict):
        return None
    error = body.get("error", body)
    if isinstance(error, str):
        return error
    if isinstance(error, dict):
        message = error.get("message")
        if isinstance(message, str) and message:
            kind = error.get("type") or error.get("status") or error.get("code")
            return f"{message} ({kind})" if isinstance(kind, str) and kind not in message else message
    message = body.get("message") or body.get("detail")
    return message if isinstance(message, str) else None


def _details(body: Any) -> list:
    if isinstance(body, list) and body:
        body = body[0]
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        details = body["error"].get("details")
        if isinstance(details, list):
            return details
    return []


def _header(headers: Any, name: str) -> str | None:
    if headers is None:
        return None
    value = headers.get(name)
    return value if isinstance(value, str) else None


def redact(text: str, *secrets: str | None) -> str:
    """``text`` with every secret (an API key, say) replaced by ``***``."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


def sdk_error_text(status: int, parsed: Any, message: str, *, inner: bool, colon: bool) -> str:
    """A failed answer as pi 1.6's provider SDKs word it: the status, then the error body
    as compact JSON (OpenAI's SDK: its ``error`` object, after a colon; Anthropic's: the
    whole body), or the server's message when the body is not JSON."""
    body = parsed.get("error") if inner and isinstance(parsed, dict) and isinstance(parsed.get("error"), dict) else parsed
    said = message if body is None else json.dumps(body, separators=(",", ":"), ensure_ascii=False)
    return f"{status}{':' if colon else ''} {said}"
