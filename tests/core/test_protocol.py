"""The message protocol and its codec: pi's JSON shapes, read and written faithfully."""

import json

import pytest
from support.fixtures import SESSION_FIXTURES

from pi_core.protocol import codec
from pi_core.protocol.entries import CompactionEntry, MessageEntry, SessionHeader, UnknownEntry, iso_now, new_entry_id, new_session_id
from pi_core.protocol.messages import (
    AssistantMessage,
    Failure,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UnknownContent,
    UnknownMessage,
    UserMessage,
)
from pi_plugins.providers.kit import MessageBuilder

LINES = [
    pytest.param(line, id=f"{path.stem}:{n}")
    for path in sorted(SESSION_FIXTURES.glob("*.jsonl"))
    for n, line in enumerate(path.read_text().splitlines(), 1)
]


def test_the_fixtures_are_there():
    assert len(LINES) > 50


@pytest.mark.parametrize("line", LINES)
def test_every_fixture_line_loads_and_dumps_to_the_same_json_in_the_same_key_order(line):
    value = json.loads(line)
    obj = codec.line_from_json(value)
    assert not isinstance(obj, UnknownEntry)
    back = codec.to_json(obj)
    assert back == value
    assert json.dumps(back) == json.dumps(value)  # same key order, nested too


def test_fixture_lines_read_as_typed_objects():
    line = next(p.values[0] for p in LINES if '"role":"assistant"' in p.values[0] and "thinking" in p.values[0])
    entry = codec.line_from_json(codec.loads_json(line))
    message = entry.message
    assert isinstance(entry, MessageEntry) and isinstance(message, AssistantMessage)
    kinds = [type(c).__name__ for c in message.content]
    assert kinds[0] == "ThinkingContent" and message.content[0].thinking_signature.startswith("fakesig")
    assert message.usage.total_tokens == message.usage.input + message.usage.output
    assert message.stop_reason in ("toolUse", "stop")


def test_unknown_fields_roles_content_and_entry_types_survive_a_round_trip():
    future = {
        "type": "message", "id": "abcd1234", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "hi", "newThing": 1},
                                                     {"type": "hologram", "data": [1, 2]}],
                    "api": "x", "provider": "y", "model": "z",
                    "usage": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3,
                              "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                    "stopReason": "stop", "timestamp": 5, "diagnostics": [{"kind": "slow"}]},
        "futureField": {"nested": True},
    }
    entry = codec.line_from_json(future)
    assert isinstance(entry.message.content[1], UnknownContent)
    assert entry.extra == {"futureField": {"nested": True}}
    assert codec.to_json(entry) == future
    role = {"role": "hologram", "timestamp": 1, "beams": 3}
    assert isinstance(codec.message_from_json(role), UnknownMessage)
    assert codec.to_json(codec.message_from_json(role)) == role
    kind = {"type": "bookmark", "id": "1", "parentId": None, "timestamp": "t", "where": 2}
    assert codec.to_json(codec.line_from_json(kind)) == kind


def test_new_lines_are_written_in_pis_shape_and_key_order():
    header = SessionHeader(cwd="/home/me/app")
    line = json.loads(codec.dumps(header))
    assert list(line) == ["type", "version", "id", "timestamp", "cwd"]
    assert line["version"] == 3 and len(line["id"]) == 36 and line["id"][14] == "7"  # UUIDv7
    entry = MessageEntry(parent_id=None, message=UserMessage(content=[TextContent("héllo")]))
    text = codec.dumps(entry)
    assert '"parentId":null' in text and "héllo" in text  # null kept, non-ASCII as is
    assert list(json.loads(text)) == ["type", "id", "parentId", "timestamp", "message"]
    result = ToolResultMessage(tool_call_id="c1", tool_name="bash", content=[TextContent("ok")])
    assert list(codec.to_json(result)) == ["role", "toolCallId", "toolName", "content", "isError", "timestamp"]
    compaction = CompactionEntry(parent_id="a", summary="s", first_kept_entry_id="b", tokens_before=3)
    assert list(codec.to_json(compaction))[4:] == ["summary", "firstKeptEntryId", "tokensBefore"]


def test_ids_and_timestamps_have_pis_formats():
    import re

    assert re.fullmatch(r"[0-9a-f]{8}", new_entry_id())
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", iso_now())
    a, b = new_session_id(), new_session_id()
    assert a != b and a[:8] <= b[:8]  # time-ordered


def test_a_provider_failure_is_never_written():
    message = AssistantMessage(stop_reason="error", error_message="rate limited",
                               failure=Failure("retryable", 429, 2000))
    assert "failure" not in codec.to_json(message)


def test_malformed_lines_give_a_clear_error():
    with pytest.raises(codec.DecodeError, match="invalid JSON"):
        codec.loads_json('{"type": "message", ')
    with pytest.raises(codec.DecodeError, match="content must be"):
        codec.message_from_json({"role": "user", "content": 42, "timestamp": 1})
    with pytest.raises(codec.DecodeError, match="JSON object"):
        codec.line_from_json(["not", "an", "object"])


def test_a_tool_call_without_arguments_gets_its_own_empty_dict():
    value = {"type": "message", "id": "1", "parentId": None, "timestamp": "t",
             "message": {"role": "assistant", "content": [
                 {"type": "toolCall", "id": "c", "name": "n"}], "api": "", "provider": "",
                 "model": "", "usage": {}, "stopReason": "toolUse", "timestamp": 0}}
    first, second = codec.line_from_json(value), codec.line_from_json(value)
    call = first.message.content[0]
    assert call.arguments == {} and call.arguments is not second.message.content[0].arguments


def test_the_message_builder_emits_pis_event_sequence_and_final_message():
    b = MessageBuilder(api="a", provider="p", model="m")
    events = [b.start(), b.thinking_start("sig"), b.thinking_delta("hmm"), b.close(), b.text_start(),
              b.text_delta("Hel"), b.text_delta("lo"), b.close(), b.toolcall_start("c1", "read"),
              b.toolcall_delta('{"pa'), b.toolcall_delta('th": "x"}'), b.close(), b.done()]
    assert [e.type for e in events] == [
        "start", "thinking_start", "thinking_delta", "thinking_end", "text_start", "text_delta",
        "text_delta", "text_end", "toolcall_start", "toolcall_delta", "toolcall_delta",
        "toolcall_end", "done"]
    assert events[7].content == "Hello" and events[6].partial.content[1].text == "Hello"
    assert events[11].tool_call == ToolCall(id="c1", name="read", arguments={"path": "x"})
    assert events[-1].reason == "toolUse" and events[-1].message.stop_reason == "toolUse"


def test_malformed_tool_call_json_keeps_the_raw_text():
    b = MessageBuilder(api="a", provider="p", model="m")
    b.start(), b.toolcall_start("c1", "write"), b.toolcall_delta('{"path": "x", "content": "unterminated')
    end = b.close()
    assert end.tool_call.arguments == {}
    assert end.tool_call.extra["partialArgs"].endswith("unterminated")


def test_an_error_keeps_what_streamed_and_says_why():
    b = MessageBuilder(api="a", provider="p", model="m")
    b.start(), b.text_start(), b.text_delta("half an ans")
    event = b.error("connection lost", failure=Failure("retryable"))
    assert event.type == "error" and event.reason == "error"
    assert event.error.text == "half an ans" and event.error.error_message == "connection lost"
    assert b.error("stop", aborted=True).reason == "aborted"
