"""Anthropic Messages (``anthropic-messages``): Claude, and servers that speak its API.

Thinking is budget-based (``budget_tokens``) for older models and adaptive (an effort
level) for Opus 4.6+ and Sonnet 4.6; signatures stream as ``signature_delta`` and are
sent back with the thinking they sign; redacted thinking travels as opaque data. Prompt
caching marks the system prompt, the last tool and the last user message. ``compat``:
``supportsEagerToolInputStreaming`` (false: no per-tool ``eager_input_streaming``, the
fine-grained streaming beta header instead) and ``supportsLongCacheRetention``.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterable
from typing import TYPE_CHECKING, Any

from attrs import evolve

from pi_core import hookimpl
from pi_core.protocol.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from pi_core.protocol.model import Model, ModelCost, calculate_cost
from pi_core.protocol.provider import LlmContext, StreamOptions
from pi_core.protocol.stream import AssistantMessageEvent
from pi_plugins.providers import anthropic_effort
from pi_plugins.providers.anthropic_strict import StrictToolLimits
from pi_plugins.providers.anthropic_threads import ThreadedMessages
from pi_plugins.providers.cloudflare import gateway_headers, is_gateway
from pi_plugins.providers.copilot import adapt as adapt_for_copilot
from pi_plugins.providers.copilot import is_copilot
from pi_plugins.providers.failures import classify
from pi_plugins.providers.http import (
    HttpRequest,
    SseProvider,
    StreamError,
    StreamReader,
    join_url,
    json_data,
    truncated,
)
from pi_plugins.providers.kit import MessageBuilder
from pi_plugins.providers.thinking import budget_for, fit_budget_to_context, max_tokens
from pi_plugins.providers.transform import keep_id_chars, transform_messages

if TYPE_CHECKING:  # (imported where a request is built: not by a start that sends none)
    from pi_plugins.providers.anthropic_system import SystemChanges

API = "anthropic-messages"
VERSION = "2023-06-01"
FINE_GRAINED_TOOL_STREAMING_BETA = "fine-grained-tool-streaming-2025-05-14"
INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"
SERVER_SIDE_FALLBACK_BETA = "server-side-fallback-2026-07-01"
IMAGE_ONLY_RESULT = "(see attached image)"
#: A Claude Pro/Max sign-in's requests (pi's): Bearer token, these betas and headers,
#: Claude Code's identity first in the system prompt, its tools under Claude Code's names.
OAUTH_BETAS = ("claude-code-20250219", "oauth-2025-04-20")
CLAUDE_CODE_VERSION = "2.1.322"
CLAUDE_CODE_IDENTITY = "You are Claude Code, Anthropic's official CLI for Claude."
CLAUDE_CODE_TOOLS = {name.lower(): name for name in (
    "Read", "Write", "Edit", "Bash", "Grep", "Glob", "AskUserQuestion", "EnterPlanMode",
    "ExitPlanMode", "KillShell", "NotebookEdit", "Skill", "Task", "TaskOutput", "TodoWrite",
    "WebFetch", "WebSearch")}


def is_oauth_token(key: str | None) -> bool:
    """A Claude subscription's access token (pi tells them by this mark)."""
    return key is not None and bool(key) and "sk-ant-oat" in key


def claude_code_name(name: str) -> str:
    return CLAUDE_CODE_TOOLS.get(name.lower(), name)


def tool_name_from_wire(name: str, tools) -> str:
    """The caller's tool a streamed name stands for (a Claude Code name comes back in
    its casing): exact, else the one tool whose name matches ignoring case."""
    if not tools or any(t.name == name for t in tools):
        return name
    lower = name.lower()
    return next((t.name for t in tools if t.name.lower() == lower), name)
REDACTED_THINKING = "[Reasoning redacted]"

