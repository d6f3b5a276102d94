"""pi 1.6's ``pi-messages`` API (Radius's wire): the request is pi's own context and
options, the answer pi's own events, replayed onto the message."""

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
from pi_plugins.providers.pi_messages import PiMessagesProvider

USAGE = {"input": 10, "output": 3, "cacheRead": 2, "cacheWrite": 0, "totalTokens": 15,
         "cost": {"input": 0.01, "output": 0.02, "cacheRead": 0.001, "cacheWrite": 0, "total": 0.031}}


def events(*items: dict) -> str:
    return "".join(f"data: {json.dumps(item)}\n\n" for item in items)


def text_answer(text: str = "Hello", **done: object) -> str:
    return events({"type": "start"}, {"type": "text_start", "contentIndex": 0},
                  {"type": "text_delta", "contentIndex": 0, "delta": text[:2]},
                  {"type": "text_delta", "contentIndex": 0, "delta": text[2:]},
                  {"type": "text_end", "contentIndex": 0, "content": text},
                  {"type": "done", "reason": "stop", "usage": USAGE, "responseId": "resp-1", **done})


def ask(llm_server, context=None, **options):
    model = attrs.evolve(llm_server.model("openai-completions", provider="gw", reasoning=True),
                         api="pi-messages", base_url=f"{llm_server.url}/v1")
    context = context or LlmContext(system_prompt="Be brief.", messages=[UserMessage(content=[TextContent("Hi")])])

    async def go():
        out = [e async for e in PiMessagesProvider().stream(
            model, context, StreamOptions(api_key="sk-gw", max_retries=0, **options))]
        last = out[-1]
        return out, (last.message if last.type == "done" else last.error)
    return run(go())


def test_the_request_is_pis_context_and_options_with_the_key_as_bearer(llm_server):
    llm_server.push(Reply(raw=text_answer()))
    tools = [ToolSpec(name="read", description="Read a file", parameters={"type": "object"})]
    context = LlmContext(system_prompt="Be brief.", messages=[UserMessage(content=[TextContent("Hi")])], tools=tools)
    ask(llm_server, context, thinking_level="medium", session_id="s-1")
    [request] = llm_server.requests
    assert request.path == "/v1/messages"
    assert request.headers["authorization"] == "Bearer sk-gw"
    assert request.headers["accept"] == "text/event-stream"
    assert set(request.body) == {"model", "context", "options"}
    assert request.body["options"] == {"reasoning": "medium", "sessionId": "s-1"}
    system, user = request.body["context"]["messages"]
    assert system["role"] == "system" and system["content"] == "Be brief."
    assert system["toolsAdded"] == [{"name": "read", "description": "Read a file", "parameters": {"type": "object"},
                                     "constrainedSampling": {"type": "json_schema", "strict": "prefer"}}]
    assert user["role"] == "user" and user["content"] == [{"type": "text", "text": "Hi"}]


def test_the_transcripts_system_messages_go_as_they_are_with_the_prompt_in_sections(llm_server):
    """pi 1.6 sends its context as it is: the leading system message with ``content: ""``
    and the prompt by named section, a later one patching a section in its place."""
    from pi_core import SystemMessage

    llm_server.push(Reply(raw=text_answer()))
    read = {"name": "read", "description": "Read a file", "parameters": {"type": "object"}}
    lead = SystemMessage(sections={"preamble": "Be brief.", "cwd": "<cwd>\n/p\n</cwd>"}, tools_added=[read])
    first, later = UserMessage(content=[TextContent("Hi")]), UserMessage(content=[TextContent("Again")])
    patch = SystemMessage(sections={"cwd": None})
    _, answer = ask(llm_server, LlmContext(system_prompt="Be brief.", messages=[first]))
    llm_server.push(Reply(raw=text_answer()))
    transcript = [lead, first, answer, patch, later]
    ask(llm_server, LlmContext(system_prompt="Be brief.", messages=[first, answer, later], transcript=transcript))
    sent = llm_server.requests[-1].body["context"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "system", "user"]
    assert sent[0]["content"] == "" and sent[0]["sections"] == {"preamble": "Be brief.", "cwd": "<cwd>\n/p\n</cwd>"}
    assert sent[0]["toolsAdded"] == [{**read, "constrainedSampling": {"type": "json_schema", "strict": "prefer"}}]
    assert sent[3]["sections"] == {"cwd": None} and sent[3]["content"] == ""


