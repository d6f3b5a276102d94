"""ChatGPT's Codex backend over a WebSocket, as pi 0.73.1 speaks it on a runtime with
WebSockets: the setting ``transport`` (``auto`` by default, ``websocket``, ``sse``), the
handshake and ``response.create`` frame, the answer's events, a session's socket kept
for its next turn (with ``previous_response_id`` under ``auto``), the backend's errors,
an abort, and the fallback to server-sent events. Against the scripted server playing
``https://chatgpt.com`` (through ``PI_PROVIDER_ORIGINS``), which takes WebSockets when
``llm_server.websocket`` is set; the last test records the real pi 0.73.1 on Node 22
(which has a global WebSocket) against it and compares."""

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support.llm_server import Reply
from support.provider_streams import codex_token

from pi_core.app.settings import Settings
from pi_core.protocol.messages import TextContent, UserMessage
from pi_core.protocol.model import Model, ModelCost
from pi_core.protocol.provider import LlmContext, StreamOptions, ToolSpec
from pi_core.protocol.signal import AbortSignal
from pi_plugins.providers import codex_websocket
from pi_plugins.providers.openai_codex import OpenAICodexProvider

TOKEN = codex_token("k")
CONTEXT = LlmContext(system_prompt="Be brief.", messages=[UserMessage(content=[TextContent("Hi")])],
                     tools=[ToolSpec("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})])
MODEL = Model(id="gpt-5.1", provider="openai-codex", api="openai-codex-responses", name="GPT-5.1",
              base_url="https://chatgpt.com/backend-api", reasoning=True, input=["text", "image"],
              cost=ModelCost(input=1.25, output=10, cache_read=0.125))


@pytest.fixture(autouse=True)
def chatgpt(llm_server, monkeypatch):
    """The scripted server plays chatgpt.com, WebSockets and all; no session has failed."""
    monkeypatch.setenv("PI_PROVIDER_ORIGINS", json.dumps({"https://chatgpt.com": llm_server.url}))
    llm_server.websocket = True
    codex_websocket.fallback_sessions.clear()
    yield
    codex_websocket.fallback_sessions.clear()


async def answer(transport=None, session="session-1", context=CONTEXT, signal=None, thinking="off"):
    provider = OpenAICodexProvider(Settings({} if transport is None else {"transport": transport}))
    options = StreamOptions(api_key=TOKEN, session_id=session, max_retries=0, thinking_level=thinking,
                            signal=signal or AbortSignal())
    return [e async for e in provider.stream(MODEL, context, options)]


def final(events):
    last = events[-1]
    return last.message if last.type == "done" else last.error


def turns(*contexts, transport=None, session="session-1"):
    """Several requests in one event loop (a session's socket lives in its loop)."""
    async def scenario():
        out = []
        for context in contexts:
            out.append(final(await answer(transport, session, context)))
        return out
    return asyncio.run(scenario())


def posts(server):
    return [r for r in server.requests if r.method == "POST"]


def test_the_handshake_and_frame_are_pis(llm_server):
    llm_server.push(Reply(text="hello"))
    [message] = turns(CONTEXT)
    assert message.text == "hello" and message.stop_reason == "stop"
    [(_, headers)] = llm_server.handshakes
    assert headers["authorization"] == f"Bearer {TOKEN}"
    assert headers["chatgpt-account-id"] == "acct-test" and headers["originator"] == "pi"
    assert headers["openai-beta"] == "responses_websockets=2026-02-06"
    assert headers["session-id"] == headers["x-client-request-id"] == "session-1"  # pi 1.6's name
    assert headers["user-agent"].startswith("pi-harness/")  # pi 1.6's detailed form, our name
    assert "accept" not in headers and "content-type" not in headers
    [frame] = llm_server.requests
    assert frame.method == "WEBSOCKET" and frame.path == "/backend-api/codex/responses"
    assert list(frame.body)[:5] == ["type", "model", "store", "stream", "input"]
    assert frame.body["type"] == "response.create" and "instructions" not in frame.body
    assert frame.body["input"][0] == {"role": "developer", "content": "Be brief."}  # pi 1.6: an input item
    assert frame.body["prompt_cache_key"] == "session-1" and frame.body["store"] is False
    assert "previous_response_id" not in frame.body and not posts(llm_server)


def test_each_request_without_a_session_gets_its_own_socket_and_id(llm_server):
    llm_server.push(Reply(text="a"), Reply(text="b"))
    turns(CONTEXT, CONTEXT, session=None)
    [(first, one), (second, two)] = llm_server.handshakes
    assert first != second and one["session-id"] != two["session-id"]
    assert one["session-id"] == one["x-client-request-id"] and len(one["session-id"]) == 36
    assert "prompt_cache_key" not in llm_server.requests[0].body
    assert llm_server.wait_for_closes(2)


def test_text_thinking_tool_calls_and_usage_stream_over_the_socket(llm_server):
    llm_server.push(Reply(thinking="let me see", text="I'll read it", tool_calls=[("read", {"path": "a.txt"}, "call_1")],
                          usage={"input": 100, "output": 20, "cache_read": 50, "reasoning": 7}))
    events = asyncio.run(answer(thinking="low"))
    message = final(events)
    kinds = [e.type for e in events]
    assert kinds[0] == "start" and kinds[-1] == "done"
    assert {"thinking_delta", "text_delta", "toolcall_delta", "toolcall_end"} <= set(kinds)
    assert [b.thinking for b in message.content if b.type == "thinking"] == ["let me see"]
    assert message.text == "I'll read it"
    [call] = message.tool_calls
    assert (call.name, call.arguments) == ("read", {"path": "a.txt"}) and call.id.startswith("call_1|")
    assert message.stop_reason == "toolUse"
    usage = message.usage
    assert (usage.input, usage.output, usage.cache_read, usage.reasoning) == (100, 20, 50, 7)
    assert usage.cost.total > 0
    assert llm_server.requests[0].body["reasoning"] == {"effort": "low", "summary": "auto"}
    assert not posts(llm_server)


def _next_turn(first: "object") -> LlmContext:
    return LlmContext(system_prompt="Be brief.", tools=CONTEXT.tools,
                      messages=[*CONTEXT.messages, first, UserMessage(content=[TextContent("and then?")])])


def test_a_sessions_next_turn_reuses_its_socket_and_sends_only_whats_new_under_auto(llm_server):
    llm_server.push(Reply(thinking="hm", text="first", response_id="resp_one"), Reply(text="second"))

    async def scenario():
        one = final(await answer())
        two = final(await answer(context=_next_turn(one)))
        return one, two

    one, two = asyncio.run(scenario())
    assert two.text == "second"
    assert len(llm_server.handshakes) == 1
    first, second = llm_server.requests
    assert first.connection == second.connection
    assert second.body["previous_response_id"] == "resp_one"
    assert second.body["input"] == [{"role": "user", "content": [{"type": "input_text", "text": "and then?"}]}]
    assert list(second.body)[-1] == "previous_response_id"


def test_websocket_sends_the_whole_conversation_on_the_kept_socket(llm_server):
    llm_server.push(Reply(text="first", response_id="resp_one"), Reply(text="second"))

    async def scenario():
        one = final(await answer("websocket"))
        return final(await answer("websocket", context=_next_turn(one)))

    asyncio.run(scenario())
    first, second = llm_server.requests
    assert first.connection == second.connection and "previous_response_id" not in second.body
    assert len(second.body["input"]) == 4  # the system prompt, the question, its answer, the next


def test_a_changed_request_is_sent_whole_even_on_the_kept_socket(llm_server):
    llm_server.push(Reply(text="first"), Reply(text="second"))

    async def scenario():
        one = final(await answer())
        changed = _next_turn(one)
        changed.system_prompt = "Be long."
        return final(await answer(context=changed))

    asyncio.run(scenario())
    second = llm_server.requests[1]
    assert "previous_response_id" not in second.body and len(second.body["input"]) == 4


def test_sse_never_opens_a_socket(llm_server):
    llm_server.push(Reply(text="over sse"))
    [message] = turns(CONTEXT, transport="sse")
    assert message.text == "over sse" and not llm_server.handshakes
    [request] = llm_server.requests
    assert request.method == "POST" and request.headers["accept"] == "text/event-stream"


def test_a_server_without_websockets_gets_the_request_over_sse_and_the_session_stays_there(llm_server):
    llm_server.websocket = False  # the upgrade is answered 404
    llm_server.push(Reply(text="one"), Reply(text="two"))
    first, second = turns(CONTEXT, CONTEXT)
    assert (first.text, second.text) == ("one", "two")
    one, two = posts(llm_server)
    assert one.body["input"] == two.body["input"] and "type" not in one.body
    assert one.headers["openai-beta"] == "responses=experimental"
    assert codex_websocket.fallback_sessions == {"session-1"}


def test_a_socket_that_closes_before_answering_sends_the_same_body_over_sse(llm_server):
    llm_server.push(Reply(text="never", disconnect_after=0), Reply(text="over sse"))
    [message] = turns(CONTEXT)
    assert message.text == "over sse"
    frame, post = llm_server.requests
    assert frame.method == "WEBSOCKET" and post.method == "POST"
    assert {k: v for k, v in frame.body.items() if k != "type"} == post.body
    llm_server.push(Reply(text="again"))
    turns(CONTEXT)
    assert len(llm_server.handshakes) == 1  # the session's socket failed: SSE from then on


def test_a_socket_that_breaks_mid_answer_is_the_answers_error_and_the_session_falls_back(llm_server):
    llm_server.push(Reply(text="a long answer here", delta_size=2, disconnect_after=5), Reply(text="over sse"))
    [broken] = turns(CONTEXT)
    assert broken.stop_reason == "error" and "WebSocket closed 1006" in broken.error_message
    assert broken.failure.kind == "retryable"
    assert not posts(llm_server)
    [again] = turns(CONTEXT)
    assert again.text == "over sse" and len(posts(llm_server)) == 1


def test_a_clean_close_before_the_end_names_its_code(llm_server):
    llm_server.push(Reply(text="cut short here", delta_size=2, truncate_after=4))
    [message] = turns(CONTEXT)
    assert message.stop_reason == "error" and "WebSocket closed 1000 truncated" in message.error_message


@pytest.mark.parametrize("reply,words", [
    (Reply(status=429, error="You have hit your usage limit", error_type="usage_limit_reached"),
     "Codex error: You have hit your usage limit"),
    (Reply(text="partial", error="The model broke"), "The model broke"),
    (Reply(raw="this is not json"), "not JSON"),
])
def test_the_backends_errors_are_the_answers_error_and_nothing_falls_back(llm_server, reply, words):
    llm_server.push(reply)
    [message] = turns(CONTEXT)
    assert message.stop_reason == "error" and words in message.error_message
    assert message.error_message.startswith("openai-codex/gpt-5.1: ")
    assert not posts(llm_server) and not codex_websocket.fallback_sessions


def test_an_abort_mid_answer_closes_the_socket_at_once(llm_server):
    hold = threading.Event()
    llm_server.push(Reply(text="streaming on and on", delta_size=2, hold=hold, hold_after=4))
    signal = AbortSignal()

    async def scenario():
        events = []
        provider = OpenAICodexProvider(Settings({}))
        options = StreamOptions(api_key=TOKEN, session_id="session-1", max_retries=0, signal=signal)
        async for event in provider.stream(MODEL, CONTEXT, options):
            events.append(event)
            if event.type == "text_delta" and not signal.aborted:
                signal.abort()
                hold.set()  # the server goes on, and reads the close frame
        return events

    started = time.monotonic()
    events = asyncio.run(scenario())
    hold.set()
    message = final(events)
    assert message.stop_reason == "aborted" and message.error_message == "Request was aborted"
    assert time.monotonic() - started < 5
    assert llm_server.wait_for_closes(1)
    assert not posts(llm_server) and not codex_websocket.fallback_sessions


def test_without_the_websockets_library_every_request_goes_over_sse(llm_server, monkeypatch):
    monkeypatch.setitem(sys.modules, "websockets.asyncio.client", None)  # an import of it fails
    llm_server.push(Reply(text="over sse"))
    [message] = turns(CONTEXT, transport="websocket")
    assert message.text == "over sse" and not llm_server.handshakes and len(posts(llm_server)) == 1


def test_pis_older_websockets_setting_still_chooses(llm_server):
    assert OpenAICodexProvider(Settings({"websockets": False})).transport() == "sse"
    assert OpenAICodexProvider(Settings({"websockets": True})).transport() == "websocket"
    assert OpenAICodexProvider(Settings({})).transport() == "auto"


# ---------------------------------------------------------------- against the real pi

#: What the handshake carries that both programs must send alike (not the user agent:
#: pi's first request of a run says "pi (browser)", its os module still loading).
HANDSHAKE_HEADERS = ("authorization", "chatgpt-account-id", "originator", "openai-beta", "upgrade")


@pytest.mark.process
@pytest.mark.requires("pi")
def test_ours_speaks_to_the_socket_as_the_real_pi_on_node_22_does(tmp_path, llm_server):
    from support.programs import node_for, require_real
    from support.signin_server import fake_jwt

    package = require_real("pi")
    node22 = node_for("pi16")  # pi 0.73.1's own code, on the Node that has a global WebSocket
    token = fake_jwt({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-123"}})
    recorded = {}
    for who in ("pi", "ours"):
        agent, cwd = tmp_path / who / "agent", tmp_path / who / "project"
        cwd.mkdir(parents=True)
        agent.mkdir(parents=True)
        (agent / "auth.json").write_text(json.dumps({"openai-codex": {
            "type": "oauth", "access": token, "refresh": "r-1", "expires": int(time.time() * 1000) + 3_600_000,
            "accountId": "acct-123"}}))
        os.chmod(agent / "auth.json", 0o600)
        (agent / "models.json").write_text(json.dumps(
            {"providers": {"openai-codex": {"baseUrl": f"{llm_server.url}/backend-api"}}}))
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / who / "home"), "PI_OFFLINE": "1",
               "PI_CODING_AGENT_DIR": str(agent)}
        command = ([node22, str(Path(package) / "dist" / "cli.js")] if who == "pi"
                   else [sys.executable, "-m", "pi_plugins.cli"])
        before = len(llm_server.requests)
        llm_server.push(Reply(thinking="hm", text="first"), Reply(text="second"))
        process = subprocess.Popen([*command, "--model", "openai-codex/gpt-5.1", "--thinking", "low",
                                    "-p", "Hi", "then"], cwd=cwd, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        try:
            # pi keeps the session's socket for five idle minutes, and its -p waits for it
            llm_server.wait_for_requests(before + 2, timeout=60)
            deadline = time.monotonic() + 30
            while len(llm_server.websocket_answers) < before + 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            if who == "ours":
                out, err = process.communicate(timeout=60)
                assert process.returncode == 0, err
                assert out.strip() == "second"
        finally:
            if process.poll() is None:
                process.kill()
            process.communicate()
        recorded[who] = (llm_server.requests[before:], [h for _, h in llm_server.handshakes[-1:]])
    (pi_frames, [pi_shake]), (our_frames, [our_shake]) = recorded["pi"], recorded["ours"]
    assert [f.method for f in pi_frames] == [f.method for f in our_frames] == ["WEBSOCKET", "WEBSOCKET"]
    assert pi_frames[0].connection == pi_frames[1].connection
    assert our_frames[0].connection == our_frames[1].connection
    assert {h: our_shake.get(h) for h in HANDSHAKE_HEADERS} == {h: pi_shake.get(h) for h in HANDSHAKE_HEADERS}
    # pi 1.6 names the header session-id (0.73.1, run here, session_id)
    assert our_shake["session-id"] == our_shake["x-client-request-id"] == our_frames[0].body["prompt_cache_key"]
    assert pi_shake["session_id"] == pi_shake["x-client-request-id"] == pi_frames[0].body["prompt_cache_key"]
    # pi 1.6 (which ours follows) sends the model's output limit, and the system prompt and
    # tools as developer items of the input; 0.73.1 (run here) sent neither, but
    # instructions and tools fields
    moved = ("instructions", "tools", "max_output_tokens")
    skip = (*moved, "input", "prompt_cache_key", "previous_response_id")
    for pi_frame, our_frame in zip(pi_frames, our_frames):
        assert our_frame.body["max_output_tokens"] > 0 and "max_output_tokens" not in pi_frame.body
        assert "instructions" not in our_frame.body and "tools" not in our_frame.body
        assert [k for k in our_frame.body if k not in moved] == [k for k in pi_frame.body if k not in moved]
        assert {k: v for k, v in our_frame.body.items() if k not in skip} == \
            {k: v for k, v in pi_frame.body.items() if k not in skip}
        assert ([i for i in our_frame.body["input"] if i.get("role") != "developer"]
                == [i for i in pi_frame.body["input"] if i.get("role") != "developer"])
    for frames in (pi_frames, our_frames):  # the next turn continues the first's response
        assert frames[1].body["previous_response_id"] == f"resp_test{frames[0].connection:04d}"
        assert len(frames[1].body["input"]) == 1


def test_leaving_the_session_closes_its_kept_socket_at_once(tmp_path, llm_server):
    from pi_plugins.sdk import create_harness
    from pi_core.session import Session

    llm_server.push(Reply(text="kept"))

    async def scenario():
        harness = await create_harness(model=MODEL, session=Session.in_memory(str(tmp_path)), cwd=str(tmp_path),
                                       builtins=True, settings=Settings({}), get_api_key=lambda m: TOKEN)
        await harness.prompt("hi")
        kept = not llm_server.websocket_closes
        await harness.close()  # session_shutdown
        closed = await asyncio.to_thread(llm_server.wait_for_closes, 1, 5.0)
        return harness.messages[-1].text, kept, closed

    text, kept, closed = asyncio.run(scenario())
    assert text == "kept" and kept and closed
    assert llm_server.requests[0].method == "WEBSOCKET"


def test_a_payload_hook_that_fails_is_the_answers_error_and_nothing_is_sent(llm_server):
    async def broken(payload):
        raise RuntimeError("the hook broke")

    async def scenario():
        options = StreamOptions(api_key=TOKEN, session_id="session-1", max_retries=0, on_payload=broken)
        return [e async for e in OpenAICodexProvider(Settings({})).stream(MODEL, CONTEXT, options)]

    message = final(asyncio.run(scenario()))
    assert message.stop_reason == "error" and "the hook broke" in message.error_message
    assert not llm_server.requests and not llm_server.handshakes


def test_websocket_connect_timeout_ms_bounds_a_handshake_that_never_answers(monkeypatch):
    """pi 1.6's ``websocketConnectTimeoutMs``: a server that takes the connection and
    never answers the upgrade fails the request within the setting's time (default
    15 s), with a WebSocket error, not a hang."""
    import socket as sockets

    silent = sockets.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    held = []
    threading.Thread(target=lambda: held.extend(iter(lambda: silent.accept()[0], None)), daemon=True).start()
    monkeypatch.setenv("PI_PROVIDER_ORIGINS", json.dumps(
        {"https://chatgpt.com": f"http://127.0.0.1:{silent.getsockname()[1]}"}))

    async def scenario():
        provider = OpenAICodexProvider(Settings({"transport": "websocket"}))
        options = StreamOptions(api_key=TOKEN, session_id="s", max_retries=0, connect_timeout_ms=300,
                                idle_timeout_ms=300)
        return [e async for e in provider.stream(MODEL, CONTEXT, options)]

    started = time.monotonic()
    events = asyncio.run(scenario())
    assert time.monotonic() - started < 5
    assert events[-1].type == "error"
    silent.close()
    assert codex_websocket.connect_seconds(None) == 15 and codex_websocket.connect_seconds(0) is None


def test_each_websocket_frame_is_reported_to_provider_stream_event_as_parsed_json(llm_server):
    """pi 1.6 hands every Codex event to ``provider_stream_event``, over the socket too."""
    llm_server.push(Reply(text="hello"))
    heard = []

    async def hear(data):
        heard.append(data)

    async def scenario():
        provider = OpenAICodexProvider(Settings({"transport": "websocket"}))
        options = StreamOptions(api_key=TOKEN, session_id="session-1", max_retries=0, on_stream_event=hear)
        return [e async for e in provider.stream(MODEL, CONTEXT, options)]

    assert final(asyncio.run(scenario())).text == "hello"
    assert not posts(llm_server)  # over the socket, not server-sent events
    kinds = [d["type"] for d in heard]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert "response.output_text.delta" in kinds
def test_provider_stream_event_hears_a_sockets_events_as_it_hears_them_over_sse(llm_server):
    """pi 1.6 reports each of the Codex backend's events, over the socket as over SSE."""
    async def heard(transport):
        events = []

        async def hear(data):
            events.append(data)

        llm_server.push(Reply(text="hello there", delta_size=3))
        provider = OpenAICodexProvider(Settings({"transport": transport}))
        options = StreamOptions(api_key=TOKEN, session_id=f"heard-{transport}", max_retries=0,
                                signal=AbortSignal(), on_stream_event=hear)
        message = final([e async for e in provider.stream(MODEL, CONTEXT, options)])
        assert message.text == "hello there"
        return events

    over_socket, over_sse = asyncio.run(heard("websocket")), asyncio.run(heard("sse"))
    kinds = [event["type"] for event in over_socket]
    assert "response.output_text.delta" in kinds and kinds[-1] == "response.completed"
    assert kinds == [event["type"] for event in over_sse]
