"""pi 1.6's own message protocol (``pi-messages``), the wire the Radius gateway speaks and
any backend may speak (a models.json provider with ``"api": "pi-messages"``).

One POST of ``{"model", "context", "options"}`` to ``<baseUrl>/messages`` with the key as
a bearer token; the context is pi's own JSON (the messages as a session file holds them),
the system prompt and the tools carried by a leading ``system`` message
(``content`` and ``toolsAdded``, as pi 1.6 sends them). The answer is server-sent events,
each one of pi's assistant-message events serialized (``text_start``/``_delta``/``_end``,
``thinking_*``, ``toolcall_*``, keyed by ``contentIndex``) and a terminal ``done`` or
``error`` carrying the usage (cost included: the gateway prices the answer), the
response id and the model that answered. Facts taken from pi 1.6 run against a stand-in
(``tests/support/pi_messages_server.py``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from pi_core import hookimpl
from pi_core.protocol.codec import from_json, to_json
from pi_core.protocol.messages import Failure, Usage
from pi_core.protocol.model import Model
from pi_core.protocol.provider import LlmContext, StreamOptions
from pi_core.protocol.stream import AssistantMessageEvent
from pi_plugins.providers.failures import classify
from pi_plugins.providers.http import (
    HttpRequest,
    SseProvider,
    StreamError,
    StreamReader,
    env_value,
    join_url,
    json_data,
)
from pi_plugins.providers.sse import SseEvent

API = "pi-messages"
_STOP_REASONS = frozenset({"stop", "length", "toolUse"})


CONSTRAINED_SAMPLING = {"type": "json_schema", "strict": "prefer"}


def wire_tool(tool: Any) -> dict:
    from pi_plugins.providers.strict_schema import CONSTRAINED_TOOLS

    spec = {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
    if tool.name in CONSTRAINED_TOOLS:
        spec["constrainedSampling"] = dict(CONSTRAINED_SAMPLING)
    return spec


def _declared(data: dict) -> dict:
    """A system message as sent: its declared tools with their sampling, as ``wire_tool``'s."""
    from pi_plugins.providers.strict_schema import CONSTRAINED_TOOLS

    if not data.get("toolsAdded"):
        return data
    tools = [{**t, "constrainedSampling": dict(CONSTRAINED_SAMPLING)}
             if t.get("name") in CONSTRAINED_TOOLS and "constrainedSampling" not in t else t
             for t in data["toolsAdded"]]
    return {**data, "toolsAdded": tools}


def wire_context(context: LlmContext) -> dict:
    """pi 1.6's ``Context``: the transcript's system messages as they are, in place (the
    leading one with ``content: ""`` and the prompt as named ``sections``, later ones
    patching them), between the messages; a transcript that does not open with one
    (compacted, or older than system messages) gets one carrying the whole prompt as its
    ``content`` and the tools as ``toolsAdded``."""
    from pi_core.protocol.messages import LLM_MESSAGE_TYPES
    from pi_plugins.system_messages import system_data

    transcript = context.transcript
    if transcript and system_data(transcript[0]) is not None:
        sent = []
        for message in transcript:
            data = system_data(message)
            if data is not None:
                sent.append(_declared(data))
            elif isinstance(message, LLM_MESSAGE_TYPES):
                sent.append(to_json(message))
        return {"messages": sent}
    system: dict[str, Any] = {"role": "system", "content": context.system_prompt,
                              "timestamp": int(time.time() * 1000)}
    if context.tools:
        system["toolsAdded"] = [wire_tool(t) for t in context.tools]
    return {"messages": [system, *(to_json(m) for m in context.messages)]}


def wire_options(options: StreamOptions) -> dict:
    """The request's ``options``: only what is set (pi leaves the rest to the backend);
    ``reasoning`` is the thinking level, none when thinking is off; ``toolChoice`` only
    when the caller asks for one (pi 1.6's agent never does, so a turn sends none)."""
    retention = "long" if env_value(options, "PI_CACHE_RETENTION") == "long" else None
    level = options.thinking_level if options.thinking_level not in (None, "", "off") else None
    values = {"temperature": options.temperature, "maxTokens": options.max_tokens, "reasoning": level,
              "cacheRetention": retention, "sessionId": options.session_id, "toolChoice": options.tool_choice}
    return {name: value for name, value in values.items() if value is not None}