def test_thinking_off_sends_no_reasoning(llm_server):
    llm_server.push(Reply(raw=text_answer()))
    ask(llm_server, thinking_level="off")
    assert "reasoning" not in llm_server.requests[0].body["options"]


def test_tool_choice_is_sent_only_when_the_caller_asks_for_one(llm_server):
    """pi 1.6 sends ``toolChoice`` as its caller gives it; its agent never does, so a turn
    sends none (the side-by-side test below compares a turn's options)."""
    llm_server.push(Reply(raw=text_answer()), Reply(raw=text_answer()))
    ask(llm_server)
    ask(llm_server, tool_choice={"type": "tool", "name": "read"})
    first, second = (r.body["options"] for r in llm_server.requests)
    assert "toolChoice" not in first and second["toolChoice"] == {"type": "tool", "name": "read"}


def test_the_answer_carries_the_gateways_usage_cost_and_response_model(llm_server):
    llm_server.push(Reply(raw=text_answer("Hello there", responseModel="real-model")))
    out, message = ask(llm_server)
    assert message.stop_reason == "stop" and message.text == "Hello there"
    assert message.usage.input == 10 and message.usage.cache_read == 2 and message.usage.cost.total == 0.031
    assert message.response_id == "resp-1" and message.extra["responseModel"] == "real-model"
    assert [e.type for e in out] == ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]


def test_thinking_and_tool_calls_stream_as_pis_blocks(llm_server):
    llm_server.push(Reply(raw=events(
        {"type": "thinking_start", "contentIndex": 0},
        {"type": "thinking_delta", "contentIndex": 0, "delta": "Hmm"},
        {"type": "thinking_end", "contentIndex": 0, "content": "Hmm", "contentSignature": "sig"},
        {"type": "toolcall_start", "contentIndex": 1, "id": "call-1", "toolName": "read"},
        {"type": "toolcall_delta", "contentIndex": 1, "delta": '{"path": "a'},
        {"type": "toolcall_delta", "contentIndex": 1, "delta": '.txt"}'},
        {"type": "toolcall_end", "contentIndex": 1,
         "toolCall": {"type": "toolCall", "id": "call-1", "name": "read", "arguments": {"path": "a.txt"}}},
        {"type": "done", "reason": "toolUse", "usage": USAGE})))
    _, message = ask(llm_server)
    assert message.stop_reason == "toolUse"
    thinking, call = message.content
    assert thinking.thinking == "Hmm" and thinking.thinking_signature == "sig"
    assert (call.id, call.name, call.arguments) == ("call-1", "read", {"path": "a.txt"})


def test_an_error_event_ends_the_answer_with_the_gateways_message_and_usage(llm_server):
    llm_server.push(Reply(raw=events(
        {"type": "text_start", "contentIndex": 0}, {"type": "text_delta", "contentIndex": 0, "delta": "Par"},
        {"type": "error", "reason": "error", "errorMessage": "upstream overloaded", "usage": USAGE})))
    _, message = ask(llm_server)
    assert message.stop_reason == "error" and "upstream overloaded" in message.error_message
    assert message.text == "Par" and message.usage.output == 3


def test_an_http_error_names_the_status_and_the_gateways_message(llm_server):
    llm_server.push(Reply(status=403, raw=json.dumps({"error": {"message": "model disabled", "code": "forbidden"}}),
                          content_type="application/json"))
    _, message = ask(llm_server)
    assert message.stop_reason == "error" and "403" in message.error_message
    assert "model disabled" in message.error_message


