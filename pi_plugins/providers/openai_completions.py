"""OpenAI Chat Completions (``openai-completions``), and every server that speaks it:
Ollama, vLLM, llama.cpp's server, LM Studio, OpenRouter, Groq, DeepSeek, Mistral, xAI…

Such servers differ in small ways. The differences are settings (``compat``), detected
from the provider and base URL and overridable per provider or model in models.json
(pi's names, plus two of ours):

``supportsStore``, ``supportsDeveloperRole``, ``supportsReasoningEffort``,
``supportsUsageInStreaming``, ``maxTokensField`` (``max_completion_tokens`` or
``max_tokens``), ``requiresToolResultName``, ``requiresAssistantAfterToolResult``,
``requiresThinkingAsText``, ``requiresReasoningContentOnAssistantMessages``,
``thinkingFormat`` (openai, openrouter, deepseek, zai, qwen, qwen-chat-template),
``cacheControlFormat`` (anthropic), ``supportsStrictMode``, ``openRouterRouting``,
``vercelGatewayRouting``, ``sendSessionAffinityHeaders`` (on for OpenRouter) with
``sessionAffinityFormat`` (``openai``, ``openrouter`` or another word), and pi 1.6's
``requiresNonNullAssistantContent`` (``""`` instead of ``null`` for an assistant message
of tool calls only), ``requiresToolsWithToolHistory`` (send ``"tools": []`` when no tool
is on but the history has tool calls; pi 1.6 leaves the field out, as vLLM 0.20+ refuses
an empty list) and ``promptCacheKeyMode`` (``auto``: ``prompt_cache_key`` to
api.openai.com only; ``enabled``: to any server; ``disabled``: never);
ours: ``supportsNullAssistantContent`` (false: send ``""`` instead of ``null`` beside
tool calls, which llama.cpp's server needs), ``supportsTextContentParts`` (false: a
user message of text only goes as one string, not an array of parts, which some local
chat templates cannot read), ``supportsTools`` (false: send no tools, for models whose
server says they take none) and ``toolCallIdFormat`` (``mistral``: nine letters and
digits).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

from pi_core import hookimpl
from pi_core.app.tokens import usage_tokens
from pi_core.protocol.messages import (
    AssistantMessage,
    Failure,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from pi_core.protocol.model import Model, calculate_cost
from pi_core.protocol.provider import LlmContext, StreamOptions
from pi_core.protocol.stream import AssistantMessageEvent
from pi_plugins.providers.cloudflare import gateway_headers, is_gateway
from pi_plugins.providers.completions_compat import compat_fields, template_thinking
from pi_plugins.providers.completions_system import changes_in_place, function_tools, request_tools
from pi_plugins.providers.completions_usage import estimate_usage, map_finish_reason, parse_usage
from pi_plugins.providers.copilot import adapt as adapt_for_copilot
from pi_plugins.providers.copilot import is_copilot
from pi_plugins.providers.failures import classify
from pi_plugins.providers.grammar_tools import RawInput, call_input, input_properties
from pi_plugins.providers.http import (
    HttpRequest,
    SseProvider,
    StreamError,
    StreamReader,
    join_url,
    json_data,
    truncated,
)
from pi_plugins.providers.request_body import json_text
from pi_plugins.providers.thinking import level_value, max_tokens, reasoning_level, sampling_params
from pi_plugins.providers.transform import blank, keep_id_chars, short_hash, transform_messages

API = "openai-completions"
TOOL_RESULT_BRIDGE = "I have processed the tool results."
TOOL_IMAGES_INTRO = "Attached image(s) from tool result:"
IMAGE_ONLY_RESULT = "(see attached image)"
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")


def _takes_max_tokens(provider: str, url: str) -> bool:
    """Hosts pi 1.6 sends the output limit to as ``max_tokens`` (besides Moonshot, the
    Cloudflare gateway and Mistral): they refuse ``max_completion_tokens``."""
    return ("chutes.ai" in url or provider == "deepseek" or "deepseek.com" in url.lower()
            or provider in ("zai", "zai-coding-cn", "together", "nvidia", "ant-ling")
            or any(host in url for host in ("api.z.ai", "open.bigmodel.cn", "api.together.ai", "api.together.xyz",
                                            "integrate.api.nvidia.com", "api.ant-ling.com")))


def detect_compat(model: Model) -> dict[str, Any]:
    """The settings for known providers and servers, by provider name or base URL."""
    provider, url = model.provider, model.base_url
    zai = provider == "zai" or "api.z.ai" in url
    moonshot = provider in ("moonshotai", "moonshotai-cn") or "api.moonshot." in url
    cf_workers = provider == "cloudflare-workers-ai" or "api.cloudflare.com" in url
    cf_gateway = provider == "cloudflare-ai-gateway" or "gateway.ai.cloudflare.com" in url
    grok = provider == "xai" or "api.x.ai" in url
    deepseek = provider == "deepseek" or "deepseek.com" in url
    mistral = provider == "mistral" or "api.mistral.ai" in url
    non_standard = (
        provider == "cerebras" or "cerebras.ai" in url or grok or "chutes.ai" in url
        or "deepseek.com" in url or zai or moonshot or provider == "opencode" or "opencode.ai" in url
        or cf_workers or cf_gateway or mistral
    )
    openrouter = provider == "openrouter" or "openrouter.ai" in url
    return {
        "supportsStore": not non_standard,
        "supportsDeveloperRole": not non_standard,
        "supportsReasoningEffort": not (grok or zai or moonshot or cf_gateway or mistral),
        "supportsUsageInStreaming": not mistral,
        "maxTokensField": "max_tokens" if _takes_max_tokens(provider, url) or moonshot or cf_gateway or mistral
        else "max_completion_tokens",
        "requiresToolResultName": False,
        "requiresAssistantAfterToolResult": False,
        "requiresThinkingAsText": False,
        "requiresReasoningContentOnAssistantMessages": deepseek,
        "thinkingFormat": "deepseek" if deepseek else "zai" if zai else "openrouter" if openrouter else "openai",
        "openRouterRouting": {},
        "vercelGatewayRouting": {},
        "supportsStrictMode": False,  # pi 1.6: OpenAI compatibility is no promise of strict tools
        "cacheControlFormat": "anthropic" if provider == "openrouter" and model.id.startswith("anthropic/") else None,
        "sendSessionAffinityHeaders": openrouter,  # pi 1.6: OpenRouter's x-session-id
        "sessionAffinityFormat": "openrouter" if openrouter else "openai",
        "supportsNullAssistantContent": True,
        "supportsTextContentParts": True,
        "supportsTools": True,
        "toolCallIdFormat": "mistral" if mistral else None,
    }


def resolve_compat(model: Model) -> dict[str, Any]:
    compat = detect_compat(model)
    for key, value in (model.compat or {}).items():
        if value is not None:
            compat[key] = value
    return compat


# ---------------------------------------------------------------- request


def _tool_id_normalizer(model: Model, compat: dict):
    if compat.get("toolCallIdFormat") == "mistral":
        taken: dict[str, str] = {}
        owners: dict[str, str] = {}

        def mistral(id: str, *_: Any) -> str:
            if id in taken:
                return taken[id]
            attempt = 0
            while True:
                plain = "".join(c for c in id if c.isascii() and c.isalnum())
                if attempt == 0 and len(plain) == 9:
                    candidate = plain
                else:
                    seed = (plain or id) if attempt == 0 else f"{plain or id}:{attempt}"
                    candidate = short_hash(seed)[:9]
                if owners.get(candidate, id) == id:
                    taken[id], owners[candidate] = candidate, id
                    return candidate
                attempt += 1

        return mistral

    def normalize(id: str, *_: Any) -> str:
        if "|" in id:  # an OpenAI Responses id: "call_id|item_id"
            return keep_id_chars(id.split("|")[0], 40)
        if model.provider == "openai" and len(id) > 40:
            return id[:40]
        return id

    return normalize


def _image_url(block: ImageContent) -> dict:
    return {"type": "image_url", "image_url": {"url": f"data:{block.mime_type};base64,{block.data}"}}


def convert_messages(model: Model, context: LlmContext, compat: dict) -> list[dict]:
    messages = transform_messages(context.messages, model, _tool_id_normalizer(model, compat))
    params: list[dict] = []
    role = "developer" if model.reasoning and compat["supportsDeveloperRole"] else "system"
    prompt, updates = changes_in_place(context, compat, role)
    if prompt:
        params.append({"role": role, "content": prompt})
    bridge = compat["requiresAssistantAfterToolResult"]
    text_parts = compat["supportsTextContentParts"]
    assistant = _assistant_converter(model, compat, input_properties(context.tools, compat))
    last_role = None
    i = 0
    while i < len(messages):
        message = messages[i]
        if updates and id(message) in updates:
            params += updates.pop(id(message))
        if bridge and last_role == "toolResult" and isinstance(message, UserMessage):
            params.append({"role": "assistant", "content": TOOL_RESULT_BRIDGE})
        if type(message) is AssistantMessage:  # half of a long history: looked at first
            converted = assistant(message)
            if converted is not None:
                params.append(converted)
        elif isinstance(message, UserMessage):
            content = message.content
            if isinstance(content, str):
                params.append({"role": "user", "content": content})
            elif len(content) == 1 and type(content[0]) is TextContent:  # the usual prompt
                text = content[0].text
                params.append({"role": "user", "content": [{"type": "text", "text": text}]
                               if text_parts else text})
            else:
                parts = [
                    {"type": "text", "text": b.text} if isinstance(b, TextContent) else _image_url(b)
                    for b in message.content if isinstance(b, (TextContent, ImageContent))
                ]
                if parts and not compat["supportsTextContentParts"] and all(p["type"] == "text" for p in parts):
                    params.append({"role": "user", "content": "\n".join(p["text"] for p in parts)})
                elif parts:
                    params.append({"role": "user", "content": parts})
        elif isinstance(message, AssistantMessage):
            converted = assistant(message)
            if converted is not None:
                params.append(converted)
        elif isinstance(message, ToolResultMessage):
            images: list[dict] = []
            named, accepts_images = compat["requiresToolResultName"], model.accepts_images
            while i < len(messages):
                result = messages[i]
                if not isinstance(result, ToolResultMessage):
                    break
                blocks = result.content
                first = blocks[0] if len(blocks) == 1 else None
                text = (first.text if type(first) is TextContent
                        else "\n".join(b.text for b in blocks if isinstance(b, TextContent)))
                item = {"role": "tool", "content": text or IMAGE_ONLY_RESULT, "tool_call_id": result.tool_call_id}
                if named and result.tool_name:
                    item["name"] = result.tool_name
                params.append(item)
                if accepts_images:
                    images += [_image_url(b) for b in result.content if isinstance(b, ImageContent)]
                i += 1
            if images:
                if bridge:
                    params.append({"role": "assistant", "content": TOOL_RESULT_BRIDGE})
                params.append({"role": "user", "content": [{"type": "text", "text": TOOL_IMAGES_INTRO}, *images]})
                last_role = "user"
            else:
                last_role = "toolResult"
            continue
        last_role = message.role
        i += 1
    params += [{"role": role, "content": text} for texts in updates.values() for text in texts]
    return params


def _assistant_converter(model: Model, compat: dict, grammar_inputs: dict[str, str] | None = None):
    """The converter of assistant messages for ``model``, its settings read once (a
    resumed history has thousands of these messages); ``grammar_inputs``: the grammar
    tools' input properties, whose calls go back as ``custom`` ones."""
    empty = None if (compat["supportsNullAssistantContent"] and not compat["requiresAssistantAfterToolResult"]
                     and not compat.get("requiresNonNullAssistantContent")) else ""
    thinking_as_text = compat["requiresThinkingAsText"]
    reasoning_content = compat["requiresReasoningContentOnAssistantMessages"] and model.reasoning

    def convert(message: AssistantMessage) -> dict | None:
        converted: dict[str, Any] = {"role": "assistant", "content": empty}
        texts: list[str] = []
        thinking: list[ThinkingContent] = []
        calls: list[ToolCall] = []
        for b in message.content:  # one pass, the common classes tested first
            if type(b) is TextContent or (type(b) is not ToolCall and isinstance(b, TextContent)):
                if not blank(value := b.text):
                    texts.append(value)
            elif type(b) is ToolCall or isinstance(b, ToolCall):
                calls.append(b)
            elif isinstance(b, ThinkingContent):
                if not blank(b.thinking):
                    thinking.append(b)
        if thinking and thinking_as_text:
            converted["content"] = [{"type": "text", "text": "\n\n".join(b.thinking for b in thinking)},
                                    *({"type": "text", "text": t} for t in texts)]
        else:
            if texts:
                converted["content"] = texts[0] if len(texts) == 1 else "".join(texts)
            signature = thinking[0].thinking_signature if thinking else None
            if signature:
                converted[signature] = "\n".join(b.thinking for b in thinking)
        if calls:
            converted["tool_calls"] = [
                {"id": c.id, "type": "custom", "custom": {"name": c.name, "input": call_input(c, grammar_inputs[c.name])}}
                if grammar_inputs and c.name in grammar_inputs else
                {"id": c.id, "type": "function",
                 "function": {"name": c.name, "arguments": json_text(c.arguments)}}
                for c in calls
            ]
            details = []
            for call in calls:
                if call.thought_signature:
                    try:
                        details.append(json.loads(call.thought_signature))
                    except ValueError:
                        pass
            if details:
                converted["reasoning_details"] = details
        if reasoning_content and "reasoning_content" not in converted:
            converted["reasoning_content"] = ""
        if not converted["content"] and not calls:
            return None
        return converted

    return convert