class PiMessagesReader(StreamReader):
    """Replays the serialized events onto the builder. A ``contentIndex`` is checked
    against the content so far (a start opens the next block; the others need an open one):
    a server cannot make the client index where it likes."""

    def on_event(self, event: SseEvent) -> Iterable[AssistantMessageEvent]:
        if not event.data.strip() or event.data.strip() == "[DONE]":
            return ()
        data = json_data(event)
        if not isinstance(data, dict) or not isinstance(data.get("type"), str):
            raise StreamError(f"pi-messages event without a type: {event.data[:200]!r}")
        kind = data["type"]
        if kind in ("done", "error"):
            self._finish(data)
            return ()
        if kind == "start":
            return ()
        index = data.get("contentIndex")
        builder = self.builder
        limit = len(builder.message.content) if kind.endswith("_start") else len(builder.message.content) - 1
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index <= limit:
            raise StreamError(f"Invalid contentIndex {index!r} in pi-messages {kind} event")
        if kind == "text_start":
            return (builder.text_start(),)
        if kind == "thinking_start":
            return (builder.thinking_start(),)
        if kind == "toolcall_start":
            return (builder.toolcall_start(str(data.get("id") or ""), str(data.get("toolName") or "")),)
        if kind in ("text_delta", "thinking_delta", "toolcall_delta"):
            delta = str(data.get("delta") or "")
            if kind == "text_delta":
                return (builder.text_delta(delta, index),)
            if kind == "thinking_delta":
                return (builder.thinking_delta(delta, index),)
            return (builder.toolcall_delta(delta, index),)
        if kind in ("text_end", "thinking_end", "toolcall_end"):
            return self._end(kind, index, data)
        return ()  # an event a newer gateway adds: nothing to show

    def _end(self, kind: str, index: int, data: dict) -> Iterable[AssistantMessageEvent]:
        builder = self.builder
        block = builder.block(index)
        if kind == "text_end":
            if isinstance(data.get("content"), str):
                block.text = data["content"]
            block.text_signature = data.get("contentSignature")
        elif kind == "thinking_end":
            if isinstance(data.get("content"), str):
                block.thinking = data["content"]
            block.thinking_signature = data.get("contentSignature")
            block.redacted = data.get("redacted")
        end = builder.close(index)
        if kind == "toolcall_end" and isinstance(data.get("toolCall"), dict):
            call = data["toolCall"]  # the server's final word on the call
            if isinstance(call.get("arguments"), dict):
                block.arguments = call["arguments"]
            if isinstance(call.get("id"), str):
                block.id = call["id"]
            if isinstance(call.get("name"), str):
                block.name = call["name"]
        return (end,) if end is not None else ()

    def _finish(self, data: dict) -> None:
        message = self.builder.message
        if isinstance(data.get("usage"), dict):
            try:
                message.usage = from_json(data["usage"], Usage)
            except ValueError:
                pass  # a usage this version cannot read: the answer still counts
        if isinstance(data.get("responseId"), str):
            message.response_id = data["responseId"]
        for name in ("responseModel", "providerThinkingLevel"):
            if data.get(name) is not None:
                message.extra[name] = data[name]
        self.finished = True
        if data["type"] == "error":
            given = data.get("errorMessage")
            text = given if isinstance(given, str) else "the gateway ended the answer with an error"
            if data.get("reason") == "aborted":
                raise StreamError(text, Failure(kind="other"))
            raise StreamError(text, classify(None, text))
        reason = data.get("reason")
        self.stop_reason = reason if reason in _STOP_REASONS else None

    def end(self) -> Iterable[AssistantMessageEvent]:
        if not getattr(self, "finished", False):
            raise StreamError("Connection lost: the stream ended without a terminal event",
                              Failure(kind="retryable"))
        return self.builder.close_all()


class PiMessagesProvider(SseProvider):
    api = API

    def build_request(self, model: Model, context: LlmContext, options: StreamOptions) -> HttpRequest:
        if not options.api_key:
            raise ValueError(f'No API key provided for provider "{model.provider}"')
        headers = {"authorization": f"Bearer {options.api_key}", "accept": "text/event-stream",
                   "content-type": "application/json", **(model.headers or {}), **options.headers}
        body = {"model": model.id, "context": wire_context(context), "options": wire_options(options)}
        return HttpRequest(join_url(model.base_url, "/messages"), headers, body)

    def reader(self, builder, model, context) -> StreamReader:
        return PiMessagesReader(builder, model, context)


@hookimpl
def register_providers():
    return [PiMessagesProvider()]