@pytest.mark.parametrize("bad", [{"type": "text_delta", "contentIndex": 0, "delta": "x"},
                                 {"type": "text_start", "contentIndex": 5},
                                 {"type": "text_start", "contentIndex": "__proto__"}])
def test_a_content_index_out_of_place_is_refused(llm_server, bad):
    llm_server.push(Reply(raw=events(bad, {"type": "done", "reason": "stop", "usage": USAGE})))
    _, message = ask(llm_server)
    assert message.stop_reason == "error" and "Invalid contentIndex" in message.error_message


def test_a_stream_without_a_terminal_event_is_a_lost_connection(llm_server):
    llm_server.push(Reply(raw=events({"type": "text_start", "contentIndex": 0},
                                     {"type": "text_delta", "contentIndex": 0, "delta": "Hi"})))
    _, message = ask(llm_server)
    assert message.stop_reason == "error" and "without a terminal event" in message.error_message
    assert message.failure.kind == "retryable"


def _models_json(llm_server) -> dict:
    return {"providers": {"gw": {"baseUrl": f"{llm_server.url}/v1", "api": "pi-messages", "apiKey": "sk-gw",
                                 "models": [{"id": "m1", "name": "M1", "reasoning": True, "input": ["text"],
                                             "contextWindow": 100000, "maxTokens": 4096,
                                             "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0}}]}}}


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_the_request_matches_pi_16s(tmp_path, llm_server):
    from support.programs import node_for, require_real

    package = require_real("pi16")
    bodies = {}
    for who in ("pi", "ours"):
        agent = tmp_path / who / "agent"
        agent.mkdir(parents=True)
        (agent / "models.json").write_text(json.dumps(_models_json(llm_server)))
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / who), "PI_OFFLINE": "1",
               "PI_CODING_AGENT_DIR": str(agent)}
        command = ([node_for("pi16"), str(Path(package) / "dist" / "cli.js")] if who == "pi"
                   else [sys.executable, "-m", "pi_plugins.cli"])
        llm_server.push(Reply(raw=text_answer("Hello")))
        done = subprocess.run([*command, "--model", "gw/m1", "--thinking", "low", "--no-session", "-p", "Hi"],
                              cwd=tmp_path / who, env=env, capture_output=True, text=True, timeout=90)
        assert done.returncode == 0, f"{who}: {done.stderr}"
        assert done.stdout.strip() == "Hello"
        request = llm_server.requests[-1]
        assert request.path == "/v1/messages" and request.headers["authorization"] == "Bearer sk-gw"
        bodies[who] = request.body
    pi, ours = bodies["pi"], bodies["ours"]
    assert ours["model"] == pi["model"] == "m1"
    assert set(ours["options"]) - {"maxTokens"} == set(pi["options"]) - {"maxTokens"}
    assert ours["options"]["reasoning"] == pi["options"]["reasoning"] == "low"
    assert [m["role"] for m in ours["context"]["messages"]] == [m["role"] for m in pi["context"]["messages"]]
    assert ([t["name"] for t in ours["context"]["messages"][0]["toolsAdded"]]
            == [t["name"] for t in pi["context"]["messages"][0]["toolsAdded"]])
    assert ([(t["name"], t.get("constrainedSampling")) for t in ours["context"]["messages"][0]["toolsAdded"]]
            == [(t["name"], t.get("constrainedSampling")) for t in pi["context"]["messages"][0]["toolsAdded"]])
    assert ours["context"]["messages"][1]["content"] == pi["context"]["messages"][1]["content"]
    lead, their_lead = ours["context"]["messages"][0], pi["context"]["messages"][0]
    assert sorted(lead) == sorted(their_lead) == ["content", "role", "sections", "timestamp", "toolsAdded"]
    assert lead["content"] == their_lead["content"] == ""  # the prompt goes as named sections
    assert list(lead["sections"])[0] == list(their_lead["sections"])[0] == "preamble"
    assert list(lead["sections"])[-1] == list(their_lead["sections"])[-1] == "cwd"
