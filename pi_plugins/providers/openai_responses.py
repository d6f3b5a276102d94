"""OpenAI Responses (``openai-responses``): GPT-5 and o-series models.

Reasoning arrives as summaries and is kept with its whole encrypted reasoning item as the
thinking signature (requests ask for ``reasoning.encrypted_content`` and ``store: false``),
so it can be sent back unchanged. Text keeps its message id (``textSignature``) and tool
calls are ``call_id|item_id``. ``compat``: ``sendSessionIdHeader``,
``supportsLongCacheRetention``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from pi_core import hookimpl
from pi_core.protocol.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from pi_core.protocol.model import Model, calculate_cost
from pi_core.protocol.provider import LlmContext, StreamOptions
from pi_core.protocol.stream import AssistantMessageEvent
from pi_plugins.providers.cloudflare import gateway_headers, is_gateway
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
from pi_plugins.providers.kit import parse_arguments
from pi_plugins.providers.request_body import json_text
from pi_plugins.providers.thinking import level_value, max_tokens, reasoning_level, sampling_params
from pi_plugins.providers.transform import short_hash, transform_messages

if TYPE_CHECKING:
    from pi_plugins.providers.responses_system import SystemItems

API = "openai-responses"
#: Providers whose tool-call ids carry a Responses item id worth keeping.
ITEM_ID_PROVIDERS = frozenset({"openai", "openai-codex", "opencode"})
IMAGE_ONLY_RESULT = "(see attached image)"
#: The Responses API refuses a ``max_output_tokens`` below 16.
MIN_OUTPUT_TOKENS = 16
STATUS_STOP = {"completed": "stop", "incomplete": "length", "failed": "error", "cancelled": "error",
               "in_progress": "stop", "queued": "stop"}


def _id_part(part: str) -> str:
    clean = "".join(c if c.isascii() and (c.isalnum() or c in "_-") else "_" for c in part)[:64]
    return clean.rstrip("_")


def _id_normalizer(model: Model):
    def normalize(id: str, _target: Model, source: AssistantMessage) -> str:
        if model.provider not in ITEM_ID_PROVIDERS or "|" not in id:
            return _id_part(id)
        call_id, item_id = id.split("|", 1)
        foreign = source.provider != model.provider or source.api != model.api
        item = f"fc_{short_hash(item_id)}"[:64] if foreign else _id_part(item_id)
        if not item.startswith("fc_"):
            item = _id_part(f"fc_{item}")
        return f"{_id_part(call_id)}|{item}"

    return normalize


def _text_signature(signature: str | None) -> tuple[str | None, str | None]:
    """(message id, phase) from a text block's signature (JSON v1, or a plain id)."""
    if not signature:
        return None, None
    if signature.startswith("{"):
        try:
            parsed = json.loads(signature)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("v") == 1 and isinstance(parsed.get("id"), str):
            phase = parsed.get("phase")
            return parsed["id"], phase if phase in ("commentary", "final_answer") else None
    return signature, None


def _input_image(block: ImageContent) -> dict:
    return {"type": "input_image", "detail": "auto", "image_url": f"data:{block.mime_type};base64,{block.data}"}


