"""Google Generative AI (``google-generative-ai``): Gemini through
``models/{id}:streamGenerateContent?alt=sse``.

Thinking parts carry ``thought: true``; thought signatures (base64) may sit on any part
and go back only to the same model. Gemini 2.x thinks on a token budget, Gemini 3 and
Gemma 4 on a level. Tool calls arrive whole (no argument deltas); Gemini before 3 takes
tool-result images as a separate user turn.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable
from itertools import count
from typing import Any

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
from pi_plugins.providers.thinking import clamp_level, custom_budget, max_tokens
from pi_plugins.providers.transform import keep_id_chars, transform_messages

API = "google-generative-ai"
IMAGE_ONLY_RESULT = "(see attached image)"
TOOL_IMAGES_INTRO = "Tool result image:"
_BASE64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")
_call_counter = count(1)

BUDGETS = {
    "2.5-pro": {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768},
    "2.5-flash-lite": {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576},
    "2.5-flash": {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576},
}


def _gemini3_pro(model_id: str) -> bool:
    return bool(re.search(r"gemini-3(?:\.\d+)?-pro", model_id.lower()))


def _gemini3_flash(model_id: str) -> bool:
    return bool(re.search(r"gemini-3(?:\.\d+)?-flash", model_id.lower()))


def _gemma4(model_id: str) -> bool:
    return bool(re.search(r"gemma-?4", model_id.lower()))


def requires_tool_call_id(model_id: str) -> bool:
    """Models behind Google's API that need explicit ids on calls and responses."""
    return model_id.startswith(("claude-", "gpt-oss-"))


def _multimodal_function_response(model_id: str) -> bool:
    match = re.match(r"^gemini(?:-live)?-(\d+)", model_id.lower())
    return int(match.group(1)) >= 3 if match else True


def _valid_signature(signature: str | None) -> bool:
    return signature is not None and bool(signature) and len(signature) % 4 == 0 and bool(_BASE64.match(signature))


def thinking_config(model: Model, options: StreamOptions) -> dict | None:
    if not model.reasoning:
        return None
    level = options.thinking_level
    if level in (None, "off"):
        if _gemini3_pro(model.id):
            return {"thinkingLevel": "LOW"}
        if _gemini3_flash(model.id) or _gemma4(model.id):
            return {"thinkingLevel": "MINIMAL"}
        return {"thinkingBudget": 0}
    level = clamp_level(model, level)
    level = "high" if level in ("off", "xhigh", "max") else level
    if _gemini3_pro(model.id):
        return {"includeThoughts": True, "thinkingLevel": "LOW" if level in ("minimal", "low") else "HIGH"}
    if _gemma4(model.id):
        return {"includeThoughts": True, "thinkingLevel": "MINIMAL" if level in ("minimal", "low") else "HIGH"}
    if _gemini3_flash(model.id):
        return {"includeThoughts": True, "thinkingLevel": level.upper()}
    custom = custom_budget(options.thinking_budgets, level)
    if custom is not None:
        return {"includeThoughts": True, "thinkingBudget": custom}
    for tag, budgets in BUDGETS.items():
        if tag in model.id:
            return {"includeThoughts": True, "thinkingBudget": budgets[level]}
    return {"includeThoughts": True, "thinkingBudget": -1}  # dynamic


# ---------------------------------------------------------------- request


def _inline(block: ImageContent) -> dict:
    return {"inlineData": {"mimeType": block.mime_type, "data": block.data}}


