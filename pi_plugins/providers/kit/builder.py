"""Building one assistant message from a provider's streamed pieces, with the
:mod:`pi_core.protocol.stream` event for each step: the provider author's side of the
stream contract.
"""

from __future__ import annotations

from typing import Any

from pi_core.protocol.messages import (
    AssistantMessage,
    Failure,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
)
from pi_core.protocol.stream import (
    DoneEvent,
    ErrorEvent,
    StartEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from pi_plugins.providers.kit.partial_json import PartialJson, parse_complete


class MessageBuilder:
    """Builds one assistant message from streamed pieces and returns the matching events.

    Text and thinking deltas are appended to their block (joined when read, see
    :class:`pi_core.protocol.messages._Streamed`), so ``partial`` always shows what has streamed
    and a long answer costs linear time. Tool-call arguments are read incrementally as they stream
    (:class:`~pi_plugins.providers.kit.partial_json.PartialJson`, linear time whatever their size), so a
    partial tool call shows its partial arguments; when the call ends its complete text
    is parsed once. Malformed JSON leaves ``{}`` and keeps the raw text in
    ``extra["partialArgs"]`` so nothing the model wrote is lost.

    Several blocks may be open at once (a wire format may interleave them, e.g. parallel
    tool calls by index); a delta or ``close`` without ``index`` goes to the block opened
    last that is still open.
    """

    def __init__(self, *, api: str, provider: str, model: str):
        self.message = AssistantMessage(api=api, provider=provider, model=model)
        #: content index -> state of each open block, in the order they were opened
        self._open: dict[int, _OpenBlock] = {}

    # -- lifecycle

    def start(self) -> StartEvent:
        return StartEvent(partial=self.message)

    def done(self, reason: StopReason | None = None) -> DoneEvent:
        """Close any open blocks (yield :meth:`close_all` first to emit their end events)
        and finish; ``reason`` defaults to toolUse when the message holds tool calls,
        else stop."""
        self.close_all()
        if reason is None:
            reason = "toolUse" if self.message.tool_calls else "stop"
        self.message.stop_reason = reason
        return DoneEvent(reason=reason, message=self.message)

    def error(
        self, message: str, *, aborted: bool = False, failure: Failure | None = None
    ) -> ErrorEvent:
        """Finish with an error; what streamed so far stays in the message. ``failure``
        tells the harness whether a retry or a compaction may help."""
        self.close_all()
        reason: StopReason = "aborted" if aborted else "error"
        self.message.stop_reason = reason
        self.message.error_message = message
        self.message.failure = failure
        return ErrorEvent(reason=reason, error=self.message)

    # -- blocks

    @property
    def is_open(self) -> bool:
        return bool(self._open)

    def block(self, index: int | None = None) -> Any:
        """The open content block at ``index`` (default: the one opened last)."""
        return self._state(index).block

    def text_start(self, signature: str | None = None) -> TextStartEvent:
        index = self._open_block(TextContent(text_signature=signature))
        return TextStartEvent(content_index=index, partial=self.message)

    def text_delta(self, delta: str, index: int | None = None) -> TextDeltaEvent:
        state = self._state(index)
        state.block.append(delta)
        return TextDeltaEvent(content_index=state.index, delta=delta, partial=self.message)

    def thinking_start(
        self, signature: str | None = None, *, text: str = "", redacted: bool | None = None
    ) -> ThinkingStartEvent:
        block = ThinkingContent(thinking=text, thinking_signature=signature, redacted=redacted)
        index = self._open_block(block)
        return ThinkingStartEvent(content_index=index, partial=self.message)

    def thinking_delta(self, delta: str, index: int | None = None) -> ThinkingDeltaEvent:
        state = self._state(index)
        state.block.append(delta)
        return ThinkingDeltaEvent(content_index=state.index, delta=delta, partial=self.message)

    def toolcall_start(self, id: str, name: str, **fields: Any) -> ToolCallStartEvent:
        """Open a tool call; ``fields`` are further :class:`ToolCall` attributes
        (``thought_signature``)."""
        index = self._open_block(ToolCall(id=id, name=name, **fields))
        self._open[index].parser = PartialJson()
        return ToolCallStartEvent(content_index=index, partial=self.message)

    def toolcall_delta(self, delta: str, index: int | None = None) -> ToolCallDeltaEvent:
        state = self._open.get(index) if index is not None else None
        if state is None:
            state = self._state(index)
        state.parts.append(delta)
        value = state.parser.feed(delta)  # type: ignore[union-attr]  # a tool call's state has one
        if isinstance(value, dict):
            state.block.arguments = value
        return ToolCallDeltaEvent(content_index=state.index, delta=delta, partial=self.message)

    def close(self, index: int | None = None) -> TextEndEvent | ThinkingEndEvent | ToolCallEndEvent | None:
        """End an open block (default: the one opened last) and return its end event;
        ``None`` when no block is open."""
        if not self._open:
            return None
        state = self._open.pop(self._state(index).index)
        block = state.block
        if isinstance(block, TextContent):
            return TextEndEvent(content_index=state.index, content=block.text, partial=self.message)
        if isinstance(block, ThinkingContent):
            return ThinkingEndEvent(content_index=state.index, content=block.thinking, partial=self.message)
        block.arguments = parse_arguments("".join(state.parts), block)
        return ToolCallEndEvent(content_index=state.index, tool_call=block, partial=self.message)

    def close_all(self) -> list[TextEndEvent | ThinkingEndEvent | ToolCallEndEvent]:
        """End every open block, in content order; returns their end events."""
        return [event for index in sorted(self._open) if (event := self.close(index)) is not None]

    def _state(self, index: int | None) -> _OpenBlock:
        try:
            return self._open[next(reversed(self._open)) if index is None else index]
        except (KeyError, StopIteration):
            what = "no content block is open" if index is None else f"content block {index} is not open"
            raise RuntimeError(f"{what}: start one first") from None

    def _open_block(self, block: Any) -> int:
        self.message.content.append(block)
        index = len(self.message.content) - 1
        self._open[index] = _OpenBlock(index, block)
        return index


class _OpenBlock:
    """A block still streaming; tool calls also keep their raw argument text."""

    __slots__ = ("index", "block", "parts", "parser")

    def __init__(self, index: int, block: Any):
        self.index = index
        self.block = block
        self.parts: list[str] = []
        self.parser: PartialJson | None = None


def parse_arguments(raw: str, call: ToolCall | None = None) -> dict:
    """Parse complete tool-call arguments; on bad JSON keep the raw text on the call."""
    if not raw.strip():
        return {}
    try:
        value = parse_complete(raw)
    except ValueError:
        value = None
    if isinstance(value, dict):
        return value
    if call is not None:
        call.extra["partialArgs"] = raw
    return {}
