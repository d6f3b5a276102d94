"""Each provider against the scripted server over a real socket, in its exact wire format."""

import asyncio
import base64
import re

import pytest
from support.llm_server import (
    ANTHROPIC,
    AZURE,
    BEDROCK,
    CODEX,
    COMPLETIONS,
    GOOGLE,
    MISTRAL,
    RESPONSES,
    VERTEX,
    Reply,
)
from support.provider_streams import PROVIDERS, collect, run

from pi_core.protocol.codec import to_json
from pi_core.protocol.messages import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from pi_core.protocol.model import ModelCost
from pi_core.protocol.provider import LlmContext, StreamOptions, ToolSpec
from pi_core.protocol.signal import AbortSignal

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n fake image bytes").decode()
READ = ToolSpec("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}},
                                         "required": ["path"]})


def context(text="Hi", tools=(READ,)):
    return LlmContext(system_prompt="Be brief.", messages=[UserMessage(content=[TextContent(text)])],
                      tools=list(tools))


FULL = Reply(
    thinking="First, think it through.",
    text="Hello — here is the answer ✓.",
    tool_calls=[("read", {"path": "a.txt"}), ("read", {"path": "b/ü.txt", "limit": 10})],
    usage={"input": 1200, "output": 300, "cache_read": 400},
)


def test_text_thinking_parallel_tool_calls_usage_and_cost(llm_server, api):
    llm_server.push(FULL)
    model = llm_server.model(api, reasoning=True, cost=ModelCost(input=3, output=15, cache_read=0.3))
    events, message = run(collect(model, context(), StreamOptions(api_key="k", thinking_level="low")))

    assert events[0].type == "start" and events[-1].type == "done"
    assert [b.type for b in message.content] == ["thinking", "text", "toolCall", "toolCall"]
    assert message.content[0].thinking.strip() == "First, think it through."
    assert message.content[0].thinking_signature  # kept for replay
    assert message.text == "Hello — here is the answer ✓."
    assert [(c.name, c.arguments) for c in message.tool_calls] == [
        ("read", {"path": "a.txt"}), ("read", {"path": "b/ü.txt", "limit": 10})]
    assert len({c.id for c in message.tool_calls}) == 2
    assert message.stop_reason == "toolUse" and events[-1].reason == "toolUse"
    assert (message.usage.input, message.usage.output, message.usage.cache_read) == (1200, 300, 400)
    assert message.usage.total_tokens == 1900
    assert message.usage.cost.input == pytest.approx(1200 * 3 / 1e6)
    assert message.usage.cost.output == pytest.approx(300 * 15 / 1e6)
    assert message.usage.cost.cache_read == pytest.approx(400 * 0.3 / 1e6)
    assert message.usage.cost.total == pytest.approx((1200 * 3 + 300 * 15 + 400 * 0.3) / 1e6)
    assert message.response_id or api == BEDROCK  # Bedrock's stream names no response
    assert (message.api, message.provider, message.model) == (api, model.provider, "test-model")


def test_events_carry_content_indexes_and_the_growing_partial(llm_server, api):
    llm_server.push(Reply(text="abcdefghij", tool_calls=[("read", {"path": "x" * 40})], delta_size=3))
    events, message = run(collect(llm_server.model(api), context()))
    kinds = [e.type for e in events]
    assert kinds[0] == "start"
    assert kinds.count("text_start") == kinds.count("text_end") == 1
    assert kinds.count("toolcall_start") == kinds.count("toolcall_end") == 1
    text_deltas = [e.delta for e in events if e.type == "text_delta"]
    assert "".join(text_deltas) == "abcdefghij"
    assert all(e.partial is message for e in events[:-1])
    end = next(e for e in events if e.type == "toolcall_end")
    assert end.tool_call.arguments == {"path": "x" * 40}
    assert end.content_index == message.content.index(end.tool_call)


