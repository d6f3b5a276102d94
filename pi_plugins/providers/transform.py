"""Adapting a conversation to the model it is sent to (pi's ``transformMessages``).

A session may switch model and provider at any time, but what one provider wrote is
not always valid for another. Before every request the history is adapted to the target:

- thinking from the same model is kept with its signature (needed to replay it);
  another model's thinking is dropped, as pi 1.6 drops it: its signature is no good to
  the new model, and as plain text (pi 0.73.1 sent it so) the new model took it for
  part of the visible reply;
- tool-call ids another API would reject are rewritten, together with their results;
- a thought signature of another model is dropped from tool calls;
- images become a short placeholder for text-only models;
- errored and aborted assistant messages are skipped (incomplete turns);
- a tool call left without a result gets an error result, so the history stays valid.

The input messages are never changed; changed messages are copies.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from pi_core.protocol.messages import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from pi_core.protocol.model import Model

USER_IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"
TOOL_IMAGE_PLACEHOLDER = "(tool image omitted: model does not support images)"
NO_RESULT_TEXT = "No result provided"

#: (tool call id, target model, the assistant message it came from) -> id to send
IdNormalizer = Callable[[str, Model, AssistantMessage], str]


def same_model(message: AssistantMessage, model: Model) -> bool:
    return (message.provider, message.api, message.model) == (model.provider, model.api, model.id)


def _without_images(content: list, placeholder: str) -> list:
    result: list = []
    previous_was_placeholder = False
    for block in content:
        if isinstance(block, ImageContent):
            if not previous_was_placeholder:
                result.append(TextContent(placeholder))
            previous_was_placeholder = True
            continue
        result.append(block)
        previous_was_placeholder = isinstance(block, TextContent) and block.text == placeholder
    return result


def _has_images(content: list) -> bool:
    for b in content:  # a text block is looked at no further
        if type(b) is not TextContent and isinstance(b, ImageContent):
            return True
    return False


def _adapt_images(message: Message, model: Model) -> Message:
    if model.accepts_images or type(message) is AssistantMessage:
        return message
    if isinstance(message, UserMessage) and isinstance(message.content, list):
        if _has_images(message.content):
            return attrs.evolve(message, content=_without_images(message.content, USER_IMAGE_PLACEHOLDER))
    elif isinstance(message, ToolResultMessage):
        if _has_images(message.content):
            return attrs.evolve(message, content=_without_images(message.content, TOOL_IMAGE_PLACEHOLDER))
    return message


def blank(text: str | None) -> bool:
    """Empty or only whitespace (``not text.strip()`` without copying a long text)."""
    return not text or text.isspace()


def _blank_thinking(block: object) -> bool:
    """An unsigned, unredacted thinking block with no text: dropped even for its own model."""
    return (isinstance(block, ThinkingContent) and not block.redacted
            and not block.thinking_signature and blank(block.thinking))


def _adapt_assistant(
    message: AssistantMessage, model: Model, normalize: IdNormalizer | None, renamed: dict[str, str]
) -> AssistantMessage:
    same = same_model(message, model)
    if same:
        for b in message.content:
            if type(b) is ThinkingContent and _blank_thinking(b):
                break
        else:
            return message  # nothing would change (the loop below): most of a long history
    content: list = []
    for block in message.content:
        if isinstance(block, ThinkingContent):
            if block.redacted:
                if same:
                    content.append(block)
                continue
            if not same:
                continue  # another model's thinking is dropped, as pi 1.6 drops it
            if block.thinking_signature:
                content.append(block)  # kept even if empty (encrypted reasoning)
            elif not blank(block.thinking):
                content.append(block)
        elif isinstance(block, TextContent):
            content.append(block if same else TextContent(block.text))
        elif isinstance(block, ToolCall):
            call = block
            if not same and call.thought_signature:
                call = attrs.evolve(call, thought_signature=None)
            if not same and normalize is not None:
                new_id = normalize(call.id, model, message)
                if new_id != call.id:
                    renamed[call.id] = new_id
                    call = attrs.evolve(call, id=new_id)
            content.append(call)
        else:
            content.append(block)
    if content == message.content and all(a is b for a, b in zip(content, message.content, strict=True)):
        return message
    return attrs.evolve(message, content=content)


def transform_messages(
    messages: list[Message], model: Model, normalize_id: IdNormalizer | None = None
) -> list[Message]:
    """The history adapted to ``model`` (see the module doc); ``normalize_id`` rewrites
    the tool-call ids of other models into ones the target API accepts."""
    renamed: dict[str, str] = {}
    result: list[Message] = []
    add = result.append
    pending: list[ToolCall] = []  # calls of the last assistant message not yet answered
    answered: set[str] = set()
    images = model.accepts_images

    def answer_pending() -> None:
        for call in pending:
            if call.id not in answered:
                add(ToolResultMessage(
                    tool_call_id=call.id, tool_name=call.name,
                    content=[TextContent(NO_RESULT_TEXT)], is_error=True,
                ))
        pending.clear()
        answered.clear()

    # One pass: a resumed history has tens of thousands. The exact classes are tested
    # through ``kind``, which mypy does not narrow ``message`` by: hence the ignores below.
    for message in messages:
        if not images:
            message = _adapt_images(message, model)
        kind = type(message)
        if kind is AssistantMessage or (kind is not ToolResultMessage and kind is not UserMessage
                                        and isinstance(message, AssistantMessage)):
            message = _adapt_assistant(message, model, normalize_id, renamed)  # type: ignore[arg-type]
            if pending:
                answer_pending()
            answered.clear()
            if message.stop_reason in ("error", "aborted"):
                continue
            for b in message.content:
                if isinstance(b, ToolCall):
                    pending.append(b)
            add(message)
        elif kind is ToolResultMessage or isinstance(message, ToolResultMessage):
            new_id = renamed.get(message.tool_call_id)  # type: ignore[union-attr]
            if new_id is not None and new_id != message.tool_call_id:  # type: ignore[union-attr]
                message = attrs.evolve(message, tool_call_id=new_id)  # type: ignore[arg-type]
            answered.add(message.tool_call_id)  # type: ignore[union-attr]
            add(message)
        elif kind is UserMessage or isinstance(message, UserMessage):
            if pending:
                answer_pending()
            answered.clear()
            add(message)
        else:
            add(message)
    answer_pending()
    return result


def keep_id_chars(id: str, limit: int = 64) -> str:
    """Ids as Anthropic and others accept them: ``[a-zA-Z0-9_-]``, at most ``limit``."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "_-") else "_" for c in id)[:limit]


def short_hash(text: str) -> str:
    """A short deterministic hash (pi's ``shortHash``, so ids match pi's)."""
    h1, h2 = 0xDEADBEEF, 0x41C6CE57
    for unit in _utf16_units(text):
        h1 = _imul(h1 ^ unit, 2654435761)
        h2 = _imul(h2 ^ unit, 1597334677)
    h1 = _imul(h1 ^ (h1 >> 16), 2246822507) ^ _imul(h2 ^ (h2 >> 13), 3266489909)
    h2 = _imul(h2 ^ (h2 >> 16), 2246822507) ^ _imul(h1 ^ (h1 >> 13), 3266489909)
    return _base36(h2 & 0xFFFFFFFF) + _base36(h1 & 0xFFFFFFFF)


def _utf16_units(text: str):
    data = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(data), 2):
        yield data[i] | (data[i + 1] << 8)


def _imul(a: int, b: int) -> int:
    return ((a & 0xFFFFFFFF) * (b & 0xFFFFFFFF)) & 0xFFFFFFFF


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out
