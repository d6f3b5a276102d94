"""The hand-written fast path for session lines makes exactly the objects cattrs makes,
and fails exactly where cattrs fails (then cattrs itself reads the line)."""

from __future__ import annotations

import json

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.fixtures import SESSION_FIXTURES

from pi_core.protocol import codec
from pi_core.protocol.entries import MessageEntry, iso_now, new_entry_id, new_session_id
from pi_core.protocol.messages import AssistantMessage, TextContent, ToolCall, now_ms

FIXTURE_LINES = [
    pytest.param(line, id=f"{path.stem}:{n}")
    for path in sorted(SESSION_FIXTURES.glob("*.jsonl"))
    for n, line in enumerate(path.read_text().splitlines(), 1)
]


CLOCKS = (new_entry_id, new_session_id, iso_now, now_ms)  # a missing id or time is made anew each read


def same(a, b) -> bool:
    """Equal as objects, field by field, ``extra`` and class included (attrs' ``==``
    leaves ``extra`` out); an id or time made for a missing key only has the same type."""
    if type(a) is not type(b):
        return False
    if attrs.has(type(a)):
        return all(
            type(x) is type(y) if (isinstance(f.default, attrs.Factory)
                                   and f.default.factory in CLOCKS and x != y) else same(x, y)
            for f in attrs.fields(type(a))
            for x, y in [(getattr(a, f.name), getattr(b, f.name))])
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a == b


def outcome(read, value):
    try:
        return "ok", read(value)
    except Exception as exc:  # noqa: BLE001 - the kind of failure is what is compared
        return "error", type(exc)


def assert_agree(value) -> None:
    fast, slow = outcome(codec.fast_line, value), outcome(codec.structure_line, value)
    assert fast[0] == slow[0], (fast, slow)
    if fast[0] == "ok":
        assert same(fast[1], slow[1]), (fast[1], slow[1])
    else:
        assert fast[1] is slow[1]


def test_the_fast_path_reads_the_common_shapes_itself():
    """Not cattrs under another name: a plain assistant line never reaches the fallback."""
    value = {"type": "message", "id": "a1b2c3d4", "parentId": None, "timestamp": "t",
             "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}],
                         "api": "x", "provider": "p", "model": "m", "usage": {},
                         "stopReason": "stop", "timestamp": 1}}
    calls = []
    fast = codec.make_fast_line(lambda d: calls.append(d), codec.structure_content,
                                codec.structure_message)
    entry = fast(value)
    assert calls == [] and isinstance(entry, MessageEntry)
    assert isinstance(entry.message, AssistantMessage)
    assert entry.message.content == [TextContent("hi")]


@pytest.mark.parametrize("line", FIXTURE_LINES)
def test_fast_path_and_cattrs_agree_on_every_fixture_line(line):
    assert_agree(json.loads(line))


scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.text(max_size=4),
                    st.sampled_from(["stop", "toolUse", "length", "error", "aborted", "Stop"]))
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=6)


def maybe(fields: dict) -> st.SearchStrategy[dict]:
    """Dicts with any subset of ``fields`` (each from its strategy), sometimes an extra
    key, sometimes a value of the wrong kind."""
    keys = list(fields)

    @st.composite
    def build(draw):
        out = {}
        for key in keys:
            if draw(st.integers(0, 9)) == 0:
                continue  # missing
            out[key] = draw(json_values) if draw(st.integers(0, 11)) == 0 else draw(fields[key])
        if draw(st.integers(0, 5)) == 0:
            out[draw(st.sampled_from(["future", "zzz", "signature"]))] = draw(json_values)
        return out

    return build()


text = st.text(max_size=6)
cost = maybe({k: st.floats(0, 9, allow_nan=False) for k in
              ("input", "output", "cacheRead", "cacheWrite", "total")})
usage = maybe({"input": st.integers(0, 9), "output": st.integers(0, 9),
               "cacheRead": st.integers(0, 9), "cacheWrite": st.integers(0, 9),
               "totalTokens": st.integers(0, 9), "cost": cost})