def _has_tool_history(context: LlmContext) -> bool:
    return any(
        isinstance(m, ToolResultMessage) or (isinstance(m, AssistantMessage) and m.tool_calls)
        for m in context.messages
    )


def prompt_cache_key(model: Model, options: StreamOptions, compat: dict) -> str | None:
    """The session id as ``prompt_cache_key`` (at most 64 characters, as pi 1.6 cuts it),
    where ``compat.promptCacheKeyMode`` allows: ``auto`` sends it to api.openai.com, or
    with long cache retention to a server marked ``supportsLongCacheRetention``."""
    mode = compat.get("promptCacheKeyMode") or "auto"
    if mode == "disabled" or not options.session_id:
        return None
    long_retention = os.environ.get("PI_CACHE_RETENTION") == "long" and compat.get("supportsLongCacheRetention")
    if mode == "enabled" or "api.openai.com" in model.base_url or long_retention:
        return options.session_id[:64]
    return None


def session_affinity_headers(session_id: str, style: str | None) -> dict[str, str]:
    """The headers that keep a session on one backend (``compat.sessionAffinityFormat``,
    as pi 1.6: OpenRouter's own ``x-session-id``, else the generic pair and, in the
    ``openai`` style, ``session_id``)."""
    if style == "openrouter":
        return {"x-session-id": session_id}
    generic = {"x-client-request-id": session_id, "x-session-affinity": session_id}
    return {"session_id": session_id, **generic} if style == "openai" else generic