@pytest.mark.parametrize("api", [COMPLETIONS, RESPONSES, ANTHROPIC])  # Gemini sends each call whole
def test_partial_tool_call_shows_partial_arguments_while_streaming(llm_server, api):
    llm_server.push(Reply(tool_calls=[("write", {"path": "notes.md", "content": "line one\nline two"})], delta_size=4))

    async def watch():
        seen = []
        model = llm_server.model(api)
        async for event in PROVIDERS[api].stream(model, context(), StreamOptions()):
            if event.type == "toolcall_delta":
                seen.append(dict(event.partial.content[event.content_index].arguments))
        return seen

    seen = run(watch())
    assert {"path": "notes.md"} in seen
    assert any(s.get("content", "").startswith("line") and s["content"] != "line one\nline two" for s in seen)
    assert seen[-1] == {"path": "notes.md", "content": "line one\nline two"}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_message_is_the_same_whatever_the_chunk_boundaries(llm_server, api, seed):
    def reply(**transport):
        return Reply(thinking="Deep thought…", text="Unicode: 日本語 ✓ and emoji 😀.",
                     tool_calls=[("read", {"path": "ü/a.txt"})], response_id="r-1", **transport)

    llm_server.push(reply(), reply(chunk_size=1), reply(random_chunks=seed))
    model = llm_server.model(api, reasoning=True)
    options = StreamOptions(thinking_level="medium")
    messages = [run(collect(model, context(), options))[1] for _ in range(3)]
    shapes = []
    for m in messages:
        data = to_json(m)
        data.pop("timestamp")
        if api in (GOOGLE, VERTEX):  # Gemini gives calls no ids; ours carry the time
            for block in data["content"]:
                block.pop("id", None)
        shapes.append(data)
    assert shapes[0] == shapes[1] == shapes[2]
    assert messages[0].stop_reason == "toolUse"


@pytest.mark.parametrize("api_stop,expected", [
    ((COMPLETIONS, "length"), "length"), ((RESPONSES, "length"), "length"),
    ((ANTHROPIC, "max_tokens"), "length"), ((GOOGLE, "MAX_TOKENS"), "length"),
])
def test_output_limit_maps_to_stop_reason_length(llm_server, api_stop, expected):
    api, raw = api_stop
    llm_server.push(Reply(text="cut off", stop=raw))
    events, message = run(collect(llm_server.model(api), context()))
    assert events[-1].type == "done" and message.stop_reason == expected


def test_plain_text_ends_with_stop(llm_server, api):
    llm_server.push(Reply(text="Just text."))
    events, message = run(collect(llm_server.model(api), context()))
    assert message.stop_reason == "stop" and message.text == "Just text."


@pytest.mark.parametrize("api_stop", [(COMPLETIONS, "content_filter"), (ANTHROPIC, "refusal"), (GOOGLE, "SAFETY")])
def test_a_refusing_stop_reason_ends_in_error_with_a_message(llm_server, api_stop):
    api, raw = api_stop
    llm_server.push(Reply(text="partial", stop=raw))
    events, message = run(collect(llm_server.model(api), context()))
    assert events[-1].type == "error" and message.stop_reason == "error"
    assert raw in message.error_message
    assert message.failure.kind == "other"