def convert_contents(model: Model, context: LlmContext) -> list[dict]:
    with_ids = requires_tool_call_id(model.id)
    normalize = (lambda id, *_: keep_id_chars(id, 64)) if with_ids else None
    messages = transform_messages(context.messages, model, normalize)
    contents: list[dict] = []
    for message in messages:
        if isinstance(message, UserMessage):
            if isinstance(message.content, str):
                contents.append({"role": "user", "parts": [{"text": message.content}]})
            else:
                parts = [{"text": b.text} if isinstance(b, TextContent) else _inline(b)
                         for b in message.content if isinstance(b, (TextContent, ImageContent))]
                if parts:
                    contents.append({"role": "user", "parts": parts})
        elif isinstance(message, AssistantMessage):
            same = message.provider == model.provider and message.model == model.id
            parts = []
            for block in message.content:
                if isinstance(block, TextContent):
                    if not block.text.strip():
                        continue
                    part = {"text": block.text}
                    if same and _valid_signature(block.text_signature):
                        part["thoughtSignature"] = block.text_signature
                    parts.append(part)
                elif isinstance(block, ThinkingContent):
                    if not block.thinking.strip():
                        continue
                    if same:
                        part = {"thought": True, "text": block.thinking}
                        if _valid_signature(block.thinking_signature):
                            part["thoughtSignature"] = block.thinking_signature
                    else:
                        part = {"text": block.thinking}
                    parts.append(part)
                elif isinstance(block, ToolCall):
                    call = {"name": block.name, "args": block.arguments or {}}
                    if with_ids:
                        call["id"] = block.id
                    part = {"functionCall": call}
                    if same and _valid_signature(block.thought_signature):
                        part["thoughtSignature"] = block.thought_signature
                    parts.append(part)
            if parts:
                contents.append({"role": "model", "parts": parts})
        elif isinstance(message, ToolResultMessage):
            text = "\n".join(b.text for b in message.content if isinstance(b, TextContent))
            images = [b for b in message.content if isinstance(b, ImageContent)] if model.accepts_images else []
            multimodal = _multimodal_function_response(model.id)
            value = text or (IMAGE_ONLY_RESULT if images else "")
            response: dict[str, Any] = {"name": message.tool_name,
                                        "response": {"error": value} if message.is_error else {"output": value}}
            if images and multimodal:
                response["parts"] = [_inline(b) for b in images]
            if with_ids:
                response["id"] = message.tool_call_id
            part = {"functionResponse": response}
            last = contents[-1] if contents else None
            if last and last["role"] == "user" and any("functionResponse" in p for p in last["parts"]):
                last["parts"].append(part)
            else:
                contents.append({"role": "user", "parts": [part]})
            if images and not multimodal:
                contents.append({"role": "user", "parts": [{"text": TOOL_IMAGES_INTRO}, *(_inline(b) for b in images)]})
    return contents


def build_body(model: Model, context: LlmContext, options: StreamOptions) -> dict:
    body: dict[str, Any] = {"contents": convert_contents(model, context)}
    if context.system_prompt:
        body["systemInstruction"] = {"parts": [{"text": context.system_prompt}], "role": "user"}
    if context.tools:
        body["tools"] = [{"functionDeclarations": [
            {"name": t.name, "description": t.description, "parametersJsonSchema": t.parameters}
            for t in context.tools
        ]}]
    config: dict[str, Any] = {}
    if options.temperature is not None:
        config["temperature"] = options.temperature
    limit = max_tokens(model, options, context)
    if limit is not None:
        config["maxOutputTokens"] = limit
    thinking = thinking_config(model, options)
    if thinking is not None:
        config["thinkingConfig"] = thinking
    if config:
        body["generationConfig"] = config
    return body


# ---------------------------------------------------------------- response

FINISH_STOP = {"STOP": "stop", "MAX_TOKENS": "length"}