def build_body(model: Model, context: LlmContext, options: StreamOptions, compat: dict) -> dict:
    body: dict[str, Any] = {"model": compat.get("requestModel") or model.id, "messages": convert_messages(model, context, compat), "stream": True}
    cache_key = prompt_cache_key(model, options, compat)
    if cache_key:
        body["prompt_cache_key"] = cache_key
    if compat["supportsUsageInStreaming"] is not False:
        body["stream_options"] = {"include_usage": True}
    if compat["supportsStore"]:
        body["store"] = False
    limit = max_tokens(model, options, context)
    if limit:
        body[compat["maxTokensField"]] = limit
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if compat["supportsTools"] is False:
        pass  # the server said this model takes no tools: a list would be refused
    elif tools := request_tools(context, compat):
        body["tools"] = function_tools(tools, compat)
    elif compat.get("requiresToolsWithToolHistory") and _has_tool_history(context):
        body["tools"] = []  # some proxies in front of Anthropic need it (pi 1.6: only when asked)
    if compat.get("cacheControlFormat") == "anthropic":
        _add_cache_control(body)
    level = reasoning_level(model, options)
    fmt = compat["thinkingFormat"]
    if model.reasoning and fmt in ("zai", "qwen"):
        body["enable_thinking"] = level is not None
    elif model.reasoning and fmt == "qwen-chat-template":
        body["chat_template_kwargs"] = {"enable_thinking": level is not None, "preserve_thinking": True}
    elif model.reasoning and fmt == "deepseek":
        body["thinking"] = {"type": "enabled" if level else "disabled"}
        if level:
            body["reasoning_effort"] = level_value(model, level)
    elif model.reasoning and fmt == "openrouter":
        if level:
            body["reasoning"] = {"effort": level_value(model, level)}
        elif (model.thinking_level_map or {}).get("off", "none") is not None:
            body["reasoning"] = {"effort": (model.thinking_level_map or {}).get("off") or "none"}
    elif model.reasoning and fmt in ("chat-template", "baseten"):
        template_thinking(body, model, options, compat, level)
    elif model.reasoning and compat["supportsReasoningEffort"]:
        if level:
            body["reasoning_effort"] = level_value(model, level)
        elif isinstance((model.thinking_level_map or {}).get("off"), str):
            body["reasoning_effort"] = (model.thinking_level_map or {})["off"]
    compat_fields(body, model, options, compat, level)  # tool_stream, priority, a thinking budget
    # pi 1.6 sends the routing wherever the compat sets it (0.73 only to their hosts)
    routing = (model.compat or {}).get("openRouterRouting")
    if isinstance(routing, dict):  # as written, zdr and all
        body["provider"] = routing
    gateway = (model.compat or {}).get("vercelGatewayRouting") or {}
    if gateway.get("only") or gateway.get("order"):
        body["providerOptions"] = {"gateway": {k: gateway[k] for k in ("only", "order") if gateway.get(k)}}
    body.update(sampling_params(model, options) or {})  # last: they win over the named fields (pi 1.6)
    return body


