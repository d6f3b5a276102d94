"""The assistant message event stream every provider speaks (pi-ai's vocabulary).

A provider's ``stream()`` is an async iterator of these events: ``start``, then
``text_*``, ``thinking_*`` and ``toolcall_*`` events (each with its ``content_index`` and
the ``partial`` message, the same object updated in place), and finally exactly one of
``done`` (with the final ``message``) or ``error`` (``reason`` error or aborted, the
message carrying ``error_message``). Providers never raise for request or model
failures; they end the stream with ``error``.

:class:`pi_plugins.providers.kit.MessageBuilder` keeps that contract for provider authors:
it owns the partial message and returns the event for each step."""

from __future__ import annotations

from typing import Literal

from pi_core.protocol.messages import AssistantMessage, StopReason, ToolCall, _filled
from pi_core.protocol.records import field, record


@record
class StartEvent:
    type: Literal["start"] = field(default="start", init=False)
    partial: AssistantMessage = _filled()


@record
class TextStartEvent:
    type: Literal["text_start"] = field(default="text_start", init=False)
    content_index: int = 0
    partial: AssistantMessage = _filled()


@record
class TextDeltaEvent:
    type: Literal["text_delta"] = field(default="text_delta", init=False)
    content_index: int = 0
    delta: str = ""
    partial: AssistantMessage = _filled()


@record
class TextEndEvent:
    type: Literal["text_end"] = field(default="text_end", init=False)
    content_index: int = 0
    content: str = ""
    partial: AssistantMessage = _filled()


@record
class ThinkingStartEvent:
    type: Literal["thinking_start"] = field(default="thinking_start", init=False)
    content_index: int = 0
    partial: AssistantMessage = _filled()


@record
class ThinkingDeltaEvent:
    type: Literal["thinking_delta"] = field(default="thinking_delta", init=False)
    content_index: int = 0
    delta: str = ""
    partial: AssistantMessage = _filled()


@record
class ThinkingEndEvent:
    type: Literal["thinking_end"] = field(default="thinking_end", init=False)
    content_index: int = 0
    content: str = ""
    partial: AssistantMessage = _filled()


@record
class ToolCallStartEvent:
    type: Literal["toolcall_start"] = field(default="toolcall_start", init=False)
    content_index: int = 0
    partial: AssistantMessage = _filled()


@record
class ToolCallDeltaEvent:
    type: Literal["toolcall_delta"] = field(default="toolcall_delta", init=False)
    content_index: int = 0
    delta: str = ""
    partial: AssistantMessage = _filled()


@record
class ToolCallEndEvent:
    type: Literal["toolcall_end"] = field(default="toolcall_end", init=False)
    content_index: int = 0
    tool_call: ToolCall = _filled()
    partial: AssistantMessage = _filled()


@record
class DoneEvent:
    type: Literal["done"] = field(default="done", init=False)
    reason: StopReason = "stop"
    message: AssistantMessage = _filled()


@record
class ErrorEvent:
    type: Literal["error"] = field(default="error", init=False)
    reason: StopReason = "error"
    error: AssistantMessage = _filled()


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