STOP_REASONS = {
    "end_turn": "stop", "max_tokens": "length", "tool_use": "toolUse", "refusal": "error",
    "pause_turn": "stop", "stop_sequence": "stop", "sensitive": "error",
    "model_context_window_exceeded": "length",
}
#: Anthropic's error types and the HTTP status they stand for (for classification).
ERROR_STATUS = {
    "invalid_request_error": 400, "authentication_error": 401, "permission_error": 403,
    "not_found_error": 404, "request_too_large": 413, "rate_limit_error": 429,
    "api_error": 500, "overloaded_error": 529,
}


def adaptive_thinking(model_id: str) -> bool:
    """Claude 4.6 and later decide how much to think (an effort, not a budget): pi 1.6's
    list of ids, which Bedrock goes by (the Anthropic API by the catalogue's compat)."""
    name = model_id.lower().replace(".", "-")
    return any(tag in name for tag in ("opus-4-6", "opus-4-7", "opus-4-8", "opus-5", "sonnet-4-6", "sonnet-5",
                                       "haiku-5", "fable-5"))


def thinks_adaptively(model: Model) -> bool:
    """An effort, not a budget: pi 1.6's ``compat.forceAdaptiveThinking`` (set in the
    catalogue for Claude 4.6 and later), or an id of the models 0.73.1 knew as adaptive."""
    return (model.compat or {}).get("forceAdaptiveThinking") is True or adaptive_thinking(model.id)


def interleaved_thinking(model: Model, options: StreamOptions) -> bool:
    """pi 1.6 asks for interleaved thinking only when a reasoning model thinks, on a
    budget (an adaptive model interleaves by itself)."""
    thinking = options.thinking_level not in (None, "off")
    return bool(model.reasoning and thinking and not thinks_adaptively(model))


def _compat(model: Model, key: str) -> bool:
    value = (model.compat or {}).get(key)
    return True if value is None else bool(value)


def cache_control(model: Model) -> dict | None:
    retention = os.environ.get("PI_CACHE_RETENTION", "short")
    if retention == "none":
        return None
    if retention == "long" and _compat(model, "supportsLongCacheRetention"):
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


def active_effort(model: Model, options: StreamOptions) -> str:
    """The effort this request asks for: its level's where the model thinks by effort,
    else "high" (pi 1.6's default)."""
    level = options.thinking_level
    return effort(model, level) if level not in (None, "off") and thinks_adaptively(model) else "high"


def effort(model: Model, level: str) -> str:
    mapped = (model.thinking_level_map or {}).get(level)
    if isinstance(mapped, str):
        return mapped
    return {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}.get(level, "high")


# ---------------------------------------------------------------- request


def _image(block: ImageContent) -> dict:
    return {"type": "image", "source": {"type": "base64", "media_type": block.mime_type, "data": block.data}}


def _result_content(content: list) -> str | list:
    if not any(isinstance(b, ImageContent) for b in content):
        return "\n".join(b.text for b in content if isinstance(b, TextContent))
    blocks = [
        {"type": "text", "text": b.text} if isinstance(b, TextContent) else _image(b)
        for b in content if isinstance(b, (TextContent, ImageContent))
    ]
    if not any(b["type"] == "text" for b in blocks):
        blocks.insert(0, {"type": "text", "text": IMAGE_ONLY_RESULT})
    return blocks


def _assistant_blocks(message: AssistantMessage, oauth: bool = False, empty_signature: bool = False) -> list[dict]:
    blocks: list[dict] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text.strip():
                blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, ThinkingContent):
            if block.redacted:
                blocks.append({"type": "redacted_thinking", "data": block.thinking_signature})
            elif not block.thinking.strip():
                continue
            elif not (block.thinking_signature or "").strip():  # unsigned (aborted): text, or as
                blocks.append({"type": "thinking", "thinking": block.thinking, "signature": ""}  # compat says
                              if empty_signature else {"type": "text", "text": block.thinking})
            else:
                blocks.append({"type": "thinking", "thinking": block.thinking, "signature": block.thinking_signature})
        elif isinstance(block, ToolCall):
            name = claude_code_name(block.name) if oauth else block.name
            blocks.append({"type": "tool_use", "id": block.id, "name": name, "input": block.arguments or {}})
    return blocks


