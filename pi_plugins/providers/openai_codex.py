"""OpenAI Codex (``openai-codex-responses``): the Responses API of ChatGPT's backend,
for a ChatGPT Plus/Pro sign-in (``pi auth login openai-codex``).

What differs from ``openai-responses``, as pi 0.73.1 sends it: the endpoint
(``<base>/codex/responses``, base ``https://chatgpt.com/backend-api``), the sign-in's
token as Bearer with the ChatGPT account it names (``chatgpt-account-id``, from the
token's claims), ``originator: pi``, nothing stored, low text verbosity, and
``response.done`` ending the stream like ``response.completed``. As pi 1.6 sends it: the
system prompt and the tools are items of the input (:func:`codex_input`) and the body
goes zstd-compressed over server-sent events (:mod:`pi_plugins.providers.zstd_body`). Unless the setting ``transport`` is ``sse``, the request goes
over a WebSocket first and over these server-sent events when that fails, as pi's does
(:mod:`pi_plugins.providers.codex_websocket`).
"""

from __future__ import annotations

import asyncio
from typing import Any

import attrs

from pi_core import hookimpl
from pi_core.protocol.messages import Failure
from pi_core.protocol.model import Model
from pi_core.protocol.provider import LlmContext, StreamOptions
from pi_plugins.providers import codex_websocket as ws
from pi_plugins.providers.failures import classify, redact
from pi_plugins.providers.http import (
    ABORTED,
    AbortWatch,
    HttpRequest,
    SseProvider,
    StreamError,
    StreamReader,
    describe_exception,
    environment_url,
    json_data,
    report_stream_event,
    take_back_abort,
)
from pi_plugins.providers.identity import with_identity
from pi_plugins.providers.kit import MessageBuilder
from pi_plugins.providers.openai_responses import MIN_OUTPUT_TOKENS, ResponsesReader, convert_input
from pi_plugins.providers.origins import rewrite as rewrite_origin
from pi_plugins.providers.sse import SseEvent
from pi_plugins.providers.thinking import level_value, max_tokens, reasoning_level

API = "openai-codex-responses"
DEFAULT_BASE_URL = "https://chatgpt.com/backend-api"
#: pi 1.6's fixed ``reasoning.effort`` while ``configuration_update`` items carry the level.
CONFIGURATION_UPDATE_REQUEST_EFFORT = "medium"


def codex_url(base_url: str | None) -> str:
    base = (base_url or "").strip().rstrip("/") or DEFAULT_BASE_URL
    if base.endswith("/codex/responses"):
        return base
    if base.endswith("/codex"):
        return base + "/responses"
    return base + "/codex/responses"


def codex_tools(model: Model, tools: list) -> list[dict]:
    """The tools as pi 1.6 declares them to Codex: strict schemas for the built-in tools
    that ask for constrained arguments (:data:`CONSTRAINED_TOOLS`), ``strict: null``
    for the rest, no ``strict`` at all where the model's compat says strict mode is off."""
    from pi_plugins.providers.grammar_tools import custom_tool
    from pi_plugins.providers.strict_schema import CONSTRAINED_TOOLS, NotStrict, strict_schema

    supports_strict = (model.compat or {}).get("supportsStrictMode", True) is not False
    specs = []
    for tool in tools:
        custom = custom_tool(tool, model.compat or {}, nested=False)  # a grammar tool, where it takes one
        if custom is not None:
            specs.append(custom)
            continue
        parameters, strict = tool.parameters, None
        if supports_strict and tool.name in CONSTRAINED_TOOLS:
            try:
                parameters, strict = strict_schema(tool.parameters), True
            except NotStrict:
                pass  # pi 1.6's "prefer": sent as it is
        spec = {"type": "function", "name": tool.name, "description": tool.description, "parameters": parameters}
        if supports_strict:
            spec["strict"] = strict
        specs.append(spec)
    return specs