class GeminiReader(StreamReader):
    def __init__(self, builder, model, context):
        super().__init__(builder, model, context)
        self.current: str | None = None  # "text" or "thinking" while one is open
        self.finished = False
        self.raw_finish: str | None = None

    def _close_current(self) -> list:
        if self.current is None:
            return []
        self.current = None
        end = self.builder.close()
        return [end] if end is not None else []

    def on_event(self, event) -> Iterable:
        chunk = json_data(event)
        if isinstance(chunk, list):
            chunk = chunk[0] if chunk else {}
        if not isinstance(chunk, dict):
            return ()
        if "error" in chunk:
            if isinstance(chunk["error"], dict):  # Google's SDK's words, as pi 1.6 shows them
                from pi_plugins.providers.error_text import google_stream_text

                error, said, as_said = chunk["error"], google_stream_text(chunk), True
            else:
                error, said, as_said = {}, str(chunk["error"]), False
            code = error.get("code")
            raise StreamError(said, classify(code if isinstance(code, int) else None, said), as_said=as_said)
        builder = self.builder
        message = builder.message
        if not message.response_id and chunk.get("responseId"):
            message.response_id = chunk["responseId"]
        events: list = []
        candidates = chunk.get("candidates") or []
        candidate = candidates[0] if candidates and isinstance(candidates[0], dict) else {}
        for part in (candidate.get("content") or {}).get("parts") or []:
            if "text" in part and isinstance(part["text"], str):
                kind = "thinking" if part.get("thought") is True else "text"
                if not part["text"] and self.current != kind:
                    continue  # an empty part (Gemini ends with one) opens no block
                if self.current != kind:
                    events += self._close_current()
                    events.append(builder.thinking_start() if kind == "thinking" else builder.text_start())
                    self.current = kind
                block = builder.block()
                signature = part.get("thoughtSignature")
                if kind == "thinking":
                    if signature:
                        block.thinking_signature = signature
                    events.append(builder.thinking_delta(part["text"]))
                else:
                    if signature:
                        block.text_signature = signature
                    events.append(builder.text_delta(part["text"]))
            call = part.get("functionCall")
            if isinstance(call, dict):
                events += self._close_current()
                given = call.get("id")
                taken = any(isinstance(b, ToolCall) and b.id == given for b in message.content)
                name = call.get("name") or ""
                call_id = given if given and not taken else f"{name}_{int(time.time() * 1000)}_{next(_call_counter)}"
                fields = {"thought_signature": part["thoughtSignature"]} if part.get("thoughtSignature") else {}
                events.append(builder.toolcall_start(call_id, name, **fields))
                events.append(builder.toolcall_delta(json.dumps(call.get("args") or {}, ensure_ascii=False)))
                events.append(builder.close())
        reason = candidate.get("finishReason")
        if reason:
            self.finished = True
            self.raw_finish = message.raw_stop_reason = reason
            self.stop_reason = FINISH_STOP.get(reason, "error")
            if message.tool_calls and self.stop_reason == "stop":
                self.stop_reason = "toolUse"
        meta = chunk.get("usageMetadata")
        if isinstance(meta, dict):
            cached = meta.get("cachedContentTokenCount") or 0
            message.usage = calculate_cost(self.model, Usage(
                input=(meta.get("promptTokenCount") or 0) - cached,
                output=(meta.get("candidatesTokenCount") or 0) + (meta.get("thoughtsTokenCount") or 0),
                cache_read=cached,
                reasoning=meta.get("thoughtsTokenCount") or 0,
                total_tokens=meta.get("totalTokenCount") or 0,
            ))
        return events

    def end(self) -> Iterable:
        if not self.finished:
            raise truncated("a finish reason")
        events = self._close_current() + self.builder.close_all()
        if self.stop_reason == "error":
            raise StreamError(f"The model stopped with finish reason {self.raw_finish}")
        return events


class GoogleProvider(SseProvider):
    api = API

    def http_error_text(self, where: str, status: int, reason: str, message: str, parsed: Any,
                        text: str = "") -> str:
        """pi 1.6's words (Google's SDK): the error body as JSON, nothing more."""
        from pi_plugins.providers.error_text import google_text

        return google_text(status, reason, parsed, text)

    def build_request(self, model: Model, context: LlmContext, options: StreamOptions) -> HttpRequest:
        headers = {"content-type": "application/json"}
        if options.api_key:
            headers["x-goog-api-key"] = options.api_key
        headers.update(model.headers or {})
        headers.update(options.headers or {})
        url = join_url(model.base_url, f"/models/{model.id}:streamGenerateContent?alt=sse")
        return HttpRequest(url, headers, build_body(model, context, options))

    def reader(self, builder, model, context) -> StreamReader:
        return GeminiReader(builder, model, context)


@hookimpl
def register_providers():
    return [GoogleProvider()]