def convert_messages(model: Model, messages: list, cache: dict | None, oauth: bool = False,
                     changes: SystemChanges | None = None, levels: dict[int, str] | None = None,
                     relaxed: bool = False) -> list[dict]:
    """The messages as Anthropic takes them; ``levels``, where given, gets the index of
    each reply that kept its thinking level (:mod:`.anthropic_effort`); ``relaxed``: no
    strict tools (:mod:`.anthropic_strict`)."""
    messages = transform_messages(messages, model, lambda id, *_: keep_id_chars(id, 64))
    params: list[dict] = []
    convert = lambda tools: convert_tools(model, tools, None, oauth, relaxed)  # noqa: E731
    rename = (lambda name: claude_code_name(name) if oauth else name)  # noqa: E731
    i = 0
    while i < len(messages):
        message = messages[i]
        if changes is not None and changes.placed:
            changes.hold(message, convert, rename)
        if isinstance(message, UserMessage):
            if isinstance(message.content, str):
                if message.content.strip():
                    params.append({"role": "user", "content": message.content})
            else:
                blocks = [
                    {"type": "text", "text": b.text} if isinstance(b, TextContent) else _image(b)
                    for b in message.content
                    if isinstance(b, ImageContent) or (isinstance(b, TextContent) and b.text.strip())
                ]
                if blocks:
                    params.append({"role": "user", "content": blocks})
        elif isinstance(message, AssistantMessage):
            blocks = _assistant_blocks(message, oauth, (model.compat or {}).get("allowEmptySignature") is True)
            if blocks:
                if changes is not None:
                    changes.flush(params)  # held system messages go just before it
                level = anthropic_effort.recorded_level(model, message) if levels is not None else None
                if levels is not None and level is not None:
                    levels[len(params)] = level
                params.append({"role": "assistant", "content": blocks})
        elif isinstance(message, ToolResultMessage):
            results = []
            while i < len(messages):
                result = messages[i]
                if not isinstance(result, ToolResultMessage):
                    break
                results.append({"type": "tool_result", "tool_use_id": result.tool_call_id,
                                "content": _result_content(result.content), "is_error": result.is_error})
                i += 1
            params.append({"role": "user", "content": results})
            continue
        i += 1
    if changes is not None:
        changes.hold(None, convert, rename)
        changes.flush(params)
    if cache and params and params[-1]["role"] in ("user", "system"):
        last = params[-1]
        if isinstance(last["content"], str):
            last["content"] = [{"type": "text", "text": last["content"], "cache_control": cache}]
        elif last["content"] and last["content"][-1]["type"] in (
                "text", "image", "tool_result", "tool_addition", "tool_removal"):
            last["content"][-1]["cache_control"] = cache
    return params


#: Keywords Anthropic's strict tool use refuses (pi 1.6's list), and the string formats it takes.
STRICT_UNSUPPORTED = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
                                "maxItems", "uniqueItems", "minContains", "maxContains", "minProperties",
                                "maxProperties"})
STRICT_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6",
                            "uuid"})


def _strict_refuses(key: str, value: Any) -> bool:
    if key in STRICT_UNSUPPORTED:
        return True
    if key == "minItems":
        return value not in (0, 1)
    return key == "format" and not (isinstance(value, str) and value in STRICT_FORMATS)


def strict_tool_schema(schema: dict) -> dict | None:
    """The strict schema Anthropic takes for a tool, or None where it has what strict mode
    refuses (the tool goes as it is, as pi 1.6's ``strict: "prefer"``)."""
    from pi_plugins.providers.strict_schema import NotStrict, strict_schema

    try:
        return strict_schema(schema, _strict_refuses)
    except NotStrict:
        return None


