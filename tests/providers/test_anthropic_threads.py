"""Anthropic message threads (pi 1.6): with a session id, each request after the first
sends only the new messages and continues from the previous reply; a refused thread is
sent again in full."""

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import attrs
import pytest
from support.llm_server import Reply
from support.provider_streams import run

from pi_core.protocol.messages import TextContent, UserMessage
from pi_core.protocol.provider import LlmContext, StreamOptions, ToolSpec
from pi_plugins.providers.anthropic import AnthropicProvider
from pi_plugins.providers.anthropic_threads import MESSAGE_THREADS_BETA, ThreadedMessages, supports_threads

LOST = Reply(status=404, raw=json.dumps({"type": "error", "error": {
    "type": "not_found_error", "message": "thread not found", "details": {"error_code": "thread_not_found"}}}),
    content_type="application/json")
UNKNOWN_FIELD = Reply(status=400, raw=json.dumps({"type": "error", "error": {
    "type": "invalid_request_error", "message": "thread: Extra inputs are not permitted"}}),
    content_type="application/json")


@pytest.fixture(autouse=True)
def _fresh_threads():
    ThreadedMessages.threads.forget()
    yield
    ThreadedMessages.threads.forget()


def converse(llm_server, prompts, *, session_id="s-1", threads=True, tools=(), warm_up_after=None,
             end_session_after=None):
    """Each prompt in turn, the answers kept in the conversation as the agent keeps them;
    after prompt number ``warm_up_after``, a cache warm-up (``disable_continuation``),
    and after number ``end_session_after`` the session's end as the hook tells it."""
    model = attrs.evolve(llm_server.model("anthropic-messages", provider="anthropic"),
                         compat={"supportsMessageThreads": threads})
    messages: list = []

    async def go():
        for prompt in prompts:
            messages.append(UserMessage(content=[TextContent(prompt)]))
            context = LlmContext(system_prompt="Be brief.", messages=list(messages), tools=list(tools))
            events = [e async for e in AnthropicProvider().stream(
                model, context, StreamOptions(api_key="sk-ant", max_retries=0, session_id=session_id))]
            last = events[-1]
            assert last.type == "done", last.error.error_message
            messages.append(last.message)
            if warm_up_after == len(messages) // 2:
                warm = StreamOptions(api_key="sk-ant", max_retries=0, session_id=session_id, disable_continuation=True)
                context = LlmContext(system_prompt="Be brief.", messages=list(messages), tools=list(tools))
                events = [e async for e in AnthropicProvider().stream(model, context, warm)]
                assert events[-1].type == "done"
            if end_session_after == len(messages) // 2:
                from pi_plugins.providers import anthropic

                anthropic.session_shutdown(type("Ctx", (), {"session_id": session_id})())
    run(go())
    return [r for r in llm_server.requests if r.method == "POST"]


def shape(request) -> tuple:
    body = request.body
    return (body.get("thread"), "system" in body, "tools" in body, [m["role"] for m in body["messages"]])


def test_later_requests_continue_the_thread_with_only_the_new_message(llm_server):
    llm_server.push(Reply(text="a1"), Reply(text="a2"), Reply(text="a3"))
    tools = [ToolSpec(name="read", description="Read", parameters={"type": "object", "properties": {}})]
    first, second, third = converse(llm_server, ["one", "two", "three"], tools=tools)
    assert shape(first) == ({"type": "create"}, True, True, ["user"])
    assert shape(second) == ({"type": "continue", "previous_message_id": "msg_test0001"}, False, False, ["user"])
    assert shape(third) == ({"type": "continue", "previous_message_id": "msg_test0002"}, False, False, ["user"])
    assert third.body["messages"][0]["content"][0]["text"] == "three"
    assert all(MESSAGE_THREADS_BETA in r.headers["anthropic-beta"] for r in (first, second, third))


def test_a_lost_thread_is_sent_again_in_full_as_a_new_thread(llm_server):
    llm_server.push(Reply(text="a1"), LOST, Reply(text="a2"), Reply(text="a3"))
    requests = converse(llm_server, ["one", "two", "three"])
    assert [shape(r) for r in requests] == [
        ({"type": "create"}, True, False, ["user"]),
        ({"type": "continue", "previous_message_id": "msg_test0001"}, False, False, ["user"]),
        ({"type": "create"}, True, False, ["user", "assistant", "user"]),
        ({"type": "continue", "previous_message_id": "msg_test0003"}, False, False, ["user"]),
    ]


def test_an_endpoint_that_refuses_the_field_gets_full_requests_for_the_rest_of_the_session(llm_server):
    llm_server.push(UNKNOWN_FIELD, Reply(text="a1"), Reply(text="a2"))
    requests = converse(llm_server, ["one", "two"])
    assert [shape(r) for r in requests] == [
        ({"type": "create"}, True, False, ["user"]),
        (None, True, False, ["user"]),
        (None, True, False, ["user", "assistant", "user"]),
    ]
    assert MESSAGE_THREADS_BETA in requests[-1].headers["anthropic-beta"]  # as pi 1.6: the beta stays


def test_an_error_not_about_the_thread_is_the_answers(llm_server):
    llm_server.push(Reply(text="a1"), Reply(status=400, error="prompt is too long: 300000 tokens > 200000 maximum"))
    model = attrs.evolve(llm_server.model("anthropic-messages", provider="anthropic"),
                         compat={"supportsMessageThreads": True})

    async def go():
        messages = [UserMessage(content=[TextContent("one")])]
        options = lambda: StreamOptions(api_key="k", max_retries=0, session_id="s-2")  # noqa: E731
        done = [e async for e in AnthropicProvider().stream(model, LlmContext(messages=messages), options())][-1]
        messages += [done.message, UserMessage(content=[TextContent("two")])]
        return [e async for e in AnthropicProvider().stream(model, LlmContext(messages=messages), options())][-1]
    last = run(go())
    assert last.type == "error" and "prompt is too long" in last.error.error_message
    assert len([r for r in llm_server.requests if r.method == "POST"]) == 2


