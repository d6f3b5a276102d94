"""OpenAI Codex (``openai-codex-responses``): the Responses API of ChatGPT's backend,
for a ChatGPT Plus/Pro sign-in (``pi auth login openai-codex``).

What differs from ``openai-responses``, as pi 0.73.1 sends it: the endpoint
(``<base>/codex/responses``, base ``https://chatgpt.com/backend-api``), the sign-in's
token as Bearer with the ChatGPT account it names (``chatgpt-account-id``, from the
token's claims), ``originator: pi``, the system prompt as ``instructions``, nothing
stored, low text verbosity, and ``response.done`` ending the stream like
``response.completed``. pi tries a WebSocket first and falls back to these server-sent
events; this plugin speaks the server-sent events only.
"""

from __future__ import annotations

import os
import platform
from typing import Any

import attrs

from pi_core import hookimpl
from pi_core.app.signins import account_id
from pi_core.protocol.model import Model
from pi_core.protocol.provider import LlmContext, StreamOptions
from pi_plugins.providers.failures import classify
from pi_plugins.providers.http import HttpRequest, SseProvider, StreamError, StreamReader, json_data
from pi_plugins.providers.openai_responses import ResponsesReader, convert_input
from pi_plugins.providers.thinking import level_value, reasoning_level

API = "openai-codex-responses"
DEFAULT_BASE_URL = "https://chatgpt.com/backend-api"
DEFAULT_INSTRUCTIONS = "You are a helpful assistant."


def codex_url(base_url: str | None) -> str:
    base = (base_url or "").strip().rstrip("/") or DEFAULT_BASE_URL
    if base.endswith("/codex/responses"):
        return base
    if base.endswith("/codex"):
        return base + "/responses"
    return base + "/codex/responses"


def user_agent() -> str:
    """pi's: ``pi (<platform> <release>; <arch>)`` with Node's names for them."""
    system = {"Linux": "linux", "Darwin": "darwin", "Windows": "win32"}.get(platform.system(), platform.system().lower())
    machine = {"x86_64": "x64", "AMD64": "x64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    return f"pi ({system} {platform.release()}; {machine})"


def build_body(model: Model, context: LlmContext, options: StreamOptions) -> dict:
    body: dict[str, Any] = {
        "model": model.id,
        "store": False,
        "stream": True,
        "instructions": context.system_prompt or DEFAULT_INSTRUCTIONS,
        "input": convert_input(model, attrs.evolve(context, system_prompt="")),
        "text": {"verbosity": "low"},
        "include": ["reasoning.encrypted_content"],
    }
    if options.session_id:
        body["prompt_cache_key"] = options.session_id
    body["tool_choice"] = "auto"
    body["parallel_tool_calls"] = True
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if context.tools:
        body["tools"] = [{"type": "function", "name": t.name, "description": t.description,
                          "parameters": t.parameters, "strict": None} for t in context.tools]
    level = reasoning_level(model, options) if model.reasoning else None
    if level:
        body["reasoning"] = {"effort": level_value(model, level), "summary": "auto"}
    return body


class CodexReader(ResponsesReader):
    """Responses events; ``response.done`` completes the answer too, and an ``error``
    event or a failed response is the Codex error it reports."""

    def on_event(self, event):
        data = json_data(event)
        kind = data.get("type") if isinstance(data, dict) else None
        if kind == "error":
            text = f"Codex error: {data.get('message') or data.get('code') or data}"
            raise StreamError(text, classify(None, text))
        if kind == "response.failed":
            error = (data.get("response") or {}).get("error") or {}
            text = error.get("message") or "Codex response failed"
            raise StreamError(text, classify(None, text))
        if kind == "response.done":
            event.data = event.data.replace('"response.done"', '"response.completed"', 1)
        return super().on_event(event)


class OpenAICodexProvider(SseProvider):
    api = API
    default_max_retries = 3  # pi retries Codex three times

    def build_request(self, model: Model, context: LlmContext, options: StreamOptions) -> HttpRequest:
        token = options.api_key
        if not token:
            raise ValueError(f"No API key for provider: {model.provider} (sign in: pi auth login openai-codex)")
        account = account_id(token)
        if not account:
            raise ValueError("Failed to extract accountId from token (sign in again: /login openai-codex)")
        headers = {**(model.headers or {}), **(options.headers or {})}
        headers.update({
            "Authorization": f"Bearer {token}",
            "chatgpt-account-id": account,
            "originator": "pi",
            "User-Agent": user_agent(),
            "OpenAI-Beta": "responses=experimental",
            "accept": "text/event-stream",
            "content-type": "application/json",
        })
        if options.session_id:
            headers["session_id"] = options.session_id
            headers["x-client-request-id"] = options.session_id
        return HttpRequest(codex_url(model.base_url), headers, build_body(model, context, options))

    def reader(self, builder, model, context) -> StreamReader:
        return CodexReader(builder, model, context)


@hookimpl
def register_providers():
    return [OpenAICodexProvider()]
