"""The pieces under every provider: SSE decoding, incremental tool-call JSON, the builder,
failure classification and pi's short hash."""

import json
import random

import pytest

from pi_plugins.providers.failures import classify, retry_after_ms, server_message
from pi_plugins.providers.kit import MessageBuilder
from pi_plugins.providers.kit.partial_json import PartialJson, parse_complete
from pi_plugins.providers.sse import SseDecoder
from pi_plugins.providers.transform import short_hash

STREAM = (
    b": comment\r\n"
    b"event: message_start\r\ndata: {\"a\": \"\xc3\xa9\xe2\x9c\x93\xf0\x9f\x98\x80\"}\r\n\r\n"
    b"data: line one\ndata: line two\n\n"
    b"event: ping\rdata: {}\r\r"
    b"data:no-space\n\n"
    b"id: 7\nevent: last\ndata: [DONE]"  # no blank line at the end
)


def decode(pieces):
    decoder = SseDecoder()
    events = [e for piece in pieces for e in decoder.feed(piece)] + decoder.close()
    return [(e.event, e.data) for e in events]


EXPECTED = [
    ("message_start", '{"a": "é✓😀"}'),
    (None, "line one\nline two"),
    ("ping", "{}"),
    (None, "no-space"),
    ("last", "[DONE]"),
]


def test_sse_events_are_decoded_with_every_line_ending():
    assert decode([STREAM]) == EXPECTED


def test_sse_events_are_the_same_whatever_the_split_even_inside_characters():
    assert decode([STREAM[i:i + 1] for i in range(len(STREAM))]) == EXPECTED
    for cut in range(len(STREAM)):
        assert decode([STREAM[:cut], STREAM[cut:]]) == EXPECTED, cut
    rng = random.Random(5)
    for _ in range(50):
        pieces, i = [], 0
        while i < len(STREAM):
            n = rng.randint(1, 9)
            pieces.append(STREAM[i:i + n])
            i += n
        assert decode(pieces) == EXPECTED


DOCUMENTS = [
    {"path": "a.txt", "content": "line\n\"quoted\" \\ é 😀 \u0001 tab\t", "n": [1, -2.5, 3e2, True, False, None],
     "nested": {"x": [], "y": {}, "z": [[{"k": "v"}]]}},
    {}, {"empty": ""}, {"unicode_escapes": "\ud83d\ude00 and \u00e9"},
]


@pytest.mark.parametrize("doc", DOCUMENTS)
@pytest.mark.parametrize("dump", [lambda d: json.dumps(d), lambda d: json.dumps(d, ensure_ascii=False),
                                  lambda d: json.dumps(d, indent=2)])
def test_partial_json_reaches_the_same_value_whatever_the_pieces(doc, dump):
    text = dump(doc)
    for seed in range(30):
        rng = random.Random(seed)
        parser, i = PartialJson(), 0
        while i < len(text):
            n = rng.randint(1, 6)
            parser.feed(text[i:i + n])
            i += n
        assert parser.complete and not parser.failed
        assert parser.value == json.loads(text)


def test_partial_json_shows_what_has_arrived():
    parser = PartialJson()
    views = [json.dumps(parser.feed(piece)) for piece in
             ['{"path": "a.t', 'xt", "content": "hel', 'lo', '", "list": [1, 2', ', 3]}']]
    assert views == ['{"path": "a.t"}', '{"path": "a.txt", "content": "hel"}',
                     '{"path": "a.txt", "content": "hello"}', '{"path": "a.txt", "content": "hello", "list": [1]}',
                     '{"path": "a.txt", "content": "hello", "list": [1, 2, 3]}']


def test_partial_json_stops_at_what_is_not_json():
    parser = PartialJson()
    parser.feed('{"a": 1, "b": tru')
    assert parser.value == {"a": 1} and not parser.failed
    parser.feed("x}")
    assert parser.failed and parser.value == {"a": 1}


def test_complete_arguments_tolerate_raw_control_characters_and_stray_backslashes():
    assert parse_complete('{"a": "line\nbreak", "b": "C:\\dir \\\\ok"}') == {"a": "line\nbreak", "b": "C:\\dir \\ok"}
    with pytest.raises(ValueError):
        parse_complete('{"a": ')


def test_builder_keeps_malformed_arguments_as_raw_text():
    builder = MessageBuilder(api="x", provider="p", model="m")
    builder.toolcall_start("c1", "write")
    builder.toolcall_delta('{"path": "a", "content": "unterminated')
    end = builder.close()
    assert end.tool_call.arguments == {}
    assert end.tool_call.extra["partialArgs"] == '{"path": "a", "content": "unterminated'


def test_builder_allows_interleaved_tool_calls_by_index():
    builder = MessageBuilder(api="x", provider="p", model="m")
    builder.toolcall_start("c1", "a")
    builder.toolcall_start("c2", "b")
    builder.toolcall_delta('{"x": ', 0)
    builder.toolcall_delta('{"y": 2}', 1)
    builder.toolcall_delta("1}", 0)
    ends = builder.close_all()
    assert [e.tool_call.arguments for e in ends] == [{"x": 1}, {"y": 2}]
    assert builder.done().reason == "toolUse"
    with pytest.raises(RuntimeError, match="no content block is open"):
        builder.text_delta("late")


@pytest.mark.parametrize("status,text,kind", [
    (429, "Rate limit reached", "retryable"), (None, "Overloaded", "retryable"), (529, "", "retryable"),
    (400, "prompt is too long: 300000 tokens > 200000 maximum", "overflow"), (413, "request_too_large", "overflow"),
    (None, "Error Code context_length_exceeded: too long", "overflow"), (400, "invalid model", "other"),
    (429, "Too many tokens per minute: rate limit", "retryable"),
])
def test_failures_are_classified(status, text, kind):
    assert classify(status, text).kind == kind


def test_retry_after_comes_from_headers_body_or_message():
    assert retry_after_ms({"retry-after": "2.5"}) == 2500
    assert retry_after_ms({"retry-after-ms": "300"}) == 300
    assert retry_after_ms({}, {"error": {"details": [{"@type": "RetryInfo", "retryDelay": "13s"}]}}) == 13000
    assert retry_after_ms({}, None, "Please try again in 1.5s.") == 1500
    assert retry_after_ms({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0  # in the past
    assert retry_after_ms({}) is None


def test_server_messages_are_found_in_every_error_shape():
    assert server_message('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')[0] == \
        "Overloaded (overloaded_error)"
    assert server_message('{"error":{"code":400,"message":"Bad","status":"INVALID_ARGUMENT"}}')[0] == \
        "Bad (INVALID_ARGUMENT)"
    assert server_message('[{"error":{"code":503,"message":"down"}}]')[0] == "down"
    assert server_message("<html>Bad Gateway</html>")[0] == "<html>Bad Gateway</html>"
    assert server_message("")[0] == "(no body)"


def test_short_hash_matches_pis():
    """Values from pi-ai's shortHash (ids built from it must match pi's)."""
    assert [short_hash(s) for s in ["abc", "fc_resp_1", "", "ü😀x", "a" * 500]] == [
        "y0biex7f9bbh", "1ds4doutmzyl1", "k4n83c7h0j2b", "1xdqt5s396mi", "d33jejlgylnv"]