def test_a_warm_up_sends_no_thread_and_the_conversation_continues_its_own(llm_server):
    """pi 1.6's ``disableContinuation``: the whole request with the beta and no
    ``thread``; the next turn still continues the previous answer."""
    llm_server.push(Reply(text="a1"), Reply(text="warm"), Reply(text="a2"))
    first, warm, second = converse(llm_server, ["one", "two"], warm_up_after=1)
    assert shape(warm) == (None, True, False, ["user", "assistant"])
    assert MESSAGE_THREADS_BETA in warm.headers["anthropic-beta"]
    assert shape(second) == ({"type": "continue", "previous_message_id": "msg_test0001"}, False, False, ["user"])


def test_a_session_that_ends_forgets_its_thread(llm_server):
    llm_server.push(Reply(text="a1"), Reply(text="a2"))
    first, again = converse(llm_server, ["one", "two"], end_session_after=1)
    assert shape(again) == ({"type": "create"}, True, False, ["user", "assistant", "user"])


def test_no_session_or_no_support_sends_no_thread(llm_server):
    llm_server.push(Reply(text="a1"), Reply(text="a2"))
    requests = converse(llm_server, ["one", "two"], threads=False)
    assert all("thread" not in r.body and MESSAGE_THREADS_BETA not in r.headers.get("anthropic-beta", "")
               for r in requests)
    llm_server.push(Reply(text="a1"))
    [*_, last] = converse(llm_server, ["one"], session_id=None)
    assert "thread" not in last.body


def test_threads_are_on_by_default_only_for_anthropics_own_endpoint(llm_server):
    model = llm_server.model("anthropic-messages", provider="anthropic")
    assert not supports_threads(model)
    assert supports_threads(attrs.evolve(model, base_url="https://api.anthropic.com"))
    assert supports_threads(attrs.evolve(model, compat={"supportsMessageThreads": True}))


@pytest.mark.process
@pytest.mark.requires("pi16")
@pytest.mark.parametrize("script", ["ok", "lost", "unsupported"])
def test_three_turns_go_out_as_pi_16_sends_them(tmp_path, llm_server, script):
    from support.programs import node_for, require_real

    package = require_real("pi16")
    shapes = {}
    for who in ("pi", "ours"):
        agent = tmp_path / who / "agent"
        agent.mkdir(parents=True)
        (agent / "models.json").write_text(json.dumps({"providers": {"anthropic": {
            "baseUrl": llm_server.url, "apiKey": "sk-ant-test", "models": [{
                "id": "claude-sonnet-4-5", "name": "S", "api": "anthropic-messages", "reasoning": False,
                "input": ["text"], "contextWindow": 200000, "maxTokens": 8192,
                "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
                "compat": {"supportsMessageThreads": True}}]}}}))
        replies = {"ok": [Reply(text="a1"), Reply(text="a2"), Reply(text="a3")],
                   "lost": [Reply(text="a1"), LOST, Reply(text="a2"), LOST, Reply(text="a3")],
                   "unsupported": [UNKNOWN_FIELD, Reply(text="a1"), Reply(text="a2"), Reply(text="a3")]}[script]
        llm_server.push(*[dataclasses.replace(r, response_id="msg_same") if r.status == 200 else r for r in replies])
        before = len(llm_server.requests)
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / who), "PI_OFFLINE": "1",
               "PI_CODING_AGENT_DIR": str(agent)}
        command = ([node_for("pi16"), str(Path(package) / "dist" / "cli.js")] if who == "pi"
                   else [sys.executable, "-m", "pi_plugins.cli"])
        done = subprocess.run([*command, "--model", "anthropic/claude-sonnet-4-5", "--no-tools", "--no-session",
                               "-p", "one", "two", "three"], cwd=tmp_path / who, env=env,
                              capture_output=True, text=True, timeout=90)
        assert done.returncode == 0, f"{who}: {done.stderr}"
        shapes[who] = [shape(r) + (MESSAGE_THREADS_BETA in r.headers.get("anthropic-beta", ""),)
                       for r in llm_server.requests[before:]]
    assert shapes["ours"] == shapes["pi"]


# ---------------------------------------------------------------- the interleaved-thinking beta


@pytest.mark.parametrize(("reasoning", "level", "model_id", "asked"), [
    (True, "medium", "claude-sonnet-4-5", True),
    (True, "off", "claude-sonnet-4-5", False),
    (True, None, "claude-sonnet-4-5", False),
    (False, "medium", "claude-3-5-haiku", False),
    (True, "high", "claude-opus-4-6", False),  # adaptive: it interleaves by itself
])
def test_interleaved_thinking_is_asked_only_while_a_budgeted_reasoning_model_thinks(reasoning, level, model_id, asked):
    """pi 1.6 sends ``interleaved-thinking-2025-05-14`` only with thinking on for a
    reasoning model that thinks on a budget."""
    from pi_core.protocol.model import Model
    from pi_plugins.providers.anthropic import INTERLEAVED_THINKING_BETA

    model = Model(id=model_id, provider="anthropic", api="anthropic-messages", base_url="http://127.0.0.1:9",
                  reasoning=reasoning)
    context = LlmContext(system_prompt="Be brief.", messages=[UserMessage(content=[TextContent("hi")])])
    request = AnthropicProvider().build_request(model, context, StreamOptions(api_key="sk-ant", thinking_level=level))
    assert (INTERLEAVED_THINKING_BETA in request.headers.get("anthropic-beta", "")) is asked