def convert_input(model: Model, context: LlmContext, system: list | None = None, head: bool = True,
                  levels: bool = False) -> list[dict]:
    """The request's ``input``; ``system`` receives the :class:`SystemItems` it used
    (``head=False``: the caller leads with the prompt and tools); ``levels``: the request
    says its level in a ``configuration_update`` (``supportsMidConvoEffort``), so each
    earlier answer of this model that kept its level has one before it, as pi 1.6."""
    from pi_plugins.providers.responses_system import SystemItems  # (where a request is built)

    messages = transform_messages(context.messages, model, _id_normalizer(model))
    role = "developer" if model.reasoning else "system"
    plan = SystemItems(model, context, role, messages, head)  # pi 1.6's system messages and tool changes
    if system is not None:
        system.append(plan)
    items: list[dict] = list(plan.head)
    updates = plan.placed
    grammar_inputs = input_properties(context.tools, model.compat or {})  # their calls go as custom ones
    for index, message in enumerate(messages):
        if updates and id(message) in updates:  # a later change, before the prompt it came with
            items += updates.pop(id(message))
        if isinstance(message, UserMessage):
            if isinstance(message.content, str):
                items.append({"role": "user", "content": [{"type": "input_text", "text": message.content}]})
            else:
                parts = [
                    {"type": "input_text", "text": b.text} if isinstance(b, TextContent) else _input_image(b)
                    for b in message.content if isinstance(b, (TextContent, ImageContent))
                ]
                if parts:
                    items.append({"role": "user", "content": parts})
        elif isinstance(message, AssistantMessage):
            different_model = (message.model != model.id and message.provider == model.provider
                               and message.api == model.api)
            level = message.extra.get("providerThinkingLevel") if levels else None
            said_at = len(items) if level is not None and message.provider == model.provider \
                and message.api == model.api and not different_model else None
            texts = 0  # pi 1.6's fallback ids: msg_pi_<n> for the first text, msg_pi_<n>_<k> after
            for block in message.content:
                if isinstance(block, ThinkingContent):
                    if block.thinking_signature:
                        try:
                            items.append(json.loads(block.thinking_signature))
                        except ValueError:
                            pass
                elif isinstance(block, TextContent):
                    msg_id, phase = _text_signature(block.text_signature)
                    if not msg_id:
                        msg_id = f"msg_pi_{index}" if texts == 0 else f"msg_pi_{index}_{texts}"
                    elif len(msg_id) > 64:
                        msg_id = f"msg_{short_hash(msg_id)}"
                    texts += 1
                    item = {"type": "message", "role": "assistant",
                            "content": [{"type": "output_text", "text": block.text, "annotations": []}],
                            "status": "completed", "id": msg_id}
                    if phase:
                        item["phase"] = phase
                    items.append(item)
                elif isinstance(block, ToolCall) and block.name in grammar_inputs:
                    call_id, _, item_id = block.id.partition("|")
                    item = {"type": "custom_tool_call"}
                    if item_id.startswith("ctc_") and not different_model:
                        item["id"] = item_id
                    item.update({"call_id": call_id, "name": block.name,
                                 "input": call_input(block, grammar_inputs[block.name])})
                    items.append(item)
                elif isinstance(block, ToolCall):
                    call_id, _, item_id = block.id.partition("|")
                    item = {"type": "function_call"}
                    if item_id.startswith("fc_") and not different_model:  # a custom call's ctc_ id would be refused
                        item["id"] = item_id
                    item.update({"call_id": call_id, "name": block.name,
                                 "arguments": json_text(block.arguments)})
                    items.append(item)
            if said_at is not None and len(items) > said_at:
                items.insert(said_at, {"type": "configuration_update", "reasoning": {"effort": level}})
        elif isinstance(message, ToolResultMessage):
            text = "\n".join(b.text for b in message.content if isinstance(b, TextContent))
            images = [b for b in message.content if isinstance(b, ImageContent)]
            if images and model.accepts_images:
                output: Any = ([{"type": "input_text", "text": text}] if text else []) + [_input_image(b) for b in images]
            else:
                output = text or IMAGE_ONLY_RESULT
            kind = "custom_tool_call_output" if message.tool_name in grammar_inputs else "function_call_output"
            items.append({"type": kind, "call_id": message.tool_call_id.split("|")[0], "output": output})
    return items + [item for found in updates.values() for item in found]


