"""The agent loop driving the real providers against the scripted server."""

import asyncio

import pytest
from support.llm_server import Reply
from support.provider_streams import PROVIDERS

from pi_core import Agent, tool


@tool(parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
def read(args, run):
    """Read a file."""
    return f"contents of {args['path']}"


def test_a_tool_turn_then_an_answer(llm_server, api):
    llm_server.push(Reply(tool_calls=[("read", {"path": "a.txt"})]), Reply(text="Done."))
    agent = Agent(model=llm_server.model(api), tools=[read], providers=PROVIDERS.values())
    produced = asyncio.run(agent.prompt("Read a.txt"))
    assert [m.role for m in produced] == ["user", "assistant", "toolResult", "assistant"]
    assert produced[-1].text == "Done."
    second = str(llm_server.requests[1].body)
    assert "contents of a.txt" in second  # the tool result went back in this API's format


def test_agent_abort_mid_stream_keeps_the_partial_answer_and_the_next_run_works(llm_server, api):
    llm_server.push(Reply(text="tick " * 300, delta_size=5, delay=0.01), Reply(text="Fresh answer."))
    agent = Agent(model=llm_server.model(api), tools=[], providers=PROVIDERS.values())
    deltas = []

    def listen(event):
        if event.type == "message_update" and event.assistant_message_event.type == "text_delta":
            deltas.append(event)
            if len(deltas) == 3:
                agent.abort()

    agent.subscribe(listen)

    async def go():
        first = await agent.prompt("Count")
        second = await agent.prompt("Again")
        return first, second

    first, second = asyncio.run(go())
    aborted = first[-1]
    assert aborted.stop_reason == "aborted" and 0 < len(aborted.text) < len("tick " * 300)
    assert llm_server.wait_for_disconnect(timeout=2)
    assert second[-1].text == "Fresh answer."
    assert "tick" not in str(llm_server.requests[1].body)  # the aborted answer left the context


def test_a_failed_request_ends_the_run_with_the_classified_error(llm_server):
    # no retries inside the provider unless retry.provider.maxRetries asks (pi 1.6)
    llm_server.push(Reply(status=429, error="slow down", headers={"retry-after": "3"}),
                    Reply(text="never asked for"))
    agent = Agent(model=llm_server.model("anthropic-messages"), tools=[], providers=PROVIDERS.values())
    produced = asyncio.run(agent.prompt("hi"))
    last = produced[-1]
    assert last.stop_reason == "error" and "slow down" in last.error_message
    assert (last.failure.kind, last.failure.retry_after_ms) == ("retryable", 3000)
    assert len(llm_server.requests) == 1


@pytest.fixture(params=sorted(PROVIDERS))
def api(request):
    return request.param