def _add_cache_control(body: dict) -> None:
    """Anthropic-style cache markers (OpenRouter's Anthropic models): on the system
    prompt, the last tool and the last user or assistant text."""
    marker = {"type": "ephemeral"}

    def mark(message: dict) -> bool:
        content = message.get("content")
        if isinstance(content, str) and content:
            message["content"] = [{"type": "text", "text": content, "cache_control": marker}]
            return True
        if isinstance(content, list):
            for part in reversed(content):
                if part.get("type") == "text":
                    part["cache_control"] = marker
                    return True
        return False

    for message in body["messages"]:
        if message["role"] in ("system", "developer"):
            mark(message)
            break
    if body.get("tools"):
        body["tools"][-1]["cache_control"] = marker
    for message in reversed(body["messages"]):
        if message["role"] in ("user", "assistant") and mark(message):
            break


# ---------------------------------------------------------------- response


class CompletionsReader(StreamReader):
    def __init__(self, builder, model, context):
        super().__init__(builder, model, context)
        self.text_index: int | None = None
        self.thinking_index: int | None = None
        self.calls_by_index: dict[int, int] = {}
        self.calls_by_id: dict[str, int] = {}
        self.finished = False
        self.error_message: str | None = None
        compat = resolve_compat(model)
        #: A discovered local server: ``[DONE]`` alone may end an answer it dropped.
        self.needs_finish_reason = bool(compat.get("requiresFinishReason"))
        #: pi 1.6's ``supportsFinishReason`` (on unless said): an answer without one is broken
        self.expects_finish_reason = compat.get("supportsFinishReason", True) is not False
        self.estimate_usage = bool(compat.get("estimateMissingUsage"))
        self.saw_finish = self.saw_usage = False
        #: grammar tools' input properties, and the raw input of each custom call (by content index)
        self.grammar_inputs = input_properties(context.tools, compat)
        self.raw: dict[int, RawInput] = {}

    def on_event(self, event) -> Iterable:
        if event.data.strip() == "[DONE]":
            self.finished = self.saw_finish or not self.needs_finish_reason
            return ()
        chunk = json_data(event)
        if not isinstance(chunk, dict):
            return ()
        if "error" in chunk and not chunk.get("choices"):
            error = chunk["error"]
            message = error.get("message", json.dumps(error)) if isinstance(error, dict) else str(error)
            code = error.get("code") if isinstance(error, dict) else None
            raise StreamError(message, classify(code if isinstance(code, int) else None, message), as_said=True)
        builder = self.builder
        message = builder.message
        if not message.response_id and chunk.get("id"):
            message.response_id = chunk["id"]
        if chunk.get("usage"):
            message.usage = parse_usage(chunk["usage"], self.model)
            self.saw_usage = True
        choices = chunk.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices else None
        if not isinstance(choice, dict):
            return ()
        if not chunk.get("usage") and choice.get("usage"):
            message.usage = parse_usage(choice["usage"], self.model)
            self.saw_usage = True
        events: list[AssistantMessageEvent] = []
        if choice.get("finish_reason"):
            self.finished = self.saw_finish = True
            message.raw_stop_reason = choice["finish_reason"]
            self.stop_reason, self.error_message = map_finish_reason(choice["finish_reason"])
        delta = choice.get("delta") or {}
        content = delta.get("content")
        if isinstance(content, str) and content:
            if self.text_index is None:
                events.append(builder.text_start())
                self.text_index = len(message.content) - 1
            events.append(builder.text_delta(content, self.text_index))
        for field in REASONING_FIELDS:
            value = delta.get(field)
            if isinstance(value, str) and value:
                if self.thinking_index is None:
                    events.append(builder.thinking_start(signature=field))
                    self.thinking_index = len(message.content) - 1
                events.append(builder.thinking_delta(value, self.thinking_index))
                break
        for call in delta.get("tool_calls") or ():
            events.extend(self._tool_call(call))
        for detail in delta.get("reasoning_details") or ():
            if isinstance(detail, dict) and detail.get("type") == "reasoning.encrypted" and detail.get("id") and detail.get("data"):
                for block in message.content:
                    if isinstance(block, ToolCall) and block.id == detail["id"]:
                        block.thought_signature = json.dumps(detail, separators=(",", ":"))
        return events

    def _tool_call(self, call: dict) -> list:
        builder = self.builder
        position = call.get("index")
        function = call.get("function") or {}
        index = self.calls_by_index.get(position) if isinstance(position, int) else None
        if index is not None and len(call) <= 2 and len(function) == 1:  # the hot path: more arguments
            arguments = function.get("arguments")
            return [builder.toolcall_delta(arguments, index)] if isinstance(arguments, str) and arguments else []
        events: list[AssistantMessageEvent] = []
        custom = call.get("custom") if isinstance(call.get("custom"), dict) and not function else None
        name = function.get("name") or (custom or {}).get("name") or ""
        if index is None and call.get("id"):
            index = self.calls_by_id.get(call["id"])
        if index is None:
            events.append(builder.toolcall_start(call.get("id") or "", name))
            index = len(builder.message.content) - 1
            if isinstance(position, int):
                self.calls_by_index[position] = index
        block = builder.message.content[index]
        assert isinstance(block, ToolCall)  # calls_by_index and calls_by_id point at calls
        if call.get("id"):
            self.calls_by_id[call["id"]] = index
            if not block.id:
                block.id = call["id"]
        if not block.name and name:
            block.name = name
        if custom is not None:  # a grammar tool's call: its raw input is the one argument
            raw = self.raw.setdefault(index, RawInput(self.grammar_inputs.get(block.name, "input")))
            piece = raw.add(custom["input"]) if isinstance(custom.get("input"), str) else None
            return [*events, builder.toolcall_delta(piece, index)] if piece else events
        arguments = function.get("arguments")
        if isinstance(arguments, str) and arguments:
            events.append(builder.toolcall_delta(arguments, index))
        elif isinstance(arguments, dict):  # a few servers send an object
            events.append(builder.toolcall_delta(json.dumps(arguments), index))
        return events

    def end(self) -> Iterable:
        if not self.finished:
            raise truncated("the response was complete")
        if self.expects_finish_reason and not self.saw_finish:
            raise StreamError("Stream ended without finish_reason", Failure(kind="retryable"))
        events: list = [self.builder.toolcall_delta(piece, index) for index, raw in self.raw.items()
                        if (piece := raw.close()) is not None]
        events += self.builder.close_all()
        if self.stop_reason == "error":
            raise StreamError(self.error_message or "Provider returned an error stop reason")
        if self.stop_reason in (None, "stop") and self.builder.message.tool_calls:
            self.stop_reason = "toolUse"
        message = self.builder.message
        if self.estimate_usage and not self.saw_usage and not usage_tokens(message.usage):
            context = self.context
            message.usage = calculate_cost(self.model, estimate_usage(
                context.system_prompt, context.messages, context.tools, message))
        return events