def codex_input(model: Model, context: LlmContext, levels: bool = False) -> list[dict]:
    """pi 1.6's input: the tools in a leading developer ``additional_tools`` item where the
    model takes them mid-conversation (its compat's ``supportsAdditionalTools`` and
    ``supportsMidConvoSystemMessages``, every catalogue Codex model), then the system
    prompt as a developer item (no ``instructions``: the backend appends those after the
    input, which spoiled the prompt cache), then the conversation."""
    compat = model.compat or {}
    head: list[dict] = []
    if context.tools and tools_as_items(model):
        head.append({"type": "additional_tools", "role": "developer", "tools": codex_tools(model, context.tools)})
    if context.system_prompt:
        role = "developer" if model.reasoning and compat.get("supportsDeveloperRole") is not False else "system"
        head.append({"role": role, "content": context.system_prompt})
    return [*head, *convert_input(model, attrs.evolve(context, system_prompt=""), head=False, levels=levels)]


def tools_as_items(model: Model) -> bool:
    compat = model.compat or {}
    return bool(compat.get("supportsAdditionalTools") and compat.get("supportsMidConvoSystemMessages"))


def build_body(model: Model, context: LlmContext, options: StreamOptions) -> dict:
    body: dict[str, Any] = {
        "model": model.id,
        "store": False,
        "stream": True,
        "input": codex_input(model, context, levels=reasoning_effort(model, options) is not None
                             and bool((model.compat or {}).get("supportsMidConvoEffort"))),
        "text": {"verbosity": "low"},
        "include": ["reasoning.encrypted_content"],
    }
    if options.session_id:
        body["prompt_cache_key"] = options.session_id
    body["tool_choice"] = options.tool_choice if options.tool_choice is not None else "auto"
    body["parallel_tool_calls"] = True
    limit = max_tokens(model, options, context)  # pi 1.6 sends it; 0.73.1 did not
    if limit and (model.compat or {}).get("supportsMaxOutputTokens", True) is not False:
        body["max_output_tokens"] = max(limit, MIN_OUTPUT_TOKENS)
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if context.tools and not tools_as_items(model):
        body["tools"] = codex_tools(model, context.tools)
    effort = reasoning_effort(model, options)
    if effort is not None and (model.compat or {}).get("supportsMidConvoEffort"):
        # pi 1.6: a fixed effort, the level in a configuration_update item at the end of the
        # input, so a change of level leaves the cached prefix as it was
        body["reasoning"] = {"effort": CONFIGURATION_UPDATE_REQUEST_EFFORT, "summary": "auto"}
        body["input"].append({"type": "configuration_update", "reasoning": {"effort": effort}})
    elif effort is not None:
        body["reasoning"] = {"effort": effort, "summary": "auto"}
    return body


def reasoning_effort(model: Model, options: StreamOptions) -> str | None:
    """The effort a reasoning model is asked for: the level's (the model's value for it),
    and with thinking off its ``off`` value (pi 1.6: ``none``); None: no reasoning field."""
    if not model.reasoning:
        return None
    level = reasoning_level(model, options)
    if level:
        return level_value(model, level)
    level_map = model.thinking_level_map or {}
    return level_map.get("off", "none") if "off" in level_map else "none"


def configuration_update_effort(model: Model, options: StreamOptions) -> str | None:
    """The effort a ``configuration_update`` item carries (``supportsMidConvoEffort``), kept
    on the answer as ``providerThinkingLevel`` as pi 1.6 keeps it."""
    return reasoning_effort(model, options) if (model.compat or {}).get("supportsMidConvoEffort") else None


class CodexReader(ResponsesReader):
    """Responses events; ``response.done`` completes the answer too, and an ``error``
    event or a failed response is the Codex error it reports."""

    def on_event(self, event):
        data = json_data(event)
        kind = data.get("type") if isinstance(data, dict) else None
        if kind == "error":
            text = f"Codex error: {data.get('message') or data.get('code') or data}"
            raise StreamError(text, classify(None, text), as_said=True)  # pi 1.6 names no model
        if kind == "response.failed":
            error = (data.get("response") or {}).get("error") or {}
            text = error.get("message") or "Codex response failed"
            raise StreamError(text, classify(None, text), as_said=True)
        if kind == "response.done":
            event.data = event.data.replace('"response.done"', '"response.completed"', 1)
        return super().on_event(event)