def test_images_in_user_messages_and_tool_results_go_in_each_apis_format(llm_server, api):
    history = LlmContext(system_prompt="", messages=[
        UserMessage(content=[TextContent("What is this?"), ImageContent(data=PNG, mime_type="image/png")]),
        AssistantMessage(content=[ToolCall(id="call_1", name="screenshot", arguments={})],
                         api=api, provider=f"test-{api}", model="test-model", stop_reason="toolUse"),
        ToolResultMessage(tool_call_id="call_1", tool_name="screenshot",
                          content=[TextContent("shot"), ImageContent(data=PNG, mime_type="image/jpeg")]),
    ])
    llm_server.push(Reply(text="A picture."))
    run(collect(llm_server.model(api), history))
    body = llm_server.requests[-1].body
    text = str(body)
    assert text.count(PNG) == 2
    if api in (COMPLETIONS, MISTRAL):
        assert body["messages"][0]["content"][1] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}
        assert body["messages"][-1]["content"][1]["image_url"]["url"] == f"data:image/jpeg;base64,{PNG}"
    elif api in (RESPONSES, CODEX, AZURE):
        assert body["input"][0]["content"][1] == {"type": "input_image", "detail": "auto",
                                                  "image_url": f"data:image/png;base64,{PNG}"}
        assert body["input"][-1]["output"][1]["type"] == "input_image"
    elif api == ANTHROPIC:
        assert body["messages"][0]["content"][1]["source"] == {"type": "base64", "media_type": "image/png", "data": PNG}
        assert body["messages"][-1]["content"][0]["content"][1]["source"]["media_type"] == "image/jpeg"
    elif api == BEDROCK:
        assert body["messages"][0]["content"][1] == {"image": {"format": "png", "source": {"bytes": PNG}}}
        assert body["messages"][-1]["content"][0]["toolResult"]["content"][1]["image"]["format"] == "jpeg"
    else:
        assert body["contents"][0]["parts"][1] == {"inlineData": {"mimeType": "image/png", "data": PNG}}
        response = body["contents"][-1]["parts"][0]["functionResponse"]  # Gemini 3 style: inside
        assert response["parts"] == [{"inlineData": {"mimeType": "image/jpeg", "data": PNG}}]


def test_text_only_models_get_a_placeholder_instead_of_images(llm_server, api):
    history = LlmContext(messages=[UserMessage(content=[TextContent("Look"), ImageContent(data=PNG, mime_type="image/png")])])
    llm_server.push(Reply(text="ok"))
    run(collect(llm_server.model(api, input=["text"]), history))
    body = llm_server.requests[-1].body
    assert PNG not in str(body)
    assert "(image omitted: model does not support images)" in str(body)


def test_request_carries_key_headers_and_options(llm_server, api):
    llm_server.push(Reply(text="ok"))
    model = llm_server.model(api, headers={"x-model": "m"})
    options = StreamOptions(api_key="sk-secret", temperature=0.25, max_tokens=777, headers={"x-extra": "1"})
    run(collect(model, context(), options))
    request = llm_server.requests[-1]
    auth = {ANTHROPIC: "x-api-key", GOOGLE: "x-goog-api-key", AZURE: "api-key",
            VERTEX: "x-goog-api-key"}.get(api, "authorization")
    assert request.headers[auth].endswith("sk-secret")
    assert request.headers["x-model"] == "m" and request.headers["x-extra"] == "1"
    body = request.body
    if api == BEDROCK:
        assert body["inferenceConfig"] == {"maxTokens": 777, "temperature": 0.25}
        assert request.path == "/model/test-model/converse-stream"
    elif api in (GOOGLE, VERTEX):
        assert body["generationConfig"]["temperature"] == 0.25
        assert body["generationConfig"]["maxOutputTokens"] == 777
        assert request.path.endswith("/models/test-model:streamGenerateContent") and request.query == {"alt": ["sse"]}
    else:
        assert body["temperature"] == 0.25
        assert 777 in body.values() or api == CODEX  # pi sends ChatGPT's backend no output limit
        assert body["stream"] is True


#: ChatGPT's backend, Vertex AI and Bedrock are never local: a request always carries a
#: token, a key or a signature.
NEVER_LOCAL = (CODEX, VERTEX, BEDROCK)


@pytest.mark.parametrize("api", [a for a in sorted(PROVIDERS) if a not in NEVER_LOCAL])
def test_local_servers_need_no_key(llm_server, api):
    llm_server.push(Reply(text="ok"))
    events, message = run(collect(llm_server.model(api), context(), StreamOptions()))
    headers = llm_server.requests[-1].headers
    assert message.stop_reason == "stop"
    assert not {"authorization", "x-api-key", "x-goog-api-key", "api-key"} & set(headers)