def build_body(model: Model, context: LlmContext, options: StreamOptions) -> dict:
    retention = os.environ.get("PI_CACHE_RETENTION", "short")
    system: list[SystemItems] = []
    update = configuration_update_effort(model, options) if model.reasoning else None
    body: dict[str, Any] = {"model": model.id, "input": convert_input(model, context, system, levels=update is not None),
                            "stream": True}
    if retention != "none" and options.session_id:
        body["prompt_cache_key"] = options.session_id
    compat = model.compat or {}
    long_kept = retention == "long" and compat.get("supportsLongCacheRetention", True) is not False
    if compat.get("supportsExplicitPromptCacheMode") is True:  # pi 1.6: prompt_cache_options instead
        if retention == "none" or long_kept:
            body["prompt_cache_options"] = {"mode": "explicit"} if retention == "none" else {"ttl": "30m"}
    elif long_kept:
        body["prompt_cache_retention"] = "24h"
    body["store"] = False
    limit = max_tokens(model, options, context)
    if limit and (model.compat or {}).get("supportsMaxOutputTokens", True) is not False:
        body["max_output_tokens"] = max(limit, MIN_OUTPUT_TOKENS)
    if options.temperature is not None:
        body["temperature"] = options.temperature
    tools = context.tools if system[0].request_tools is None else system[0].request_tools
    if tools:
        from pi_plugins.providers.responses_system import responses_tools

        body["tools"] = responses_tools(tools, model)
    if model.reasoning:
        level = reasoning_level(model, options)
        off = (model.thinking_level_map or {}).get("off", "none")
        if level:  # with supportsMidConvoEffort pi 1.6 fixes the effort and says the level last
            body["reasoning"] = {"effort": "medium" if update else level_value(model, level), "summary": "auto"}
            body["include"] = ["reasoning.encrypted_content"]
        elif model.provider != "github-copilot" and off is not None:
            body["reasoning"] = {"effort": off or "none"}
        if update:
            body["input"].append({"type": "configuration_update", "reasoning": {"effort": update}})
    body.update(sampling_params(model, options) or {})  # last: they win over the named fields (pi 1.6)
    return body


def configuration_update_effort(model: Model, options: StreamOptions) -> str | None:
    """pi 1.6's ``supportsMidConvoEffort``: the level a ``configuration_update`` item carries
    (thinking on, and not Sign in with ChatGPT, which refuses the item), else None."""
    level = reasoning_level(model, options) if model.reasoning else None
    chatgpt = (model.provider == "openai" and model.base_url == "https://api.openai.com/v1"
               and options.api_key is not None and not options.api_key.startswith("sk-"))
    if not level or not (model.compat or {}).get("supportsMidConvoEffort") or chatgpt:
        return None
    return level_value(model, level)


# ---------------------------------------------------------------- response


def reasoning_removals(transformations: Any) -> list[dict]:
    """The reasoning items the server says it removed from the request's input (its
    ``input_transformations``), as pi 1.6 keeps them in the answer's diagnostics (the chat's
    "OpenAI dropped N reasoning items" notice). ``turn_boundary`` removals are left out: the
    models that keep only the current turn's reasoning report every earlier one each time."""
    if not isinstance(transformations, list):
        return []
    return [{k: t[k] for k in ("type", "id", "action", "reason") if k in t} for t in transformations
            if isinstance(t, dict) and t.get("type") == "reasoning" and t.get("action") == "removed"
            and t.get("reason") != "turn_boundary"]