def convert_tools(model: Model, tools: list, cache: dict | None, oauth: bool, relaxed: bool = False) -> list[dict]:
    """Tool specs or declarations (``name``, ``description``, ``parameters``) as Anthropic
    tools, the cache marker on the last; ``relaxed``: none strict (past Claude's limits)."""
    from pi_plugins.providers.strict_schema import CONSTRAINED_TOOLS

    eager = _compat(model, "supportsEagerToolInputStreaming")
    converted = []
    for n, tool in enumerate(tools):
        name, description, schema = ((str(tool.get("name")), tool.get("description"), tool.get("parameters"))
                                     if isinstance(tool, dict) else (tool.name, tool.description, tool.parameters))
        schema = schema or {}
        item: dict[str, Any] = {"name": claude_code_name(name) if oauth else name, "description": description}
        if eager:
            item["eager_input_streaming"] = True
        strict = strict_tool_schema(schema) if (model.compat or {}).get("supportsStrictTools") is True \
            and name in CONSTRAINED_TOOLS and not relaxed else None
        if strict is not None:  # pi 1.6's compat.supportsStrictTools: pi's constrained tools go strict
            item["strict"] = True
            schema = strict
        # pi 1.6 keeps additionalProperties and shared definitions (their $refs resolve), never
        # the other root keywords (Anthropic refuses a root anyOf)
        kept = {k: schema[k] for k in ("additionalProperties", "$defs", "definitions") if k in schema}
        item["input_schema"] = {**(strict or {}), "type": "object", "properties": schema.get("properties") or {},
                                "required": schema.get("required") or [], **kept}
        if cache and n == len(tools) - 1:
            item["cache_control"] = cache
        converted.append(item)
    return converted


def build_body(model: Model, context: LlmContext, options: StreamOptions, oauth: bool = False,
               relaxed: bool = False) -> dict:
    cache = cache_control(model)
    level = options.thinking_level if options.thinking_level not in (None, "off") else None
    thinking_on = bool(model.reasoning and level)
    limit = max_tokens(model, options, context) or 0
    budget = None
    adaptive = thinks_adaptively(model)
    if thinking_on and not adaptive:
        assert level is not None  # thinking_on needs a level
        limit, budget = budget_for(level, limit, model.max_tokens, options.thinking_budgets)
        limit, budget = fit_budget_to_context(model, context, limit, budget)
    from pi_plugins.providers.anthropic_system import DEFERRED_TOOL_PLACEHOLDER, SystemChanges

    changes = SystemChanges(model, context)
    levels: dict[int, str] | None = {} if anthropic_effort.says_levels(model, options) else None
    messages = convert_messages(model, context.messages, cache, oauth, changes, levels, relaxed)
    if levels is not None:  # pi 1.6's supportsMidConvoEffort: the level in messages
        messages = anthropic_effort.with_levels(messages, levels, active_effort(model, options))
    body: dict[str, Any] = {
        "model": model.id,
        "messages": messages,
        "max_tokens": limit or model.max_tokens // 3,
        "stream": True,
    }
    marked = {"cache_control": cache} if cache else {}
    system = [{"type": "text", "text": CLAUDE_CODE_IDENTITY, **marked}] if oauth else []
    if changes.prompt:
        system.append({"type": "text", "text": changes.prompt, **marked})
    if system:
        body["system"] = system
    compat = model.compat or {}
    # pi 1.6: no temperature with thinking, for a mid-conversation-effort model, or where
    # compat.supportsTemperature is false (Claude Opus 4.7 and later)
    if options.temperature is not None and not thinking_on and compat.get("supportsMidConvoEffort") is not True \
            and compat.get("supportsTemperature", True) is not False:
        body["temperature"] = options.temperature
    tool_cache = cache if compat.get("supportsCacheControlOnTools", True) is not False else None
    if changes.native_tools:  # the leading tools stay; later changes go inline
        body["tools"] = [*convert_tools(model, changes.initial_tools, tool_cache, oauth, relaxed),
                         DEFERRED_TOOL_PLACEHOLDER]
    elif context.tools:
        body["tools"] = convert_tools(model, context.tools, tool_cache, oauth, relaxed)
    if levels is not None:  # fixed, for the cached prefix: the level is in the messages
        body["thinking"] = dict(anthropic_effort.THINKING)
        body["output_config"] = dict(anthropic_effort.OUTPUT_CONFIG)
    elif model.reasoning:
        if thinking_on and adaptive:
            body["thinking"] = {"type": "adaptive", "display": "summarized"}
            assert level is not None  # thinking_on needs a level
            body["output_config"] = {"effort": effort(model, level)}
        elif thinking_on:
            body["thinking"] = {"type": "enabled", "budget_tokens": budget or 1024, "display": "summarized"}
        else:
            body["thinking"] = {"type": "disabled"}
    if compat.get("allowedFallbackModels"):  # Anthropic's refusal fallbacks, by model id
        body["fallbacks"] = [{"model": fallback["model"]} for fallback in compat["allowedFallbackModels"]]
    return body


