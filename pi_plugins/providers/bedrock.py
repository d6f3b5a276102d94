"""Amazon Bedrock (``bedrock-converse-stream``): the Converse API's stream,
``POST https://bedrock-runtime.<region>.amazonaws.com/model/<model id>/converse-stream``.

Two things set it apart from the other APIs, and a well-kept library does both: the
request is signed with AWS Signature Version 4 from the AWS credentials (profiles, IAM
keys, roles: botocore finds them as the AWS tools do), and the answer comes in AWS's
binary event-stream framing (botocore's parser checks each frame's CRCs). botocore is
the extra ``bedrock``. A Bedrock API key (``AWS_BEARER_TOKEN_BEDROCK``, or a stored key)
goes as a Bearer token instead of a signature, as pi sends it.

The region is ``AWS_REGION``, else ``AWS_DEFAULT_REGION``, else the model's base URL's.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

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
from pi_core.protocol.model import Model, calculate_cost
from pi_core.protocol.provider import LlmContext, StreamOptions
from pi_core.protocol.stream import AssistantMessageEvent
from pi_plugins.providers.failures import classify
from pi_plugins.providers.http import (
    HttpRequest,
    SseProvider,
    StreamError,
    StreamReader,
    json_data,
    truncated,
)
from pi_plugins.providers.request_body import JsonBody
from pi_plugins.providers.sse import SseEvent
from pi_plugins.providers.thinking import budget_for, fit_budget_to_context, max_tokens
from pi_plugins.providers.transform import keep_id_chars, transform_messages

API = "bedrock-converse-stream"
EXTRA_HINT = "pip install 'pi-harness[bedrock]'"
STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "toolUse", "max_tokens": "length",
                "model_context_window_exceeded": "length", "guardrail_intervened": "error",
                "content_filtered": "error"}
#: Bedrock's exceptions and the HTTP status they stand for (for classification).
EXCEPTION_STATUS = {"throttlingException": 429, "serviceUnavailableException": 503,
                    "internalServerException": 500, "modelStreamErrorException": 500,
                    "validationException": 400, "accessDeniedException": 403, "modelTimeoutException": 408}
_REGION = re.compile(r"bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com")


def _botocore():
    try:
        import botocore.auth  # noqa: F401
        import botocore.awsrequest  # noqa: F401
        import botocore.eventstream  # noqa: F401
        import botocore.session  # noqa: F401
    except ImportError:
        raise RuntimeError(f"Amazon Bedrock needs botocore to sign requests and read its event stream: "
                           f"{EXTRA_HINT}") from None
    import botocore
    return botocore


def region_of(model: Model) -> str:
    found = _REGION.search(model.base_url or "")
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or \
        (found.group(1) if found else "us-east-1")


def endpoint(model: Model) -> str:
    base = (model.base_url or "").rstrip("/")
    region = region_of(model)
    if not base or _REGION.search(base):
        base = f"https://bedrock-runtime.{region}.amazonaws.com"
    return f"{base}/model/{quote(model.id, safe='')}/converse-stream"


# ---------------------------------------------------------------- request


def _image(block: ImageContent) -> dict:
    return {"image": {"format": block.mime_type.split("/")[-1].replace("jpg", "jpeg"),
                      "source": {"bytes": block.data}}}


def convert_messages(model: Model, messages: list) -> list[dict]:
    messages = transform_messages(messages, model, lambda id, *_: keep_id_chars(id, 64))
    out: list[dict] = []
    blocks: list[dict[str, Any]]
    i = 0
    while i < len(messages):
        message = messages[i]
        if isinstance(message, UserMessage):
            if isinstance(message.content, str):
                blocks = [{"text": message.content}] if message.content.strip() else []
            else:
                blocks = [{"text": b.text} if isinstance(b, TextContent) else _image(b)
                          for b in message.content
                          if isinstance(b, ImageContent) or (isinstance(b, TextContent) and b.text.strip())]
            if blocks:
                out.append({"role": "user", "content": blocks})
        elif isinstance(message, AssistantMessage):
            blocks = []
            for block in message.content:
                if isinstance(block, TextContent) and block.text.strip():
                    blocks.append({"text": block.text})
                elif isinstance(block, ThinkingContent) and block.thinking.strip():
                    if block.thinking_signature:
                        blocks.append({"reasoningContent": {"reasoningText": {
                            "text": block.thinking, "signature": block.thinking_signature}}})
                    else:
                        blocks.append({"text": block.thinking})
                elif isinstance(block, ToolCall):
                    blocks.append({"toolUse": {"toolUseId": block.id, "name": block.name,
                                               "input": block.arguments or {}}})
            if blocks:
                out.append({"role": "assistant", "content": blocks})
        elif isinstance(message, ToolResultMessage):
            results = []
            while i < len(messages):
                result = messages[i]
                if not isinstance(result, ToolResultMessage):
                    break
                content = [{"text": b.text} if isinstance(b, TextContent) else _image(b)
                           for b in result.content if isinstance(b, (TextContent, ImageContent))]
                results.append({"toolResult": {"toolUseId": result.tool_call_id,
                                               "content": content or [{"text": ""}],
                                               "status": "error" if result.is_error else "success"}})
                i += 1
            out.append({"role": "user", "content": results})
            continue
        i += 1
    return out


def is_claude(model: Model) -> bool:
    """Claude on Bedrock, by id or name (an application inference profile's ARN names no model)."""
    id, name = model.id.lower(), (model.name or "").lower()
    return "anthropic.claude" in id or "anthropic/claude" in id or "claude" in name


def caches_prompts(model: Model) -> bool:
    """Claude 3.5 Haiku, 3.7 Sonnet and 4.x take cache points (pi's rule);
    ``AWS_BEDROCK_FORCE_CACHE=1`` for a profile whose ARN names no model."""
    names = (model.id.lower(), (model.name or "").lower())
    if not any("claude" in n for n in names):
        return os.environ.get("AWS_BEDROCK_FORCE_CACHE") == "1"
    return any(tag in n for n in names for tag in ("-4-", "-4.", "claude-3-7-sonnet", "claude-3-5-haiku",
                                                   "opus-4", "sonnet-4", "haiku-4"))


def cache_point(model: Model) -> dict | None:
    retention = os.environ.get("PI_CACHE_RETENTION", "short")
    if retention == "none" or not caches_prompts(model):
        return None
    return {"cachePoint": {"type": "default", **({"ttl": "1h"} if retention == "long" else {})}}


def thinking_fields(model: Model, level: str, budget: int | None) -> dict | None:
    """Claude's thinking, in ``additionalModelRequestFields`` as pi sends it."""
    from pi_plugins.providers.anthropic import adaptive_thinking, effort

    if not is_claude(model):
        return None
    if adaptive_thinking(model.id):
        return {"thinking": {"type": "adaptive", "display": "summarized"},
                "output_config": {"effort": effort(model, level)}}
    return {"thinking": {"type": "enabled", "budget_tokens": budget or 1024, "display": "summarized"},
            "anthropic_beta": ["interleaved-thinking-2025-05-14"]}


def build_body(model: Model, context: LlmContext, options: StreamOptions) -> dict:
    level = options.thinking_level if options.thinking_level not in (None, "off") else None
    thinking = bool(model.reasoning and level and is_claude(model))
    limit = max_tokens(model, options, context) or model.max_tokens
    budget = None
    if thinking:
        assert level is not None  # thinking needs a level
        limit, budget = budget_for(level, limit, model.max_tokens, options.thinking_budgets)
        limit, budget = fit_budget_to_context(model, context, limit, budget)
    cache = cache_point(model)
    messages = convert_messages(model, context.messages)
    if cache and messages and messages[-1]["role"] == "user":
        messages[-1]["content"].append(cache)
    body: dict[str, Any] = {"messages": messages}
    if context.system_prompt:
        body["system"] = [{"text": context.system_prompt}, *([cache] if cache else [])]
    config: dict[str, Any] = {"maxTokens": limit}
    if options.temperature is not None and not thinking:
        config["temperature"] = options.temperature
    body["inferenceConfig"] = config
    if context.tools:
        body["toolConfig"] = {"tools": [{"toolSpec": {
            "name": t.name, "description": t.description,
            "inputSchema": {"json": t.parameters or {"type": "object", "properties": {}}}}}
            for t in context.tools]}
    extra = thinking_fields(model, level, budget) if thinking and level else None
    if extra:
        body["additionalModelRequestFields"] = extra
    return body


# ---------------------------------------------------------------- response


class EventStreamDecoder:
    """AWS's binary event stream, frame by frame (botocore's parser, CRCs checked), as
    events: the ``:event-type`` and the JSON payload; an exception frame as the event
    ``exception`` with its ``:exception-type`` added to the payload."""

    def __init__(self) -> None:
        self.buffer = _botocore().eventstream.EventStreamBuffer()

    def feed(self, chunk: bytes) -> list[SseEvent]:
        self.buffer.add_data(chunk)
        events = []
        try:
            for message in self.buffer:
                headers = message.headers
                payload = message.payload.decode("utf-8", "replace")
                if headers.get(":message-type") == "exception" or headers.get(":message-type") == "error":
                    kind = headers.get(":exception-type") or headers.get(":error-code") or "exception"
                    try:
                        data = json.loads(payload) if payload else {}
                    except ValueError:
                        data = {"message": payload}
                    data = {**(data if isinstance(data, dict) else {"message": str(data)}), "__type": kind}
                    events.append(SseEvent("exception", json.dumps(data)))
                else:
                    events.append(SseEvent(headers.get(":event-type"), payload))
        except Exception as exc:  # a torn or corrupt frame: botocore's parser says which
            if type(exc).__module__.startswith("botocore"):
                raise StreamError(f"the server sent a malformed event-stream frame ({exc})") from None
            raise
        return events

    def close(self) -> list[SseEvent]:
        return []


class ConverseReader(StreamReader):
    def __init__(self, builder, model, context):
        super().__init__(builder, model, context)
        self.blocks: dict[int | None, int] = {}  # Bedrock's content block index -> our content index
        self.stopped = False
        self.raw_stop: str | None = None

    def on_event(self, event: SseEvent) -> Iterable:
        kind = event.event
        data: Any
        if kind == "exception":
            data = json_data(event)
            name = data.get("__type", "exception")
            text = f"{data.get('message') or data.get('Message') or 'no message'} ({name})"
            raise StreamError(text, classify(EXCEPTION_STATUS.get(name), text))
        data = json_data(event) if event.data else {}
        builder = self.builder
        if kind == "contentBlockStart":
            start = (data.get("start") or {}).get("toolUse")
            if start:
                out = builder.toolcall_start(start.get("toolUseId", ""), start.get("name", ""))
                self.blocks[data.get("contentBlockIndex")] = len(builder.message.content) - 1
                return [out]
        elif kind == "contentBlockDelta":
            position = data.get("contentBlockIndex")
            delta = data.get("delta") or {}
            index = self.blocks.get(position)
            if "text" in delta:
                if index is None:
                    started = builder.text_start()
                    index = self.blocks[position] = len(builder.message.content) - 1
                    return [started, builder.text_delta(delta["text"], index)]
                return [builder.text_delta(delta["text"], index)]
            if "toolUse" in delta and index is not None:
                piece = (delta["toolUse"] or {}).get("input") or ""
                return [builder.toolcall_delta(piece, index)] if piece else ()
            reasoning = delta.get("reasoningContent")
            if isinstance(reasoning, dict):
                events: list[AssistantMessageEvent] = []
                if index is None:
                    events.append(builder.thinking_start(signature=""))
                    index = self.blocks[position] = len(builder.message.content) - 1
                block = builder.message.content[index]
                assert isinstance(block, ThinkingContent)  # the block this index was made for
                if reasoning.get("text"):
                    events.append(builder.thinking_delta(reasoning["text"], index))
                if reasoning.get("signature"):
                    block.thinking_signature = (block.thinking_signature or "") + reasoning["signature"]
                if reasoning.get("redactedContent"):
                    block.redacted = True
                    block.thinking_signature = reasoning["redactedContent"]
                return events
        elif kind == "contentBlockStop":
            index = self.blocks.pop(data.get("contentBlockIndex"), None)
            if index is not None:
                end = builder.close(index)
                return [end] if end is not None else ()
        elif kind == "messageStop":
            builder.message.raw_stop_reason = data.get("stopReason")
            reason = self.raw_stop = data.get("stopReason") or "end_turn"
            self.stop_reason = STOP_REASONS.get(reason, "error")
            self.stopped = True
        elif kind == "metadata":
            raw = data.get("usage") or {}
            usage = builder.message.usage
            usage.input = raw.get("inputTokens") or 0
            usage.output = raw.get("outputTokens") or 0
            usage.cache_read = raw.get("cacheReadInputTokens") or 0
            usage.cache_write = raw.get("cacheWriteInputTokens") or 0
            usage.total_tokens = raw.get("totalTokens") or usage.input + usage.output + usage.cache_read + usage.cache_write
            calculate_cost(self.model, usage)
        return ()

    def end(self) -> Iterable:
        if not self.stopped:
            raise truncated("messageStop")
        events = self.builder.close_all()
        if self.stop_reason == "error":
            raise StreamError(f"The model stopped with stop reason {self.raw_stop!r}")
        return events


class SignedRequest(HttpRequest):
    """A request to sign in :meth:`BedrockProvider.finalize`, for this region."""

    __slots__ = ("region",)

    def __init__(self, url: str, headers: dict[str, str], body: dict, region: str):
        super().__init__(url, headers, body)
        self.region = region


class BedrockProvider(SseProvider):
    api = API

    def build_request(self, model: Model, context: LlmContext, options: StreamOptions) -> HttpRequest:
        headers = {"content-type": "application/json", "accept": "application/vnd.amazon.eventstream"}
        token = options.api_key or os.environ.get("AWS_BEARER_TOKEN_BEDROCK")
        if token:
            headers["authorization"] = f"Bearer {token}"
        headers.update(model.headers or {})
        headers.update(options.headers or {})
        if token:
            return HttpRequest(endpoint(model), headers, build_body(model, context, options))
        _botocore()  # say which extra to install before anything else happens
        return SignedRequest(endpoint(model), headers, build_body(model, context, options), region_of(model))

    def finalize(self, request: HttpRequest, body: Any) -> None:
        """Sign with SigV4 (the body exactly as it will be sent) unless a Bedrock API key
        goes as a Bearer token."""
        if not isinstance(request, SignedRequest):
            return
        botocore = _botocore()
        credentials = botocore.session.get_session().get_credentials()
        if credentials is None:
            raise RuntimeError("Amazon Bedrock: no AWS credentials (set AWS_PROFILE, AWS_ACCESS_KEY_ID and "
                               "AWS_SECRET_ACCESS_KEY, or AWS_BEARER_TOKEN_BEDROCK)")
        data = JsonBody(body).whole()  # the bytes that will be sent, whatever their size
        signed = botocore.awsrequest.AWSRequest(method="POST", url=request.url, data=data,
                                                headers=dict(request.headers))
        botocore.auth.SigV4Auth(credentials.get_frozen_credentials(), "bedrock", request.region).add_auth(signed)
        request.headers = dict(signed.headers.items())

    def stream_event_data(self, event: SseEvent) -> Any:
        """As the AWS SDK yields it to pi 1.6: ``{"<event type>": payload}``; an exception
        frame is none (the SDK raises it)."""
        if event.event == "exception":
            return None
        try:
            payload = json.loads(event.data) if event.data else {}
        except ValueError:
            payload = event.data
        return {event.event: payload}

    def decoder(self) -> EventStreamDecoder:
        return EventStreamDecoder()

    def reader(self, builder, model, context) -> StreamReader:
        return ConverseReader(builder, model, context)


@hookimpl
def register_providers():
    return [BedrockProvider()]