class ResponsesReader(StreamReader):
    def __init__(self, builder, model, context):
        super().__init__(builder, model, context)
        self.current: tuple[str, int] | None = None  # (item type, content index)
        self.final_arguments: str | None = None
        self.completed = False
        self.grammar_inputs = input_properties(context.tools, model.compat or {})
        self.raw: RawInput | None = None  # the raw input of the custom tool call being streamed

    def on_event(self, event) -> Iterable:
        data = json_data(event)
        if not isinstance(data, dict):
            return ()
        kind = data.get("type") or event.event
        builder = self.builder
        current = self.current
        if kind == "response.function_call_arguments.delta":  # the hot path for big calls
            if current is not None and current[0] == "function_call":
                return [builder.toolcall_delta(data.get("delta", ""), current[1])]
            return ()
        if kind == "response.created":
            builder.message.response_id = (data.get("response") or {}).get("id")
        elif kind == "response.output_item.added":
            item = data.get("item") or {}
            itype = item.get("type")
            event_out: list[AssistantMessageEvent]
            if itype == "reasoning":
                event_out = [builder.thinking_start()]
            elif itype == "message":
                event_out = [builder.text_start()]
            elif itype == "function_call":
                event_out = [builder.toolcall_start(f"{item.get('call_id')}|{item.get('id')}", item.get("name", ""))]
                self.final_arguments = None
                if item.get("arguments"):
                    event_out.append(builder.toolcall_delta(item["arguments"]))
            elif itype == "custom_tool_call":  # a grammar tool's call: its raw input is the one argument
                event_out = [builder.toolcall_start(f"{item.get('call_id')}|{item.get('id')}", item.get("name", ""))]
                self.raw = RawInput(self.grammar_inputs.get(item.get("name", ""), "input"))
                piece = self.raw.add(item.get("input") or "")
                if piece:
                    event_out.append(builder.toolcall_delta(piece))
            else:
                return ()
            self.current = (itype, len(builder.message.content) - 1)
            return event_out
        elif current is None:
            pass
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            if current[0] == "reasoning":
                return [builder.thinking_delta(data.get("delta", ""), current[1])]
        elif kind == "response.reasoning_summary_part.done":
            if current[0] == "reasoning":
                return [builder.thinking_delta("\n\n", current[1])]
        elif kind in ("response.output_text.delta", "response.refusal.delta"):
            if current[0] == "message":
                return [builder.text_delta(data.get("delta", ""), current[1])]
        elif kind in ("response.custom_tool_call_input.delta", "response.custom_tool_call_input.done"):
            if current[0] == "custom_tool_call" and self.raw is not None:
                delta = data.get("delta") if kind.endswith("delta") else None
                piece = self.raw.add(delta or "") if kind.endswith("delta") else self.raw.close(data.get("input"))
                return [builder.toolcall_delta(piece, current[1])] if piece else ()
        elif kind == "response.function_call_arguments.done":
            if current[0] == "function_call" and isinstance(data.get("arguments"), str):
                self.final_arguments = data["arguments"]
        elif kind == "response.output_item.done":
            return self._item_done(data.get("item") or {}, current)
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            response = data.get("response") or {}
            if kind == "response.failed" or response.get("status") == "failed":
                self.builder.message.raw_stop_reason = response.get("status")
                error = response.get("error") or {}
                details = response.get("incomplete_details") or {}
                if error:
                    message = f"{error.get('code') or 'unknown'}: {error.get('message') or 'no message'}"
                elif details.get("reason"):
                    message = f"incomplete: {details['reason']}"
                else:
                    message = "Unknown error (no error details in response)"
                raise StreamError(message, classify(None, message), as_said=True)  # pi 1.6: no model named
            self._complete(response)
        elif kind == "error":
            message = f"Error Code {data.get('code')}: {data.get('message')}"
            raise StreamError(message, classify(None, message), as_said=True)
        return ()

    def _item_done(self, item: dict, current: tuple[str, int] | None) -> list:
        builder = self.builder
        itype = item.get("type")
        if current is None or current[0] != itype:
            return []
        index = current[1]
        block = builder.message.content[index]
        self.current = None
        closing = self.raw.close(item.get("input")) if itype == "custom_tool_call" and self.raw is not None else None
        before = [builder.toolcall_delta(closing, index)] if closing else []
        if itype == "reasoning":
            assert isinstance(block, ThinkingContent)  # current names the block the item opened
            summary = "\n\n".join(s.get("text", "") for s in item.get("summary") or [])
            content = "\n\n".join(c.get("text", "") for c in item.get("content") or [])
            block.thinking = summary or content or block.thinking
            block.thinking_signature = json.dumps(item, ensure_ascii=False, separators=(",", ":"))
        elif itype == "message":
            assert isinstance(block, TextContent)
            parts = item.get("content") or []
            block.text = "".join(
                (p.get("text") if p.get("type") == "output_text" else p.get("refusal")) or "" for p in parts
            )
            signature = {"v": 1, "id": item.get("id")}
            if item.get("phase"):
                signature["phase"] = item["phase"]
            block.text_signature = json.dumps(signature, separators=(",", ":"))
        end = builder.close(index)
        if itype == "function_call":
            final = self.final_arguments if self.final_arguments is not None else item.get("arguments")
            if isinstance(final, str) and final.strip():
                assert isinstance(block, ToolCall)
                block.arguments = parse_arguments(final, block)
        return [*before, end]

    def _complete(self, response: dict) -> None:
        self.completed = True
        message = self.builder.message
        removed = reasoning_removals(response.get("input_transformations"))
        if removed:
            message.extra["diagnostics"] = [*(message.extra.get("diagnostics") or []), {
                "type": "openai_input_transformations", "timestamp": int(time.time() * 1000),
                "details": {"transformations": removed}}]
        if response.get("id"):
            message.response_id = response["id"]
        usage = response.get("usage")
        if usage:
            cached = (usage.get("input_tokens_details") or {}).get("cached_tokens") or 0
            message.usage = Usage(
                input=(usage.get("input_tokens") or 0) - cached,
                output=usage.get("output_tokens") or 0,
                cache_read=cached,
                reasoning=(usage.get("output_tokens_details") or {}).get("reasoning_tokens") or 0,
                total_tokens=usage.get("total_tokens") or 0,
            )
        calculate_cost(self.model, message.usage)
        status = response.get("status")
        reason = (response.get("incomplete_details") or {}).get("reason")
        message.raw_stop_reason = f"{status}.{reason}" if isinstance(reason, str) and reason else status
        self.stop_reason = STATUS_STOP.get(status, "stop") if status else "stop"

    def end(self) -> Iterable:
        if not self.completed:
            raise truncated("response.completed")
        events = self.builder.close_all()
        if self.stop_reason == "error":
            raise StreamError("The response ended with status failed")
        if self.stop_reason == "stop" and self.builder.message.tool_calls:
            self.stop_reason = "toolUse"
        return events