# ---------------------------------------------------------------- response


def fallback_priced(model: Model, answered: str | None) -> Model:
    """pi 1.6: a reply from one of ``compat.allowedFallbackModels`` costs that model's prices."""
    for fallback in (model.compat or {}).get("allowedFallbackModels") or ():
        cost = fallback.get("cost") if answered != model.id else None
        if cost and answered and fallback.get("provider") == model.provider and fallback.get("model") == answered:
            return evolve(model, id=answered, cost=ModelCost(cost.get("input", 0), cost.get("output", 0),
                                                            cost.get("cacheRead", 0), cost.get("cacheWrite", 0)))
    return model


class MessagesReader(StreamReader):
    def __init__(self, builder, model, context):
        super().__init__(builder, model, context)
        self.blocks: dict[int | None, int] = {}  # Anthropic's block index -> our content index
        self.started = False
        self.stopped = False
        self.priced = model  # the model whose prices count: a refusal fallback's where it answered

    def _usage(self, raw: dict, start: bool = False) -> None:
        usage = self.builder.message.usage
        for field, key in (("input", "input_tokens"), ("output", "output_tokens"),
                           ("cache_read", "cache_read_input_tokens"), ("cache_write", "cache_creation_input_tokens")):
            if raw.get(key) is not None:
                setattr(usage, field, raw[key])
        # pi 1.6's cacheWrite1h: the part of cacheWrite kept an hour (PI_CACHE_RETENTION=long),
        # priced at twice the input rate; said from the start, then as a delta reports it
        long_writes = (raw.get("cache_creation") or {}).get("ephemeral_1h_input_tokens")
        if start or long_writes is not None:
            usage.extra["cacheWrite1h"] = long_writes or 0
        usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
        calculate_cost(self.priced, usage)

    def on_event(self, event) -> Iterable:
        if event.event == "error":
            raise _stream_error(event.data)
        if event.event == "ping" or not event.data:
            return ()
        data = json_data(event)
        kind = data.get("type") if isinstance(data, dict) else None
        if kind == "error":
            raise _stream_error(event.data)
        builder = self.builder
        if kind == "message_start":
            self.started = True
            message = data.get("message") or {}
            builder.message.response_id = message.get("id")
            self.priced = fallback_priced(self.model, message.get("model"))
            self._usage(message.get("usage") or {}, start=True)
        elif kind == "content_block_start":
            block = data.get("content_block") or {}
            btype = block.get("type")
            event_out: AssistantMessageEvent
            if btype == "text":
                event_out = builder.text_start()
            elif btype == "thinking":
                event_out = builder.thinking_start(signature="")
            elif btype == "redacted_thinking":
                event_out = builder.thinking_start(signature=block.get("data"), text=REDACTED_THINKING, redacted=True)
            elif btype in ("tool_use", "server_tool_use"):
                name = tool_name_from_wire(block.get("name", ""), self.context.tools)
                event_out = builder.toolcall_start(block.get("id", ""), name)
                self.blocks[data.get("index")] = len(builder.message.content) - 1
                initial = block.get("input")
                if isinstance(initial, dict) and initial:
                    return [event_out, builder.toolcall_delta(json.dumps(initial, ensure_ascii=False))]
                return [event_out]
            else:
                return ()
            self.blocks[data.get("index")] = len(builder.message.content) - 1
            return [event_out]
        elif kind == "content_block_delta":
            index = self.blocks.get(data.get("index"))
            delta = data.get("delta") or {}
            dtype = delta.get("type")
            if index is None:
                return ()
            block = builder.message.content[index]
            if dtype == "text_delta" and isinstance(block, TextContent):
                return [builder.text_delta(delta.get("text", ""), index)]
            if dtype == "thinking_delta" and isinstance(block, ThinkingContent):
                return [builder.thinking_delta(delta.get("thinking", ""), index)]
            if dtype == "input_json_delta" and getattr(block, "type", None) == "toolCall":
                piece = delta.get("partial_json", "")
                return [builder.toolcall_delta(piece, index)] if piece else ()
            if dtype == "signature_delta" and isinstance(block, ThinkingContent):
                block.thinking_signature = (block.thinking_signature or "") + delta.get("signature", "")
        elif kind == "content_block_stop":
            index = self.blocks.pop(data.get("index"), None)
            if index is not None:
                end = builder.close(index)
                return [end] if end is not None else ()
        elif kind == "message_delta":
            reason = (data.get("delta") or {}).get("stop_reason")
            if reason:
                self.raw_stop = builder.message.raw_stop_reason = reason
                if reason not in STOP_REASONS:
                    raise StreamError(f"Unhandled stop reason: {reason}")
                self.stop_reason = STOP_REASONS[reason]
            thinking = ((data.get("usage") or {}).get("output_tokens_details") or {}).get("thinking_tokens")
            if thinking is not None:  # a subset of output, where Anthropic reports it
                builder.message.usage.reasoning = thinking
            self._usage(data.get("usage") or {})
        elif kind == "message_stop":
            self.stopped = True
        return ()

    def end(self) -> Iterable:
        if not self.stopped:
            raise truncated("message_stop")
        events = self.builder.close_all()
        if self.stop_reason == "error":
            raise StreamError(f"The model stopped with stop reason {getattr(self, 'raw_stop', 'error')!r}")
        return events


