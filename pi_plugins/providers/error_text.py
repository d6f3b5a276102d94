"""A failed request in pi 1.6's words, API by API (its SDKs' and its own wrappers'), so
the answer's ``errorMessage`` reads the same here as there (compared side by side on
the scripted server): OpenAI Responses ``<name> API error (503): {json}``, Google the
body as JSON, Mistral its raw body after ``Mistral API error (503):``, Codex the server's
message or the ChatGPT usage-limit sentence."""

from __future__ import annotations

import json
import re
import time
from typing import Any

#: pi 1.6 cuts an error body shown to the user at this many characters.
MAX_BODY_CHARS = 4000


def compact(value: Any) -> str:
    """JSON as JavaScript's ``JSON.stringify`` writes it."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def truncated(text: str, limit: int = MAX_BODY_CHARS) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... [truncated {len(text) - limit} chars]"


def responses_text(prefix: str, status: int, parsed: Any, text: str) -> str:
    """The OpenAI SDK's error under pi's prefix: its ``error`` object as JSON, else what
    the SDK says (``503 <text>``, or ``503 status code (no body)`` for JSON without one)."""
    inner = parsed.get("error") if isinstance(parsed, dict) else None
    if isinstance(inner, dict) and inner:
        return f"{prefix} ({status}): {truncated(compact(inner))}"
    said = text.strip() if parsed is None and text.strip() else "status code (no body)"
    return f"{prefix} ({status}): {status} {said}"


def responses_prefix(provider: str) -> str:
    return "OpenAI API error" if provider == "openai" else f"{provider} API error"


def google_text(status: int, reason: str, parsed: Any, text: str) -> str:
    """Google's SDK: the error body as JSON; a body that is not JSON is wrapped as its
    ``{"error": {"message", "code", "status"}}``."""
    body = parsed if parsed is not None else {"error": {"message": text, "code": status, "status": reason}}
    return compact(body)


def google_stream_text(chunk: dict) -> str:
    """An error chunk in Google's stream, as its SDK words it."""
    status = chunk["error"].get("status")
    return f"got status: {'undefined' if status is None else status}. {compact(chunk)}"


def mistral_text(status: int, reason: str, text: str) -> str:
    body = text.strip()
    return f"Mistral API error ({status}): {truncated(body) if body else reason or 'Request failed'}"


def codex_text(status: int, reason: str, parsed: Any, text: str) -> str:
    """pi 1.6's Codex: the usage-limit sentence (a usage or rate code, or 429), else the
    error's message, else the body as it came."""
    error = parsed.get("error") if isinstance(parsed, dict) else None
    said = text or reason or "Request failed"
    if not isinstance(error, dict) or not error:
        return said
    code = str(error.get("code") or error.get("type") or "")
    friendly = None
    if re.search(r"usage_limit_reached|usage_not_included|rate_limit_exceeded", code, re.IGNORECASE) or status == 429:
        plan = f" ({str(error['plan_type']).lower()} plan)" if error.get("plan_type") else ""
        resets = error.get("resets_at")
        when = (f" Try again in ~{max(0, round((resets * 1000 - time.time() * 1000) / 60000))} min."
                if isinstance(resets, (int, float)) and resets else "")
        friendly = f"You have hit your ChatGPT usage limit{plan}.{when}".strip()
    return friendly or error.get("message") or said