class OpenAIResponsesProvider(SseProvider):
    api = API

    def http_error_text(self, where: str, status: int, reason: str, message: str, parsed: Any,
                        text: str = "") -> str:
        """pi 1.6's words (the OpenAI SDK's error under its prefix): ``local API error (503): {json}``."""
        from pi_plugins.providers.error_text import responses_text

        return responses_text(self.error_prefix(where.split("/", 1)[0]), status, parsed, text)

    def error_prefix(self, provider: str) -> str:
        from pi_plugins.providers.error_text import responses_prefix

        return responses_prefix(provider)

    async def stream(self, model: Model, context: LlmContext, options: StreamOptions):
        level = configuration_update_effort(model, options)  # kept on the answer, as pi 1.6
        async for event in super().stream(model, context, options):
            message = getattr(event, "partial", None) or getattr(event, "message", None) or getattr(event, "error", None)
            if level is not None and message is not None:
                message.extra.setdefault("providerThinkingLevel", level)
            yield event

    def build_request(self, model: Model, context: LlmContext, options: StreamOptions) -> HttpRequest:
        headers = {"accept": "application/json", "content-type": "application/json"}
        if options.api_key:
            headers["authorization"] = f"Bearer {options.api_key}"
        headers.update(model.headers or {})
        if options.session_id and os.environ.get("PI_CACHE_RETENTION") != "none":
            if (model.compat or {}).get("sendSessionIdHeader", True) is not False:
                headers["session_id"] = options.session_id
            headers["x-client-request-id"] = options.session_id
        headers.update(options.headers or {})
        if is_gateway(model):
            headers = gateway_headers(headers, options.api_key, ("authorization",), model.headers, options.headers)
        request = HttpRequest(join_url(model.base_url, "/responses"), headers, build_body(model, context, options))
        if is_copilot(model):
            adapt_for_copilot(model, context, options, request)
        return request

    def reader(self, builder, model, context) -> StreamReader:
        return ResponsesReader(builder, model, context)


@hookimpl
def register_providers():
    return [OpenAIResponsesProvider()]