def _stream_error(data: str) -> StreamError:
    try:
        parsed = json.loads(data)
    except ValueError:
        return StreamError(data or "error event without details", classify(None, data))
    error = parsed.get("error", parsed) if isinstance(parsed, dict) else {}
    error = error if isinstance(error, dict) else {"message": str(error)}
    message = error.get("message") or data
    etype = error.get("type") or ""
    text = f"{message} ({etype})" if etype and etype not in message else message
    failure = classify(ERROR_STATUS.get(etype), text)
    return StreamError(data, failure, as_said=True)  # pi 1.6 shows the event's data as it came


class AnthropicProvider(StrictToolLimits, ThreadedMessages, SseProvider):
    api = API

    def http_error_text(self, where: str, status: int, reason: str, message: str, parsed: Any,
                        text: str = "") -> str:
        """pi 1.6's words for a failed request (its SDK's): ``503 {json}``."""
        from pi_plugins.providers.failures import sdk_error_text

        return sdk_error_text(status, parsed, message, inner=False, colon=False)

    async def stream(self, model: Model, context: LlmContext, options: StreamOptions) -> AsyncIterator[Any]:
        from pi_plugins.providers.anthropic_federation import TOKENS, FederationError

        try:  # workload identity federation: a token first when the request needs one
            await TOKENS.ensure(model, options)
        except FederationError as exc:
            yield MessageBuilder(api=model.api, provider=model.provider, model=model.id).error(str(exc))
            return
        level = active_effort(model, options) if anthropic_effort.says_levels(model, options) else None
        async for event in super().stream(model, context, options):
            message = getattr(event, "partial", None) or getattr(event, "message", None) or getattr(event, "error", None)
            if level is not None and message is not None:  # kept on the answer, as pi 1.6 keeps it
                message.extra.setdefault("providerThinkingLevel", level)
            yield event

    def build_request(self, model: Model, context: LlmContext, options: StreamOptions) -> HttpRequest:
        from pi_plugins.providers.anthropic_federation import TOKENS
        from pi_plugins.providers.anthropic_system import DEFERRED_TOOL_PLACEHOLDER, INLINE_TOOLS_BETA

        betas = []
        if context.tools and not _compat(model, "supportsEagerToolInputStreaming"):
            betas.append(FINE_GRAINED_TOOL_STREAMING_BETA)
        if interleaved_thinking(model, options):
            betas.append(INTERLEAVED_THINKING_BETA)
        if (model.compat or {}).get("allowedFallbackModels"):
            betas.append(SERVER_SIDE_FALLBACK_BETA)
        betas += anthropic_effort.betas(model)
        copilot = is_copilot(model)
        oauth = not copilot and not is_gateway(model) and is_oauth_token(options.api_key)
        body = build_body(model, context, options, oauth, self.relaxed(options))
        self.sent_strict(options, body)
        if DEFERRED_TOOL_PLACEHOLDER in body.get("tools", ()):  # tool changes go inline
            betas.append(INLINE_TOOLS_BETA)
        headers = {"anthropic-version": VERSION, "accept": "application/json", "content-type": "application/json"}
        if copilot:  # GitHub Copilot's Claude: its token as Bearer
            headers["anthropic-dangerous-direct-browser-access"] = "true"
            if options.api_key:
                headers["authorization"] = f"Bearer {options.api_key}"
        elif oauth:  # a Claude Pro/Max sign-in: as pi sends it
            headers.update({"authorization": f"Bearer {options.api_key}",
                            "anthropic-dangerous-direct-browser-access": "true",
                            "anthropic-beta": ",".join((*OAUTH_BETAS, *betas)),
                            "user-agent": f"claude-cli/{CLAUDE_CODE_VERSION}", "x-app": "cli"})
        elif is_gateway(model):  # Cloudflare's gateway: its own header, as pi's Anthropic client sends it
            headers["anthropic-dangerous-direct-browser-access"] = "true"
        elif options.api_key:
            headers["x-api-key"] = options.api_key
        if betas and not oauth:
            headers["anthropic-beta"] = ",".join(betas)
        headers.update(model.headers or {})
        headers.update(options.headers or {})
        if not (copilot or oauth or is_gateway(model)):
            TOKENS.headers(model, options, headers)
        if is_gateway(model):
            headers = gateway_headers(headers, options.api_key, ("x-api-key", "authorization"),
                                      model.headers, options.headers)
        request = HttpRequest(join_url(model.base_url, "/v1/messages"), headers, body)
        if copilot:
            adapt_for_copilot(model, context, options, request)
        return request

    def reader(self, builder, model, context) -> StreamReader:
        return MessagesReader(builder, model, context)


@hookimpl
def register_providers():
    return [AnthropicProvider()]


@hookimpl
def session_shutdown(ctx):
    """A session that is left forgets where its message thread was (pi 1.6's session
    cleanup), so the table holds live sessions only."""
    session_id = getattr(ctx, "session_id", None)
    if session_id:
        AnthropicProvider.threads.forget(session_id)
        AnthropicProvider.over_limits.forget(session_id)