class OpenAICompletionsProvider(SseProvider):
    api = API

    def http_error_text(self, where: str, status: int, reason: str, message: str, parsed: Any,
                        text: str = "") -> str:
        """pi 1.6's words for a failed request (its SDK's): ``503: {json}``."""
        from pi_plugins.providers.failures import sdk_error_text

        return sdk_error_text(status, parsed, message, inner=True, colon=True)

    def build_request(self, model: Model, context: LlmContext, options: StreamOptions) -> HttpRequest:
        compat = resolve_compat(model)
        headers = {"accept": "application/json", "content-type": "application/json"}
        if options.api_key:
            headers["authorization"] = f"Bearer {options.api_key}"
        headers.update(model.headers or {})
        if options.session_id and compat["sendSessionAffinityHeaders"]:
            headers.update(session_affinity_headers(options.session_id, compat.get("sessionAffinityFormat")))
        headers.update(options.headers or {})
        if is_gateway(model):
            headers = gateway_headers(headers, options.api_key, ("authorization",), model.headers, options.headers)
        body = build_body(model, context, options, compat)
        base = model.base_url
        if model.provider == "azure":  # Foundry chat completions: the resource and deployment as Azure's Responses
            from pi_plugins.providers.azure_openai import base_url as azure_base_url
            from pi_plugins.providers.azure_openai import deployment

            base, body["model"] = azure_base_url(model, options), deployment(model, options)
        request = HttpRequest(join_url(base, "/chat/completions"), headers, body)
        if is_copilot(model):
            adapt_for_copilot(model, context, options, request)
        return request

    def reader(self, builder, model, context) -> StreamReader:
        return CompletionsReader(builder, model, context)


@hookimpl
def register_providers():
    return [OpenAICompletionsProvider()]