class _SocketCloser:
    """What the abort watch closes while the stream waits at a ``yield``: the socket."""

    def __init__(self, socket):
        self.socket = socket

    async def aclose(self) -> None:
        await ws.close(self.socket, 1000, "aborted")


async def _same(payload: dict, body: dict) -> dict:
    return body


class OpenAICodexProvider(SseProvider):
    api = API

    def http_error_text(self, where: str, status: int, reason: str, message: str, parsed: Any,
                        text: str = "") -> str:
        """pi 1.6's words: the usage-limit sentence, else the server's message or body."""
        from pi_plugins.providers.error_text import codex_text

        return codex_text(status, reason, parsed, text)

    def __init__(self, settings=None):
        #: The settings (their ``transport``), read at each request: /settings changes it.
        self.settings = settings

    def transport(self) -> str:
        """``auto`` (pi's default), ``websocket``, ``websocket-cached`` or ``sse``; pi's
        older boolean ``websockets`` when ``transport`` is unset."""
        settings = self.settings
        value = settings.get("transport") if settings is not None else None
        if value is None and settings is not None and isinstance(settings.get("websockets"), bool):
            value = "websocket" if settings.get("websockets") else "sse"
        return value if isinstance(value, str) and value else "auto"

    async def stream(self, model: Model, context: LlmContext, options: StreamOptions):
        level = configuration_update_effort(model, options)
        async for event in self._stream(model, context, options):
            message = getattr(event, "partial", None) or getattr(event, "message", None) or getattr(event, "error", None)
            if level is not None and message is not None and "providerThinkingLevel" not in message.extra:
                message.extra["providerThinkingLevel"] = level
            yield event

    async def _stream(self, model: Model, context: LlmContext, options: StreamOptions):
        transport = self.transport()
        session = options.session_id
        if transport == "sse" or (session and session in ws.fallback_sessions) or options.signal.aborted:
            async for event in super().stream(model, context, options):
                yield event
            return
        try:
            request = self.build_request(model, context, options)
            url = ws.websocket_url(rewrite_origin(environment_url(request.url)))
        except Exception:  # no sign-in, a bad URL: reported as over server-sent events
            async for event in super().stream(model, context, options):
                yield event
            return
        try:
            body = await options.prepare_payload(request.body)
            headers = ws.websocket_headers(request.headers, session or ws.new_request_id())
            headers = await with_identity(model, headers, options)
        except Exception as exc:  # a hook that failed: the answer's error, as over SSE
            message, failure = describe_exception(exc)
            builder = MessageBuilder(api=model.api, provider=model.provider, model=model.id)
            yield builder.error(redact(f"{model.provider}/{model.id}: {message}", options.api_key), failure=failure)
            return
        # the fallback sends the same body: the before_provider_request hooks ran once
        over_sse = attrs.evolve(options, on_payload=lambda payload: _same(payload, body))
        final = None
        answer = self._over_websocket(model, context, options, transport, url, headers, body)
        try:
            async for event in answer:
                if event is None:  # the socket failed before the answer started
                    break
                if event.type in ("done", "error"):
                    final = event
                    break
                yield event
        finally:
            await answer.aclose()
        if final is not None:
            yield final
            return
        async for event in super().stream(model, context, over_sse):
            yield event

    async def _over_websocket(self, model, context, options, transport, url, headers, body):
        """The answer's events over a socket, ending with done or error, or None when the
        request is to go over server-sent events instead."""
        builder = MessageBuilder(api=model.api, provider=model.provider, model=model.id)
        signal, session, key = options.signal, options.session_id, options.api_key
        where = f"{model.provider}/{model.id}"
        watch = AbortWatch(signal)
        lease, keep, started, final = None, False, False, None
        cached = transport in ("auto", "websocket-cached")
        try:
            watch.reading = True
            lease = await ws.acquire(url, headers, session, ws.connect_seconds(options.connect_timeout_ms))
            frame = ws.cached_body(lease.entry, body) if cached and lease.entry is not None else body
            await lease.socket.send(ws.frame_text(frame))
            watch.response = _SocketCloser(lease.socket)
            reader = self.reader(builder, model, context)
            async for text in ws.texts(lease.socket):
                watch.reading = False
                if not started:
                    started = True
                    yield builder.start()
                wire = SseEvent(None, text)
                await report_stream_event(options, wire)  # as over server-sent events
                for event in reader.on_event(wire):
                    if signal.aborted:
                        raise asyncio.CancelledError
                    yield event
                if signal.aborted:
                    raise asyncio.CancelledError
                if reader.completed:
                    break
                watch.reading = True
            watch.reading = False
            for event in reader.end():
                yield event
            final = builder.done(reader.stop_reason)
            keep = True
            if cached and lease.entry is not None and builder.message.response_id:
                items = convert_input(model, LlmContext(system_prompt="", messages=[builder.message]))
                lease.entry.continuation = (body, builder.message.response_id,
                                            [i for i in items if i.get("type") != "function_call_output"])
        except asyncio.CancelledError:
            if not signal.aborted:
                raise
            take_back_abort()
            final = builder.error(ABORTED, aborted=True)
        except StreamError as exc:  # the backend's own error, or a frame that is not JSON
            final = (builder.error(ABORTED, aborted=True) if signal.aborted
                     else builder.error(redact(f"{where}: {exc.message}", key), failure=exc.failure))
        except Exception as exc:  # the socket: a transport failure
            if signal.aborted:
                final = builder.error(ABORTED, aborted=True)
            else:
                if session:
                    ws.fallback_sessions.add(session)
                if started:
                    message = str(exc) or type(exc).__name__
                    final = builder.error(redact(f"{where}: {message}", key), failure=Failure(kind="retryable"))
        finally:
            watch.close()
            if lease is not None:
                if not keep and lease.entry is not None:
                    lease.entry.continuation = None
                await lease.release(keep and not signal.aborted)
        yield final

    def build_request(self, model: Model, context: LlmContext, options: StreamOptions) -> HttpRequest:
        token = options.api_key
        if not token:
            raise ValueError(f"No API key for provider: {model.provider} (sign in: pi auth login openai-codex)")
        from pi_plugins.signin.flows import account_id  # the sign-in flows: for Codex requests only

        account = account_id(token)
        if not account:
            raise ValueError("Failed to extract accountId from token (sign in again: /login openai-codex)")
        headers = {**(model.headers or {}), **(options.headers or {})}
        headers.update({
            "Authorization": f"Bearer {token}",
            "chatgpt-account-id": account,
            "originator": "pi",
            "OpenAI-Beta": "responses=experimental",
            "accept": "text/event-stream",
            "content-type": "application/json",
        })
        if options.session_id:
            headers["session-id"] = options.session_id
            headers["x-client-request-id"] = options.session_id
        return HttpRequest(codex_url(model.base_url), headers, build_body(model, context, options))

    def content(self, body: Any, headers: dict[str, str]) -> tuple[Any, dict[str, str]]:
        """The body zstd-compressed with ``Content-Encoding: zstd``, as pi 1.6 sends it
        over server-sent events (plain JSON where no zstd is at hand, as there)."""
        from pi_plugins.providers.request_body import encode_json
        from pi_plugins.providers.zstd_body import compressed

        packed = compressed(encode_json(body))
        if packed is None:
            return super().content(body, headers)
        return packed, {**headers, "content-encoding": "zstd"}

    def reader(self, builder, model, context) -> StreamReader:
        return CodexReader(builder, model, context)


@hookimpl
def register_providers(ctx):
    return [OpenAICodexProvider(getattr(ctx, "settings", None))]


@hookimpl
async def session_shutdown(ctx):
    """A session that is left closes its kept WebSocket (pi's session cleanup)."""
    await ws.close_session(getattr(ctx, "session_id", None))