def test_before_provider_request_may_replace_the_payload_and_the_response_is_reported(llm_server, api):
    seen = {}

    async def on_payload(payload):
        return {**payload, "injected": True}

    async def on_response(status, headers):
        seen["status"], seen["type"] = status, headers.get("content-type")

    llm_server.push(Reply(text="ok"))
    run(collect(llm_server.model(api), context(), StreamOptions(on_payload=on_payload, on_response=on_response)))
    assert llm_server.requests[-1].body["injected"] is True
    assert seen == {"status": 200, "type": "application/vnd.amazon.eventstream" if api == BEDROCK else "text/event-stream"}


# ---------------------------------------------------------------- failures


@pytest.mark.parametrize("status,kind", [(429, "retryable"), (500, "retryable"), (502, "retryable"),
                                         (503, "retryable"), (529, "retryable"), (400, "other"),
                                         (401, "other"), (404, "other")])
def test_http_errors_are_classified_and_name_provider_model_and_server_message(llm_server, api, status, kind):
    """Each API says it in pi 1.6's words (its SDKs': the status, then the error body as
    compact JSON, under a prefix for Responses and Mistral; Google's body alone; Codex's
    message, or for a 429 its usage-limit sentence); Bedrock names the model, the status
    and the message."""
    llm_server.push(Reply(status=status, error=f"the server says no ({status})"))
    events, message = run(collect(llm_server.model(api, provider="acme"), context()))
    assert [e.type for e in events] == ["error"]
    assert message.stop_reason == "error"
    assert message.failure.kind == kind and message.failure.status == status
    said = message.error_message
    if api == COMPLETIONS:
        assert said.startswith(f'{status}: {{"message":"the server says no ({status})"')
    elif api == ANTHROPIC:
        assert said.startswith(f'{status} {{"type":"error","error":{{')
    elif api in (RESPONSES, AZURE, MISTRAL):
        prefix = {RESPONSES: "acme API error", AZURE: "Azure OpenAI API error", MISTRAL: "Mistral API error"}[api]
        assert said.startswith(f"{prefix} ({status}): {{")
    elif api in (GOOGLE, VERTEX):
        assert said.startswith('{"error":{')
    elif api == CODEX and status == 429:
        assert said == "You have hit your ChatGPT usage limit."
        return
    elif api != CODEX:
        assert "acme/test-model" in said
    assert f"the server says no ({status})" in said
    assert str(status) in message.error_message


def test_retry_after_is_honoured(llm_server, api):
    llm_server.push(Reply(status=429, error="Rate limit reached", headers={"retry-after": "7"}),
                    Reply(status=503, error="busy", headers={"retry-after-ms": "1500"}))
    first = run(collect(llm_server.model(api), context()))[1]
    second = run(collect(llm_server.model(api), context()))[1]
    assert (first.failure.kind, first.failure.retry_after_ms) == ("retryable", 7000)
    assert (second.failure.kind, second.failure.retry_after_ms) == ("retryable", 1500)


def test_a_retry_after_beyond_max_retry_delay_is_not_sent_again_and_names_the_wait(llm_server, api):
    llm_server.push(Reply(status=429, error="Rate limit reached", headers={"retry-after": "3600"}),
                    Reply(text="never asked for"))
    options = StreamOptions(api_key="test-key", max_retries=2)  # the provider would retry
    message = run(collect(llm_server.model(api), context(), options))[1]
    assert len(llm_server.requests) == 1
    assert message.failure.kind == "other"  # the harness does not retry it either
    assert (message.failure.status, message.failure.retry_after_ms) == (429, 3_600_000)
    if api == CODEX:  # pi 1.6 words a Codex 429 as the usage limit
        assert message.error_message.startswith("You have hit your ChatGPT usage limit.")
    else:
        assert "429" in message.error_message and "Rate limit reached" in message.error_message
    assert "asked to wait 3600 s" in message.error_message
    assert "retry.provider.maxRetryDelayMs (60 s)" in message.error_message


