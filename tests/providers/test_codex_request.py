"""Codex's request as pi 1.6 builds it, in-process against the scripted server playing
chatgpt.com: the body zstd-compressed over server-sent events (plain where no zstd is at
hand, and always over the WebSocket), the tools as an ``additional_tools`` input item
where the model's compat takes them and as a ``tools`` field where it does not, strict
schemas for pi's own tools (a schema strict mode cannot express goes unconstrained), and
a caller's ``tool_choice``. Side by side with pi 1.6: ``test_codex_request_pi16.py``."""

import asyncio
import json

import attrs
import pytest
import zstandard
from support.llm_server import Reply
from support.provider_streams import codex_token

from pi_core.app.settings import Settings
from pi_core.protocol.messages import TextContent, UserMessage
from pi_core.protocol.model import Model, ModelCost
from pi_core.protocol.provider import LlmContext, StreamOptions, ToolSpec
from pi_plugins.providers import codex_websocket, zstd_body
from pi_plugins.providers.openai_codex import OpenAICodexProvider
from pi_plugins.providers.strict_schema import NotStrict, strict_schema

READ = ToolSpec("read", "Read a file", {"type": "object", "properties": {
    "path": {"type": "string"}, "limit": {"type": "number"}}, "required": ["path"]})
ODD = ToolSpec("odd", "One of two shapes", {"type": "object", "properties": {
    "x": {"oneOf": [{"type": "string"}, {"type": "number"}]}}})
CONTEXT = LlmContext(system_prompt="Be brief.", messages=[UserMessage(content=[TextContent("Hi")])], tools=[READ, ODD])
COMPAT = {"supportsAdditionalTools": True, "supportsMidConvoSystemMessages": True}
MODEL = Model(id="gpt-5.6-luna", provider="openai-codex", api="openai-codex-responses", name="Luna",
              base_url="https://chatgpt.com/backend-api", reasoning=True, input=["text"],
              cost=ModelCost(input=1, output=1), compat=COMPAT)


@pytest.fixture(autouse=True)
def chatgpt(llm_server, monkeypatch):
    monkeypatch.setenv("PI_PROVIDER_ORIGINS", json.dumps({"https://chatgpt.com": llm_server.url}))
    codex_websocket.fallback_sessions.clear()
    yield
    codex_websocket.fallback_sessions.clear()


def send(llm_server, model=MODEL, transport="sse", **options):
    llm_server.push(Reply(text="ok"))
    provider = OpenAICodexProvider(Settings({"transport": transport}))
    stream_options = StreamOptions(api_key=codex_token("k"), session_id="s-1", max_retries=0, **options)

    async def go():
        return [e async for e in provider.stream(model, CONTEXT, stream_options)]
    events = asyncio.run(go())
    assert events[-1].type == "done", events[-1]
    return llm_server.requests[-1]


def test_the_body_goes_zstd_compressed_over_server_sent_events(llm_server):
    request = send(llm_server)
    assert request.headers["content-encoding"] == "zstd"
    plain = zstandard.ZstdDecompressor().decompressobj().decompress(request.raw)
    assert json.loads(plain) == request.body and len(request.raw) < len(plain)
    assert request.headers["session-id"] == "s-1" and "session_id" not in request.headers


def test_without_zstd_the_body_goes_plain(llm_server, monkeypatch):
    monkeypatch.setattr(zstd_body, "_compressor", lambda: None)
    request = send(llm_server)
    assert "content-encoding" not in request.headers and json.loads(request.raw) == request.body


def test_the_websocket_frame_stays_plain_json(llm_server):
    llm_server.websocket = True
    frame = send(llm_server, transport="websocket")
    assert frame.method == "WEBSOCKET" and frame.body["type"] == "response.create"


def test_the_prompt_and_tools_are_developer_items_where_the_model_takes_them(llm_server):
    body = send(llm_server).body
    assert "instructions" not in body and "tools" not in body
    declared, prompt, question = body["input"]
    assert declared["type"] == "additional_tools" and declared["role"] == "developer"
    assert prompt == {"role": "developer", "content": "Be brief."} and question["role"] == "user"
    read, odd = declared["tools"]
    assert read["strict"] is True and read["parameters"]["required"] == ["path", "limit"]
    assert read["parameters"]["properties"]["limit"] == {"anyOf": [{"type": "number"}, {"type": "null"}]}
    assert odd["strict"] is None and odd["parameters"] == ODD.parameters  # not pi's own tool: as it is


