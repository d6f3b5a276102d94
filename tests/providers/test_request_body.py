"""The request body: orjson on the whole path, and a large body sent in pieces (never
held whole) with its exact content-length."""

import json

import pytest
from support.llm_server import Reply
from support.provider_streams import collect, run

from pi_core.protocol.messages import TextContent, UserMessage
from pi_core.protocol.model import Model
from pi_core.protocol.provider import LlmContext, StreamOptions
from pi_plugins.providers import request_body
from pi_plugins.providers.request_body import JsonBody, encode_json, json_text


def test_encoded_body_is_compact_utf8_json_like_pi_writes_it():
    body = {"model": "m", "messages": [{"role": "user", "content": "café ✓ \"q\""}], "n": 1.5}
    assert encode_json(body) == json.dumps(body, ensure_ascii=False,
                                           separators=(",", ":")).encode()


def test_lone_surrogates_are_dropped_and_huge_integers_still_encode():
    assert encode_json({"t": "a\ud800b"}) == b'{"t":"ab"}'
    assert json.loads(encode_json({"n": 2 ** 70})) == {"n": 2 ** 70}
    assert json_text({"path": "ü", "n": [1, 2]}) == '{"path":"ü","n":[1,2]}'


@pytest.mark.parametrize("count", [0, 1, 63, 64, 65, 200])
def test_pieces_join_to_the_same_json_whatever_the_list_length(count, monkeypatch):
    body = {"model": "m", "messages": [{"role": "user", "content": f"m{i} ✓"} for i in range(count)],
            "stream": True, "tools": [{"name": "t\ud800"}]}
    monkeypatch.setattr(request_body, "STREAM_BODY_AT", 10)  # force the streamed form
    encoded = JsonBody(body)
    assert encoded.data is None
    pieces = b"".join(_drain(encoded.stream()))
    assert len(pieces) == encoded.length
    assert json.loads(pieces) == {**body, "tools": [{"name": "t"}]}


def test_a_small_body_is_encoded_once_and_kept():
    encoded = JsonBody({"a": [1] * 500})
    assert encoded.data == b'{"a":[' + b",".join([b"1"] * 500) + b"]}"
    assert encoded.length == len(encoded.data)
    assert JsonBody({}).data == b"{}"


def test_a_large_conversation_reaches_the_server_whole_with_its_length(llm_server):
    model = Model(id="m", provider="p", api="openai-completions", name="m",
                  base_url=llm_server.base_url("openai-completions"))
    messages = [UserMessage(content=[TextContent(f"{i}: " + "x" * 3000)]) for i in range(1000)]
    llm_server.push(Reply(text="ok"))
    _, message = run(collect(model, LlmContext(system_prompt="s", messages=messages),
                             StreamOptions(api_key="k")))
    assert message.stop_reason == "stop"
    (request,) = llm_server.requests
    assert len(request.raw) > request_body.STREAM_BODY_AT
    assert int(request.headers["content-length"]) == len(request.raw)
    assert "transfer-encoding" not in request.headers
    sent = request.body["messages"]
    assert len(sent) == 1001 and sent[-1]["content"][0]["text"].startswith("999: xxx")


def _drain(agen):
    import asyncio

    async def go():
        return [piece async for piece in agen]

    return asyncio.run(go())