def test_max_retry_delay_is_the_setting_and_a_shorter_wait_is_still_honoured(llm_server, api):
    llm_server.push(Reply(status=503, error="busy", headers={"retry-after": "0.01"}), Reply(text="ok"),
                    Reply(status=503, error="busy", headers={"retry-after": "0.02"}))
    first = run(collect(llm_server.model(api), context(),
                        StreamOptions(api_key="k", max_retries=2, max_retry_delay_ms=15)))[1]
    assert first.text == "ok" and len(llm_server.requests) == 2
    second = run(collect(llm_server.model(api), context(),
                         StreamOptions(api_key="k", max_retries=2, max_retry_delay_ms=15)))[1]
    assert len(llm_server.requests) == 3 and "asked to wait 0.02 s" in second.error_message


@pytest.mark.parametrize("content_type", ["text/html; charset=utf-8", "text/plain"])
def test_a_200_that_is_not_a_stream_ends_at_once_naming_its_content_type_and_body(llm_server, api,
                                                                                   content_type):
    page = "<!DOCTYPE html><html><head><title>Hotel Wi-Fi: log in</title></head><body>" + "x" * 400
    llm_server.push(Reply(raw=page, content_type=content_type), Reply(text="never asked for"))
    events, message = run(collect(llm_server.model(api, provider="acme"), context(),
                                  StreamOptions(api_key="test-key", max_retries=2)))
    assert [e.type for e in events] == ["error"] and len(llm_server.requests) == 1
    assert message.failure.kind == "other" and message.failure.status == 200
    assert "acme/test-model" in message.error_message
    assert content_type in message.error_message
    assert "Hotel Wi-Fi: log in" in message.error_message
    assert page[:200] in message.error_message and page[:201] not in message.error_message


@pytest.mark.parametrize("api_message", [
    (ANTHROPIC, "prompt is too long: 213462 tokens > 200000 maximum"),
    (COMPLETIONS, "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens"),
    (RESPONSES, "Your input exceeds the context window of this model. Please adjust your input and try again."),
    (GOOGLE, "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)."),
    (COMPLETIONS, "the request exceeds the available context size, try increasing it"),
])
def test_context_overflow_is_recognised_in_each_providers_wording(llm_server, api_message):
    api, text = api_message
    llm_server.push(Reply(status=400, error=text))
    message = run(collect(llm_server.model(api), context()))[1]
    assert message.failure.kind == "overflow"


def test_an_error_event_inside_the_stream_keeps_what_streamed(llm_server, api):
    kinds = {ANTHROPIC: "overloaded_error", COMPLETIONS: "server_error", RESPONSES: "server_error", GOOGLE: "UNAVAILABLE",
             CODEX: "server_error", MISTRAL: "server_error", AZURE: "server_error", VERTEX: "UNAVAILABLE",
             BEDROCK: "serviceUnavailableException"}
    llm_server.push(Reply(text="Half an ans", error="Overloaded, try again later", error_type=kinds[api]))
    events, message = run(collect(llm_server.model(api), context()))
    assert events[0].type == "start" and events[-1].type == "error"
    assert message.text == "Half an ans"
    assert "Overloaded" in message.error_message
    assert message.failure.kind == "retryable"


def test_a_dropped_connection_is_retryable(llm_server, api):
    llm_server.push(Reply(text="This will be cut off in the middle", delta_size=2, disconnect_after=5))
    events, message = run(collect(llm_server.model(api), context()))
    assert events[-1].type == "error" and message.stop_reason == "error"
    assert message.failure.kind == "retryable"
    assert "Connection lost" in message.error_message


def test_a_broken_stream_names_the_request_and_says_where_to_look(llm_server, api):
    llm_server.push(Reply(text="This will be cut off in the middle", delta_size=2, disconnect_after=5))
    events, message = run(collect(llm_server.model(api), context()))
    sent = llm_server.requests[0]
    assert f"(POST {llm_server.url}{sent.path}" in message.error_message
    assert re.search(rf": \d+ messages, {len(sent.raw):,} bytes; the server stopped answering mid-stream",
                     message.error_message)
    assert "its own log or console says why" in message.error_message
    # the server is on this machine: what llama-cpp-python logs when it drops an answer
    assert '"Disconnected from client"' in message.error_message
    assert "--interrupt_requests False" in message.error_message and "chat template" not in message.error_message