def test_a_model_without_mid_conversation_tools_gets_a_tools_field(llm_server):
    body = send(llm_server, model=attrs.evolve(MODEL, compat=None)).body
    assert [t["name"] for t in body["tools"]] == ["read", "odd"]
    assert [i.get("role") for i in body["input"]] == ["developer", "user"]


def test_strict_mode_off_sends_no_strict_field(llm_server):
    body = send(llm_server, model=attrs.evolve(MODEL, compat={**COMPAT, "supportsStrictMode": False})).body
    assert all("strict" not in t for t in body["input"][0]["tools"])
    assert body["input"][0]["tools"][0]["parameters"] == READ.parameters


def test_thinking_off_is_effort_none_and_a_callers_tool_choice_is_sent(llm_server):
    body = send(llm_server, thinking_level="off", tool_choice="required").body
    assert body["reasoning"] == {"effort": "none", "summary": "auto"} and body["tool_choice"] == "required"
    assert send(llm_server).body["tool_choice"] == "auto"


def test_a_schema_strict_mode_cannot_express_is_refused_and_the_original_kept():
    nested = {"type": "object", "properties": {"edits": {"type": "array", "items": {
        "type": "object", "properties": {"a": {"type": "string"}, "b": {"type": ["string", "null"]}}}}}}
    tight = strict_schema(nested)
    item = tight["properties"]["edits"]["anyOf"][0]["items"]
    assert item["required"] == ["a", "b"] and item["additionalProperties"] is False
    assert item["properties"]["a"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert item["properties"]["b"] == {"type": ["string", "null"]}  # already takes null
    assert "required" not in nested["properties"]["edits"]["items"]  # the original untouched
    for bad in ({"type": "object", "properties": {"x": {"$ref": "#/a"}}}, {"type": "string"},
                {"type": "object", "additionalProperties": True}, {"type": "object", "properties": {"x": {}}}):
        with pytest.raises(NotStrict):
            strict_schema(bad)


def test_a_mid_conversation_effort_level_is_kept_on_the_answer_as_pi16s_provider_thinking_level(llm_server):
    llm_server.push(Reply(text="ok"))
    model = attrs.evolve(MODEL, compat={**COMPAT, "supportsMidConvoEffort": True})
    options = StreamOptions(api_key=codex_token("k"), session_id="s-1", max_retries=0, thinking_level="low")

    async def go():
        return [e async for e in OpenAICodexProvider(Settings({"transport": "sse"})).stream(model, CONTEXT, options)]
    done = asyncio.run(go())[-1]
    assert done.type == "done" and done.message.extra["providerThinkingLevel"] == "low"
    body = llm_server.requests[-1].body
    assert body["input"][-1] == {"type": "configuration_update", "reasoning": {"effort": "low"}}
    assert body["reasoning"]["effort"] == "medium"


def test_a_grammar_tool_goes_to_codex_as_a_custom_tool_and_its_raw_call_is_parsed(llm_server):
    """``supportsOpenAIGrammarTools`` on Codex: the grammar tool among the developer
    item's tools as a flat ``custom`` tool; the model's ``custom_tool_call`` streams raw
    text, which becomes the call's one argument."""
    from tests.providers.test_compat_fields_pi16 import CUSTOM_CALLS, PATCH, PATCH_TOOL, grammars_of

    patch = ToolSpec(PATCH_TOOL["name"], PATCH_TOOL["description"], PATCH_TOOL["parameters"])
    context = attrs.evolve(CONTEXT, tools=[READ, patch])
    model = attrs.evolve(MODEL, compat={**COMPAT, "supportsOpenAIGrammarTools": True})
    llm_server.push(Reply(raw=CUSTOM_CALLS["openai-responses"]))
    options = StreamOptions(api_key=codex_token("k"), session_id="s-1", max_retries=0)

    async def go():
        return [e async for e in OpenAICodexProvider(Settings({"transport": "sse"})).stream(model, context, options)]
    with grammars_of({"tools": [PATCH_TOOL]}):
        done = asyncio.run(go())[-1]
    tools = llm_server.requests[-1].body["input"][0]["tools"]
    assert [(t["type"], t["name"]) for t in tools] == [("function", "read"), ("custom", "apply_patch")]
    assert tools[1]["format"]["type"] == "grammar" and tools[1]["format"]["syntax"] == "lark"
    assert done.type == "done" and [(c.name, c.arguments) for c in done.message.tool_calls] == [
        ("apply_patch", {"patch": PATCH})]
