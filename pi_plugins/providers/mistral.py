"""Mistral's own API (``mistral-conversations``): ``POST <base>/v1/chat/completions``,
what pi 0.73.1 reaches through Mistral's SDK (``chat.stream``).

The wire is Chat Completions with Mistral's ways, which ``openai-completions`` already
knows for Mistral (nine-character tool-call ids, ``max_tokens``, no ``store``, no
developer role, usage without asking); what is Mistral's own: the path under ``/v1``,
the session's ``x-affinity`` header, and deltas whose ``content`` is a list of parts,
``{"type": "thinking", "thinking": [{"type": "text", "text": ...}]}`` and
``{"type": "text", "text": ...}``, read here as thinking and text. Tools say ``strict``,
true (with a strict schema) only for pi's constrained tools and only where the model's
``compat.supportsStrictMode`` opts in, as pi 1.6 (strict tools stalled Mistral Large 4).
"""

from __future__ import annotations

import json
from typing import Any

import attrs

from pi_core import hookimpl
from pi_core.protocol.model import Model
from pi_core.protocol.provider import LlmContext, StreamOptions
from pi_plugins.providers.http import HttpRequest, StreamReader, join_url, json_data
from pi_plugins.providers.openai_completions import CompletionsReader, OpenAICompletionsProvider
from pi_plugins.providers.sse import SseEvent

API = "mistral-conversations"
#: What Mistral's API takes, whatever the model's provider is called.
MISTRAL_COMPAT = {"toolCallIdFormat": "mistral", "supportsStore": False, "supportsDeveloperRole": False,
                  "supportsReasoningEffort": False, "supportsUsageInStreaming": False,
                  "maxTokensField": "max_tokens", "supportsStrictMode": False}


class MistralReader(CompletionsReader):
    def on_event(self, event):
        if event.data.strip() == "[DONE]":
            return super().on_event(event)
        chunk = json_data(event)
        choices = chunk.get("choices") if isinstance(chunk, dict) else None
        delta = (choices[0] or {}).get("delta") if isinstance(choices, list) and choices else None
        parts = delta.get("content") if isinstance(delta, dict) else None
        if isinstance(parts, list):
            text, thinking = [], []
            for part in parts:
                if isinstance(part, str):
                    text.append(part)
                elif isinstance(part, dict) and part.get("type") == "text":
                    text.append(part.get("text") or "")
                elif isinstance(part, dict) and part.get("type") == "thinking":
                    thinking.extend(p.get("text", "") for p in part.get("thinking") or () if isinstance(p, dict))
            delta["content"] = "".join(text) or None
            if thinking:
                delta["reasoning_content"] = "".join(thinking)
            event = SseEvent(event.event, json.dumps(chunk), event.id)
        events = super().on_event(event)
        message = self.builder.message  # pi 1.6's Mistral keeps neither the raw finish reason nor a reasoning count
        message.raw_stop_reason = message.usage.reasoning = None
        return events


class MistralProvider(OpenAICompletionsProvider):
    api = API
    def http_error_text(self, where: str, status: int, reason: str, message: str, parsed: Any,
                        text: str = "") -> str:
        """pi 1.6's words (its Mistral client's): ``Mistral API error (503): <the body>``."""
        from pi_plugins.providers.error_text import mistral_text

        return mistral_text(status, reason, text)

    def build_request(self, model: Model, context: LlmContext, options: StreamOptions) -> HttpRequest:
        mistral = attrs.evolve(model, compat={**MISTRAL_COMPAT, **(model.compat or {})})
        request = super().build_request(mistral, context, options)
        request.url = join_url(model.base_url, "/v1/chat/completions")
        for tool in request.body.get("tools") or ():  # pi 1.6 says strict on every Mistral tool
            if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
                tool["function"].setdefault("strict", False)
        if options.session_id and "x-affinity" not in request.headers:
            request.headers["x-affinity"] = options.session_id
        return request

    def reader(self, builder, model, context) -> StreamReader:
        return MistralReader(builder, attrs.evolve(model, compat={**MISTRAL_COMPAT, **(model.compat or {})}), context)


@hookimpl
def register_providers():
    return [MistralProvider()]