def test_a_stream_that_ends_early_is_an_error_not_a_short_answer(llm_server, api):
    llm_server.push(Reply(text="This ends before its last event", delta_size=4, truncate_after=4))
    events, message = run(collect(llm_server.model(api), context()))
    assert events[-1].type == "error"
    assert message.failure.kind == "retryable"
    assert "ended before" in message.error_message


@pytest.mark.parametrize("garbage", [b"data: {not json at all\n\n", b"<html>502 Bad Gateway</html>\n\n",
                                     b"\xff\xfe\x00garbage\n\ndata: [[[\n\n"])
def test_garbage_ends_in_an_error_never_an_exception(llm_server, api, garbage):
    llm_server.push(Reply(garbage=garbage))
    events, message = run(collect(llm_server.model(api), context()))
    assert events[-1].type == "error" and message.stop_reason == "error"
    assert message.error_message and message.failure is not None


def test_an_unreachable_server_is_a_retryable_connection_error(api):
    from pi_core.protocol.model import Model

    model = Model(id="m", provider="p", api=api, base_url="http://127.0.0.1:9/v1")
    events, message = run(collect(model, context()))
    assert [e.type for e in events] == ["error"]
    assert message.failure.kind == "retryable" and "Connection error" in message.error_message


def test_secrets_never_appear_in_errors(llm_server, api):
    key = "sk-very-secret-key-123"
    llm_server.push(Reply(status=401, error=f"Incorrect API key provided: {key}"))
    message = run(collect(llm_server.model(api), context(), StreamOptions(api_key=key)))[1]
    assert key not in message.error_message and "***" in message.error_message


# ---------------------------------------------------------------- abort


def test_abort_mid_stream_closes_the_connection_and_ends_aborted(llm_server, api):
    llm_server.push(Reply(text="word " * 400, delta_size=5, delay=0.01))
    signal = AbortSignal()

    async def go():
        events = []
        model = llm_server.model(api)
        async for event in PROVIDERS[api].stream(model, context(), StreamOptions(signal=signal)):
            events.append(event)
            if len([e for e in events if e.type == "text_delta"]) == 3:
                asyncio.get_running_loop().call_later(0.05, signal.abort)
        return events

    started = asyncio.get_event_loop_policy().new_event_loop()
    try:
        events = started.run_until_complete(go())
    finally:
        started.close()
    last = events[-1]
    assert last.type == "error" and last.reason == "aborted"
    assert last.error.stop_reason == "aborted" and last.error.error_message == "Request was aborted"
    assert 0 < len(last.error.text) < len("word " * 400)
    assert llm_server.wait_for_disconnect(timeout=2), "the server should see the client leave"


def test_cancelling_the_task_closes_the_stream_and_ends_aborted(llm_server, api):
    llm_server.push(Reply(text="slow " * 200, delta_size=5, delay=0.02))
    signal = AbortSignal()

    async def consume(events, streaming):
        async for event in PROVIDERS[api].stream(llm_server.model(api), context(), StreamOptions(signal=signal)):
            events.append(event)
            if event.type == "text_delta":
                streaming.set()

    async def go():
        events, streaming = [], asyncio.Event()
        task = asyncio.ensure_future(consume(events, streaming))
        await asyncio.wait_for(streaming.wait(), 10)
        signal.abort()  # the harness aborts: signal, then cancel
        task.cancel()
        await task
        return events, task

    events, task = run(go())
    assert events[-1].type == "error" and events[-1].reason == "aborted"
    assert not task.cancelled()
    assert llm_server.wait_for_disconnect(timeout=2)


def test_an_already_aborted_signal_sends_nothing(llm_server, api):
    signal = AbortSignal()
    signal.abort()
    events, message = run(collect(llm_server.model(api), context(), StreamOptions(signal=signal)))
    assert [e.type for e in events] == ["error"] and message.stop_reason == "aborted"
    assert llm_server.requests == []
