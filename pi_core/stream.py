"""The assistant message event stream every provider speaks (pi-ai's vocabulary).

A provider's ``stream()`` is an async iterator of these events: ``start``, then
``text_*``, ``thinking_*`` and ``toolcall_*`` events (each with its ``content_index`` and
the ``partial`` message, the same object updated in place), and finally exactly one of
``done`` (with the final ``message``) or ``error`` (``reason`` error or aborted, the
message carrying ``error_message``). Providers never raise for request or model
failures; they end the stream with ``error``.

:class:`MessageBuilder` keeps that contract for provider authors: it owns the partial
message and returns the event for each step.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from attrs import define, field

from pi_core.messages import (
    AssistantMessage,
    Failure,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
)


@define
class StartEvent:
    type: Literal["start"] = field(default="start", init=False)
    partial: AssistantMessage = None


@define
class TextStartEvent:
    type: Literal["text_start"] = field(default="text_start", init=False)
    content_index: int = 0
    partial: AssistantMessage = None


@define
class TextDeltaEvent:
    type: Literal["text_delta"] = field(default="text_delta", init=False)
    content_index: int = 0
    delta: str = ""
    partial: AssistantMessage = None


@define
class TextEndEvent:
    type: Literal["text_end"] = field(default="text_end", init=False)
    content_index: int = 0
    content: str = ""
    partial: AssistantMessage = None


@define
class ThinkingStartEvent:
    type: Literal["thinking_start"] = field(default="thinking_start", init=False)
    content_index: int = 0
    partial: AssistantMessage = None


@define
class ThinkingDeltaEvent:
    type: Literal["thinking_delta"] = field(default="thinking_delta", init=False)
    content_index: int = 0
    delta: str = ""
    partial: AssistantMessage = None


@define
class ThinkingEndEvent:
    type: Literal["thinking_end"] = field(default="thinking_end", init=False)
    content_index: int = 0
    content: str = ""
    partial: AssistantMessage = None


@define
class ToolCallStartEvent:
    type: Literal["toolcall_start"] = field(default="toolcall_start", init=False)
    content_index: int = 0
    partial: AssistantMessage = None


@define
class ToolCallDeltaEvent:
    type: Literal["toolcall_delta"] = field(default="toolcall_delta", init=False)
    content_index: int = 0
    delta: str = ""
    partial: AssistantMessage = None


@define
class ToolCallEndEvent:
    type: Literal["toolcall_end"] = field(default="toolcall_end", init=False)
    content_index: int = 0
    tool_call: ToolCall = None
    partial: AssistantMessage = None


@define
class DoneEvent:
    type: Literal["done"] = field(default="done", init=False)
    reason: StopReason = "stop"
    message: AssistantMessage = None


@define
class ErrorEvent:
    type: Literal["error"] = field(default="error", init=False)
    reason: StopReason = "error"
    error: AssistantMessage = None


AssistantMessageEvent = (
    StartEvent
    | TextStartEvent
    | TextDeltaEvent
    | TextEndEvent
    | ThinkingStartEvent
    | ThinkingDeltaEvent
    | ThinkingEndEvent
    | ToolCallStartEvent
    | ToolCallDeltaEvent
    | ToolCallEndEvent
    | DoneEvent
    | ErrorEvent
)


class MessageBuilder:
    """Builds one assistant message from streamed pieces and returns the matching events.

    Text and thinking deltas are appended to the open block (joined when read, see
    :class:`pi_core.messages._Streamed`), so ``partial`` always shows what has streamed. Tool-call arguments are collected as raw JSON pieces and
    parsed once when the call ends (linear time, whatever their size); malformed JSON
    leaves ``{}`` and keeps the raw text in ``extra["partialArgs"]`` so nothing the model
    wrote is lost.
    """

    def __init__(self, *, api: str, provider: str, model: str):
        self.message = AssistantMessage(api=api, provider=provider, model=model)
        self._parts: list[str] = []
        self._open: int | None = None
        self._block: Any = None

    # -- lifecycle

    def start(self) -> StartEvent:
        return StartEvent(partial=self.message)

    def done(self, reason: StopReason | None = None) -> DoneEvent:
        """Close any open block and finish; ``reason`` defaults to toolUse when the
        message holds tool calls, else stop."""
        self.close()
        if reason is None:
            reason = "toolUse" if self.message.tool_calls else "stop"
        self.message.stop_reason = reason
        return DoneEvent(reason=reason, message=self.message)

    def error(
        self, message: str, *, aborted: bool = False, failure: Failure | None = None
    ) -> ErrorEvent:
        """Finish with an error; what streamed so far stays in the message. ``failure``
        tells the harness whether a retry or a compaction may help."""
        if self._open is not None:
            self.close()
        reason = "aborted" if aborted else "error"
        self.message.stop_reason = reason
        self.message.error_message = message
        self.message.failure = failure
        return ErrorEvent(reason=reason, error=self.message)

    # -- blocks

    def text_start(self) -> TextStartEvent:
        index = self._open_block(TextContent())
        return TextStartEvent(content_index=index, partial=self.message)

    def text_delta(self, delta: str) -> TextDeltaEvent:
        self._block.append(delta)
        return TextDeltaEvent(content_index=self._open, delta=delta, partial=self.message)

    def thinking_start(self, signature: str | None = None) -> ThinkingStartEvent:
        index = self._open_block(ThinkingContent(thinking_signature=signature))
        return ThinkingStartEvent(content_index=index, partial=self.message)

    def thinking_delta(self, delta: str) -> ThinkingDeltaEvent:
        self._block.append(delta)
        return ThinkingDeltaEvent(content_index=self._open, delta=delta, partial=self.message)

    def toolcall_start(self, id: str, name: str) -> ToolCallStartEvent:
        index = self._open_block(ToolCall(id=id, name=name))
        return ToolCallStartEvent(content_index=index, partial=self.message)

    def toolcall_delta(self, delta: str) -> ToolCallDeltaEvent:
        self._parts.append(delta)
        return ToolCallDeltaEvent(content_index=self._open, delta=delta, partial=self.message)

    def close(self) -> TextEndEvent | ThinkingEndEvent | ToolCallEndEvent | None:
        """End the open block (if any) and return its end event."""
        index = self._open
        if index is None:
            return None
        block, self._open, self._block = self._block, None, None
        if isinstance(block, TextContent):
            return TextEndEvent(content_index=index, content=block.text, partial=self.message)
        if isinstance(block, ThinkingContent):
            return ThinkingEndEvent(content_index=index, content=block.thinking, partial=self.message)
        block.arguments = parse_arguments("".join(self._parts), block)
        self._parts = []
        return ToolCallEndEvent(content_index=index, tool_call=block, partial=self.message)

    def _open_block(self, block: Any) -> int:
        if self._open is not None:
            raise RuntimeError("close() the open content block before starting another")
        self.message.content.append(block)
        self._block = block
        self._open = len(self.message.content) - 1
        return self._open


def parse_arguments(raw: str, call: ToolCall | None = None) -> dict:
    """Parse complete tool-call arguments; on bad JSON keep the raw text on the call."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = None
    if isinstance(value, dict):
        return value
    if call is not None:
        call.extra["partialArgs"] = raw
    return {}