block = st.one_of(
    maybe({"type": st.just("text"), "text": text, "textSignature": st.one_of(st.none(), text)}),
    maybe({"type": st.just("thinking"), "thinking": text, "thinkingSignature": text,
           "redacted": st.booleans()}),
    maybe({"type": st.just("toolCall"), "id": text, "name": text,
           "arguments": st.dictionaries(text, scalars, max_size=2), "thoughtSignature": text}),
    maybe({"type": st.just("image"), "data": text, "mimeType": st.just("image/png")}),
    maybe({"type": st.sampled_from(["video", 3])}),
)
blocks = st.lists(block, max_size=3)
message = st.one_of(
    maybe({"role": st.just("user"), "content": st.one_of(text, blocks),
           "timestamp": st.integers(0, 9)}),
    maybe({"role": st.just("assistant"), "content": blocks, "api": text, "provider": text,
           "model": text, "usage": usage,
           "stopReason": st.sampled_from(["stop", "toolUse", "length", "error", "aborted", "x"]),
           "timestamp": st.integers(0, 9), "responseId": text, "errorMessage": text}),
    maybe({"role": st.just("toolResult"), "toolCallId": text, "toolName": text,
           "content": blocks, "details": json_values, "isError": st.booleans(),
           "timestamp": st.integers(0, 9)}),
    maybe({"role": st.sampled_from(["custom", "bashExecution", "ghost"]), "customType": text,
           "command": text, "content": text}),
)
entry = maybe({"type": st.just("message"), "id": text, "parentId": st.one_of(st.none(), text),
               "timestamp": text, "message": message})


@settings(max_examples=600, deadline=None)
@given(entry)
def test_fast_path_and_cattrs_agree_on_generated_message_lines(value):
    assert_agree(value)


def test_a_tool_call_without_arguments_gets_its_own_empty_dict():
    value = {"type": "message", "id": "1", "parentId": None, "timestamp": "t",
             "message": {"role": "assistant", "content": [
                 {"type": "toolCall", "id": "c", "name": "n"}], "api": "", "provider": "",
                 "model": "", "usage": {}, "stopReason": "toolUse", "timestamp": 0}}
    first, second = codec.fast_line(value), codec.fast_line(value)
    call = first.message.content[0]
    assert isinstance(call, ToolCall) and call.arguments == {}
    assert call.arguments is not second.message.content[0].arguments


change = st.one_of(
    maybe({"type": st.just("model_change"), "id": text, "parentId": st.one_of(st.none(), text),
           "timestamp": text, "provider": text, "modelId": text}),
    maybe({"type": st.just("thinking_level_change"), "id": text,
           "parentId": st.one_of(st.none(), text), "timestamp": text,
           "thinkingLevel": st.sampled_from(["off", "low", "high"])}),
    maybe({"type": st.just("session"), "version": st.integers(1, 4), "id": text,
           "timestamp": text, "cwd": text, "parentSession": st.one_of(st.none(), text)}),
)


@settings(max_examples=300, deadline=None)
@given(change)
def test_fast_path_and_cattrs_agree_on_generated_header_and_change_lines(value):
    assert_agree(value)


def written_the_same(obj) -> None:
    """The fast writer gives exactly cattrs' JSON, key order included, or steps aside."""
    from pi_core.fastpath import _Slow, fast_json

    slow = codec.converter().unstructure(obj)
    try:
        fast = fast_json(obj)
    except _Slow:
        return
    assert json.dumps(fast) == json.dumps(slow)


@pytest.mark.parametrize("line", FIXTURE_LINES)
def test_fast_writer_and_cattrs_agree_on_every_fixture_line(line):
    written_the_same(codec.structure_line(json.loads(line)))


@settings(max_examples=600, deadline=None)
@given(st.one_of(entry, change))
def test_fast_writer_and_cattrs_agree_on_generated_lines(value):
    try:
        obj = codec.structure_line(value)
    except Exception:  # noqa: BLE001 - a line cattrs cannot read is not written
        return
    written_the_same(obj)


def test_the_lines_of_a_turn_are_written_without_cattrs():
    """What a resumed turn writes (the prompt, the answer, a change of model or thinking
    level) never needs the converter: cattrs stays unimported on that path."""
    from pi_core.protocol.entries import ModelChangeEntry, SessionHeader, ThinkingLevelChangeEntry
    from pi_core.fastpath import fast_json
    from pi_core.protocol.messages import ThinkingContent, ToolResultMessage, Usage, UserMessage

    for obj in (SessionHeader(cwd="/w"), ModelChangeEntry(provider="p", model_id="m"),
                ThinkingLevelChangeEntry(thinking_level="high"),
                MessageEntry(message=UserMessage([TextContent("hi")])),
                MessageEntry(message=AssistantMessage(
                    [ThinkingContent("t", "sig"), TextContent("a"), ToolCall("c", "read", {})],
                    "api", "p", "m", Usage(1, 2))),
                MessageEntry(message=ToolResultMessage("c", "read", [TextContent("r")]))):
        assert fast_json(obj) == codec.converter().unstructure(obj)
