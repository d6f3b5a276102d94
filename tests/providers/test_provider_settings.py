"""pi's provider settings reach the request: ``thinkingBudgets`` (the token budgets of
the budget-based APIs) and ``retry.provider.timeoutMs`` (how long a request may wait
for its response), against the scripted server."""

import asyncio
import time

import pytest
from support.llm_server import Reply

from pi_plugins.sdk import create_harness
from pi_core.app.settings import Settings
from pi_core.session import Session

BUDGETS = {"minimal": 512, "low": 3000, "medium": 5000, "high": 30000}


@pytest.fixture(autouse=True)
def agent_home(tmp_path, monkeypatch):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def answer(tmp_path, model, settings, thinking_level="off"):
    async def scenario():
        harness = await create_harness(model=model, session=Session.in_memory(str(tmp_path)), cwd=str(tmp_path),
                                       builtins=True, thinking_level=thinking_level, settings=Settings(settings))
        try:
            await harness.prompt("hi")
            return harness.messages[-1]
        finally:
            await harness.close()

    return asyncio.run(scenario())


@pytest.mark.parametrize("api", ["anthropic-messages", "bedrock-converse-stream"])
def test_thinking_budgets_set_the_budget_a_claude_request_asks_for(tmp_path, llm_server, api):
    llm_server.push(Reply(text="thought"), Reply(text="thought"))
    model = llm_server.model(api, id="claude-sonnet-4-5", reasoning=True, max_tokens=64000)
    answer(tmp_path / "a", model, {"thinkingBudgets": BUDGETS}, "medium")
    answer(tmp_path / "b", model, {}, "medium")
    custom, default = (r.body for r in llm_server.requests)
    if api == "bedrock-converse-stream":
        custom, default = ({**b["additionalModelRequestFields"], "max_tokens": b["inferenceConfig"]["maxTokens"]}
                           for b in (custom, default))
    assert custom["thinking"]["budget_tokens"] == 5000
    assert default["thinking"]["budget_tokens"] == 8192  # pi's default for medium
    # pi 1.6 asks for the model's whole output limit, the budget within it (0.73.1 added
    # the budget to its 32000 cap)
    assert custom["max_tokens"] == default["max_tokens"] == 64000


def test_thinking_budgets_set_a_gemini_2_5_thinking_budget(tmp_path, llm_server):
    llm_server.push(Reply(text="thought"), Reply(text="thought"))
    model = llm_server.model("google-generative-ai", id="gemini-2.5-flash", reasoning=True)
    answer(tmp_path / "a", model, {"thinkingBudgets": BUDGETS}, "xhigh")  # xhigh asks for high's budget
    answer(tmp_path / "b", model, {"thinkingBudgets": {"low": 1}}, "high")
    custom, default = (r.body["generationConfig"]["thinkingConfig"] for r in llm_server.requests)
    assert custom == {"includeThoughts": True, "thinkingBudget": 30000}
    assert default == {"includeThoughts": True, "thinkingBudget": 24576}  # pi's for 2.5 flash


def _late(seconds, reply):
    def script(request):
        time.sleep(seconds)  # before the response starts
        return reply
    return script


def test_a_request_past_timeout_ms_is_sent_again_and_the_second_answer_arrives(tmp_path, llm_server):
    llm_server.push(_late(1.5, Reply(text="too late")), Reply(text="on time"))
    settings = {"retry": {"enabled": False, "provider": {"timeoutMs": 300, "maxRetries": 1}}}
    started = time.monotonic()
    message = answer(tmp_path, llm_server.model("openai-completions"), settings)
    assert message.text == "on time"
    assert len(llm_server.requests) == 2 and time.monotonic() - started < 1.4


def test_a_request_past_timeout_ms_without_retries_ends_as_timed_out(tmp_path, llm_server):
    llm_server.push(_late(1.5, Reply(text="too late")))
    settings = {"retry": {"enabled": False, "provider": {"timeoutMs": 200, "maxRetries": 0}}}
    message = answer(tmp_path, llm_server.model("anthropic-messages"), settings)
    assert message.stop_reason == "error" and "timed out" in message.error_message
    assert message.failure.kind == "retryable"


def test_without_timeout_ms_a_slow_response_is_waited_for(tmp_path, llm_server):
    llm_server.push(_late(0.5, Reply(text="slow but fine")))
    message = answer(tmp_path, llm_server.model("openai-responses"), {"retry": {"provider": {"maxRetries": 0}}})
    assert message.text == "slow but fine" and len(llm_server.requests) == 1


@pytest.mark.parametrize("transport,over", [("websocket", "WEBSOCKET"), ("auto", "WEBSOCKET"), (None, "WEBSOCKET"),
                                            ("sse", "POST")])
def test_the_transport_setting_chooses_how_chatgpts_backend_is_spoken_to(tmp_path, llm_server, transport, over):
    # pi 0.73.1 tries a WebSocket to ChatGPT's Codex backend unless the setting says "sse"
    # (its default is "auto"); tests/providers/test_codex_websocket.py has the rest
    from support.provider_streams import codex_token

    llm_server.websocket = True
    llm_server.push(Reply(text="answered"))
    model = llm_server.model("openai-codex-responses", id="gpt-5.1", provider="openai-codex")

    async def scenario():
        harness = await create_harness(model=model, session=Session.in_memory(str(tmp_path)), cwd=str(tmp_path),
                                       builtins=True, settings=Settings({} if transport is None else {"transport": transport}),
                                       get_api_key=lambda m: codex_token("k"))
        try:
            await harness.prompt("hi")
            return harness.messages[-1]
        finally:
            await harness.close()

    assert asyncio.run(scenario()).text == "answered"
    [request] = llm_server.requests
    assert (request.method, request.path) == (over, "/backend-api/codex/responses")
    assert request.body["stream"] is True


def test_a_stream_silent_past_http_idle_timeout_ends_as_timed_out(tmp_path, llm_server):
    import threading

    held = threading.Event()
    llm_server.push(Reply(text="a long answer that stops halfway", chunk_size=4, hold=held, hold_after=2))
    settings = {"httpIdleTimeoutMs": 300, "retry": {"enabled": False, "provider": {"maxRetries": 0}}}
    started = time.monotonic()
    try:
        message = answer(tmp_path, llm_server.model("openai-completions"), settings)
    finally:
        held.set()
    assert message.stop_reason == "error" and "timed out" in message.error_message
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("idle", [200, "200"])
def test_headers_later_than_http_idle_timeout_end_as_timed_out(tmp_path, llm_server, idle):
    llm_server.push(_late(1.5, Reply(text="too late")))
    settings = {"httpIdleTimeoutMs": idle, "retry": {"enabled": False, "provider": {"maxRetries": 0}}}
    message = answer(tmp_path, llm_server.model("anthropic-messages"), settings)
    assert message.stop_reason == "error" and "timed out" in message.error_message


@pytest.mark.parametrize("idle", ["disabled", 0, " Disabled "])
def test_http_idle_timeout_disabled_waits_for_a_slow_answer(tmp_path, llm_server, idle):
    llm_server.push(_late(0.5, Reply(text="slow but fine")))
    settings = {"httpIdleTimeoutMs": idle, "retry": {"provider": {"maxRetries": 0}}}
    assert answer(tmp_path, llm_server.model("openai-completions"), settings).text == "slow but fine"
