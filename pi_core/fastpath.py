"""Session lines read and written without cattrs: the shapes that make up nearly every line.

A 20,000-entry session spent most of its resume structuring message entries through
cattrs' generated code (one hook call per field). :func:`fast_line` builds the common
shapes (user, assistant and tool-result messages with text, tool-call and thinking
blocks; the header and the model and thinking-level changes) by hand, and hands
everything else to cattrs: a line of another type, a missing or odd field, a stop reason
cattrs would refuse, or any exception. :func:`fast_json` writes what a turn writes the
same way, so a resume need not import cattrs at all. The objects and the JSON are
exactly cattrs' (tests/core/test_fastpath.py checks both on every fixture line and on
generated ones), so cattrs stays the one definition of the format.
"""

from __future__ import annotations

from sys import intern
from typing import Any, Callable, get_args

from pi_core.protocol.entries import (
    MessageEntry,
    ModelChangeEntry,
    SessionHeader,
    ThinkingLevelChangeEntry,
)
from pi_core.protocol.messages import (
    AssistantMessage,
    Cost,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

_STOP_REASONS = get_args(StopReason)  # cattrs refuses any other value, as a tuple's `in`
_STOPS = {reason: reason for reason in _STOP_REASONS}  # one copy of each

_ENTRY = frozenset(("type", "id", "parentId", "timestamp", "message"))
_TEXT = frozenset(("type", "text", "textSignature"))
_THINKING = frozenset(("type", "thinking", "thinkingSignature", "redacted"))
_CALL = frozenset(("type", "id", "name", "arguments", "thoughtSignature"))
_COST = frozenset(("input", "output", "cacheRead", "cacheWrite", "total"))
_USAGE = frozenset(("input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"))
_USER = frozenset(("role", "content", "timestamp"))
_ASSISTANT = frozenset(("role", "content", "api", "provider", "model", "usage", "stopReason",
                        "timestamp", "responseId", "errorMessage"))
_RESULT = frozenset(("role", "toolCallId", "toolName", "content", "details", "isError",
                     "timestamp"))


class _Slow(Exception):
    """This value is not one of the fast shapes: cattrs reads the whole line."""


def _extra(obj: Any, d: dict, known: frozenset) -> Any:
    """``obj`` with the keys of ``d`` it does not know, as codec's structure hook keeps
    them; called only when there are some (the check is inlined: 90,000 objects)."""
    obj.extra = {k: v for k, v in d.items() if k not in known}
    return obj


_text_known, _thinking_known, _call_known = _TEXT.issuperset, _THINKING.issuperset, _CALL.issuperset
_cost_known, _usage_known, _entry_known = _COST.issuperset, _USAGE.issuperset, _ENTRY.issuperset
_user_known, _assistant_known = _USER.issuperset, _ASSISTANT.issuperset
_result_known = _RESULT.issuperset


def make_fast_line(slow_line: Callable[[Any], Any], structure_content: Callable[[Any], Any],
                   structure_message: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A line reader that takes the fast path where it can and ``slow_line`` (cattrs'
    dispatcher) otherwise; the two other hooks read what the fast path does not know
    inside a message (an image block, a message of another role).

    Where the keys read by name (the required ones) are all an object has, its ``len``
    says so and the comparison with the known keys is skipped. The names a long session
    repeats (api, provider, model, stop reason, tool names) are interned: one copy each."""

    def blocks(value: Any) -> list:
        if type(value) is not list:
            raise _Slow
        if len(value) == 1:  # one plain text block: a prompt, a tool's output
            b = value[0]
            if type(b) is dict and len(b) == 2 and b.get("type") == "text" and "text" in b:
                return [TextContent(b["text"])]
        out = []
        add = out.append
        for b in value:
            kind = b.get("type") if type(b) is dict else None
            if kind == "text":
                if len(b) == 2 and "text" in b:  # type and text: nothing else to look at
                    add(TextContent(b["text"]))
                    continue
                block = TextContent(b.get("text", ""), b.get("textSignature"))
                add(block if _text_known(b) else _extra(block, b, _TEXT))
            elif kind == "toolCall":
                if "arguments" in b:  # with type, id and name read by key: len 4 is all known
                    call = ToolCall(b["id"], intern(b["name"]), b["arguments"],
                                    b.get("thoughtSignature"))
                    add(call if len(b) == 4 or _call_known(b) else _extra(call, b, _CALL))
                else:
                    call = ToolCall(b["id"], intern(b["name"]),
                                    thought_signature=b.get("thoughtSignature"))
                    add(call if _call_known(b) else _extra(call, b, _CALL))
            elif kind == "thinking":
                block = ThinkingContent(b.get("thinking", ""), b.get("thinkingSignature"),
                                        b.get("redacted"))
                add(block if _thinking_known(b) else _extra(block, b, _THINKING))
            else:
                add(structure_content(b))
        return out

    def usage(u: Any) -> Usage:
        try:  # the shape pi writes: every key read by name, and no other (the lengths)
            c = u["cost"]
            if len(u) == 6 and len(c) == 5:
                return Usage(u["input"], u["output"], u["cacheRead"], u["cacheWrite"],
                             u["totalTokens"], Cost(c["input"], c["output"], c["cacheRead"],
                                                    c["cacheWrite"], c["total"]))
        except (KeyError, TypeError):
            pass
        return any_usage(u)

    def any_usage(u: Any) -> Usage:
        if type(u) is not dict:
            raise _Slow
        if "cost" in u:
            c = u["cost"]
            if type(c) is not dict:
                raise _Slow
            cost = Cost(c.get("input", 0), c.get("output", 0), c.get("cacheRead", 0),
                        c.get("cacheWrite", 0), c.get("total", 0))
            if not _cost_known(c):
                _extra(cost, c, _COST)
            obj = Usage(u.get("input", 0), u.get("output", 0), u.get("cacheRead", 0),
                        u.get("cacheWrite", 0), u.get("totalTokens", 0), cost)
        else:
            obj = Usage(u.get("input", 0), u.get("output", 0), u.get("cacheRead", 0),
                        u.get("cacheWrite", 0), u.get("totalTokens", 0))
        return obj if _usage_known(u) else _extra(obj, u, _USAGE)

    def message(d: Any) -> Any:
        role = d.get("role") if type(d) is dict else None
        if role == "assistant":
            stop = d["stopReason"]
            if stop not in _STOP_REASONS:
                raise _Slow
            obj = AssistantMessage(
                blocks(d["content"]), intern(d["api"]), intern(d["provider"]),
                intern(d["model"]), usage(d["usage"]), _STOPS[stop], d["timestamp"],
                d.get("responseId"), d.get("errorMessage"))
            return obj if len(d) == 8 or _assistant_known(d) else _extra(obj, d, _ASSISTANT)
        if role == "toolResult":
            obj = ToolResultMessage(d["toolCallId"], intern(d["toolName"]), blocks(d["content"]),
                                    d.get("details"), d["isError"], d["timestamp"])
            return obj if len(d) == 6 or _result_known(d) else _extra(obj, d, _RESULT)
        if role == "user":
            content = d["content"]
            if type(content) is not str:
                content = blocks(content)
            obj = UserMessage(content, d["timestamp"])
            return obj if len(d) == 3 or _user_known(d) else _extra(obj, d, _USER)
        return structure_message(d)

    def fast_line(d: Any) -> Any:
        kind = d.get("type") if type(d) is dict else None
        try:
            if kind == "message":
                entry = MessageEntry(id=d["id"], parent_id=d["parentId"],
                                     timestamp=d["timestamp"], message=message(d["message"]))
                return entry if len(d) == 5 or _entry_known(d) else _extra(entry, d, _ENTRY)
            # The lines every session starts with, in the one shape pi writes them (every
            # key read by name, and no other): reading them needs no cattrs at all.
            if kind == "model_change" and len(d) == 6:
                return ModelChangeEntry(id=d["id"], parent_id=d["parentId"],
                                        timestamp=d["timestamp"], provider=d["provider"],
                                        model_id=d["modelId"])
            if kind == "thinking_level_change" and len(d) == 5:
                return ThinkingLevelChangeEntry(id=d["id"], parent_id=d["parentId"],
                                                timestamp=d["timestamp"],
                                                thinking_level=d["thinkingLevel"])
            if kind == "session" and len(d) == 5 + ("parentSession" in d):
                return SessionHeader(d["version"], d["id"], d["timestamp"], d["cwd"],
                                     d.get("parentSession"))
        except Exception:  # _Slow, a missing key, anything: cattrs decides
            pass
        return slow_line(d)

    return fast_line


# ---------------------------------------------------------------- writing

_WRITTEN = frozenset((MessageEntry, ModelChangeEntry, ThinkingLevelChangeEntry, SessionHeader,
                      UserMessage, AssistantMessage, ToolResultMessage, TextContent, ToolCall,
                      ThinkingContent))


def fast_json(obj: Any) -> Any:
    """The JSON value of the objects a turn writes (message entries with their common
    blocks, model and thinking-level changes, the header), as cattrs writes them: keys in
    declaration order, an optional attribute left out while it is ``None``. Raises
    :class:`_Slow` for anything else, or for an object with keys kept in ``extra``
    (cattrs writes those); tests/core/test_fastpath.py checks both agree."""
    kind = type(obj)
    if kind not in _WRITTEN or obj._extra:
        raise _Slow
    if kind is MessageEntry:
        return {"type": obj.type, "id": obj.id, "parentId": obj.parent_id,
                "timestamp": obj.timestamp, "message": _message_json(obj.message)}
    if kind is ModelChangeEntry:
        return {"type": obj.type, "id": obj.id, "parentId": obj.parent_id,
                "timestamp": obj.timestamp, "provider": obj.provider, "modelId": obj.model_id}
    if kind is ThinkingLevelChangeEntry:
        return {"type": obj.type, "id": obj.id, "parentId": obj.parent_id,
                "timestamp": obj.timestamp, "thinkingLevel": obj.thinking_level}
    if kind is SessionHeader:
        d = {"type": obj.type, "version": obj.version, "id": obj.id,
             "timestamp": obj.timestamp, "cwd": obj.cwd}
        if obj.parent_session is not None:
            d["parentSession"] = obj.parent_session
        return d
    raise _Slow


def _message_json(m: Any) -> dict:
    kind = type(m)
    if kind not in _WRITTEN or m._extra:
        raise _Slow
    if kind is UserMessage:
        content = m.content
        return {"role": m.role,
                "content": content if type(content) is str else _blocks_json(content),
                "timestamp": m.timestamp}
    if kind is AssistantMessage:
        d = {"role": m.role, "content": _blocks_json(m.content), "api": m.api,
             "provider": m.provider, "model": m.model, "usage": _usage_json(m.usage),
             "stopReason": m.stop_reason, "timestamp": m.timestamp}
        if m.response_id is not None:
            d["responseId"] = m.response_id
        if m.error_message is not None:
            d["errorMessage"] = m.error_message
        return d
    if kind is ToolResultMessage:
        d = {"role": m.role, "toolCallId": m.tool_call_id, "toolName": m.tool_name,
             "content": _blocks_json(m.content)}
        if m.details is not None:
            d["details"] = m.details
        d["isError"] = m.is_error
        d["timestamp"] = m.timestamp
        return d
    raise _Slow


def _blocks_json(blocks: Any) -> list:
    if type(blocks) is not list:
        raise _Slow
    out = []
    for b in blocks:
        kind = type(b)
        if kind not in _WRITTEN or b._extra:
            raise _Slow
        if kind is TextContent:
            d = {"type": b.type, "text": b.text}
            if b.text_signature is not None:
                d["textSignature"] = b.text_signature
        elif kind is ToolCall:
            d = {"type": b.type, "id": b.id, "name": b.name, "arguments": b.arguments}
            if b.thought_signature is not None:
                d["thoughtSignature"] = b.thought_signature
        elif kind is ThinkingContent:
            d = {"type": b.type, "thinking": b.thinking}
            if b.thinking_signature is not None:
                d["thinkingSignature"] = b.thinking_signature
            if b.redacted is not None:
                d["redacted"] = b.redacted
        else:
            raise _Slow
        out.append(d)
    return out


def _usage_json(u: Any) -> dict:
    c = u.cost
    if type(u) is not Usage or type(c) is not Cost or u._extra or c._extra:
        raise _Slow
    return {"input": u.input, "output": u.output, "cacheRead": u.cache_read,
            "cacheWrite": u.cache_write, "totalTokens": u.total_tokens,
            "cost": {"input": c.input, "output": c.output, "cacheRead": c.cache_read,
                     "cacheWrite": c.cache_write, "total": c.total}}
