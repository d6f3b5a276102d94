"""Codex's whole request side by side with pi 1.6 on the scripted server: the same keys in
the same order, the system prompt and the tools as developer items of the input (no
``instructions``, no ``tools`` field), the tools' strict schemas, thinking off sent as
effort ``none``, the ``session-id`` header and the body zstd-compressed. The scripted
server reads a zstd body back; the tools' words and the prompt's are each program's own."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.llm_server import Reply

from pi_plugins.providers.strict_schema import strict_schema

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]


def _run(who, tmp_path, llm_server, model="openai-codex/gpt-5.6-luna", args=(), answer=None):
    from support.programs import node_for, require_real
    from support.signin_server import fake_jwt

    token = fake_jwt({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-123"}})
    agent, cwd = tmp_path / who / "agent", tmp_path / who / "project"
    agent.mkdir(parents=True, exist_ok=True)
    cwd.mkdir(parents=True, exist_ok=True)
    (agent / "auth.json").write_text(json.dumps({"openai-codex": {
        "type": "oauth", "access": token, "refresh": "r", "expires": 9_999_999_999_999, "accountId": "acct-123"}}))
    (agent / "models.json").write_text(json.dumps({"providers": {
        "openai-codex": {"baseUrl": f"{llm_server.url}/backend-api"},
        "gw": {"baseUrl": f"{llm_server.url}/v1", "api": "pi-messages", "apiKey": "sk-gw",
               "models": [{"id": "m1", "name": "M1", "reasoning": True, "input": ["text"],
                           "contextWindow": 100000, "maxTokens": 4096,
                           "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}]}}}))
    (agent / "settings.json").write_text(json.dumps({"transport": "sse"}))
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / who / "home"), "PI_OFFLINE": "1",
           "PI_CODING_AGENT_DIR": str(agent),
           **{k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ}}  # the code under test
    command = ([node_for("pi16"), str(Path(require_real("pi16")) / "dist" / "cli.js")] if who == "pi16"
               else [sys.executable, "-m", "pi_plugins.cli"])
    llm_server.push(answer or Reply(text="ok"))
    done = subprocess.run([*command, "--model", model, "--no-session", *args, "-p", "Hi"],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=90)
    assert done.returncode == 0 and done.stdout.strip() == "ok", f"{who}: {done.stderr}"
    return [r for r in llm_server.requests if r.method == "POST"][-1]


def _pi_messages_answer(text: str) -> str:
    events = [{"type": "start"}, {"type": "text_start", "contentIndex": 0},
              {"type": "text_delta", "contentIndex": 0, "delta": text},
              {"type": "text_end", "contentIndex": 0, "content": text}, {"type": "done", "reason": "stop", "usage": {
                  "input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}}]
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events)


def _shape(item: dict) -> tuple:
    return item.get("type"), item.get("role")


@pytest.mark.parametrize("thinking", ["off", "high"])
def test_codex_request_has_pi16s_shape_with_the_tools_and_prompt_in_the_input(tmp_path, llm_server, thinking):
    sent = {who: _run(who, tmp_path, llm_server, args=("--thinking", thinking)) for who in ("pi16", "ours")}
    pi, ours = sent["pi16"].body, sent["ours"].body
    assert list(ours) == list(pi) and "instructions" not in ours and "tools" not in ours
    own_words = ("input", "prompt_cache_key")
    assert {k: v for k, v in ours.items() if k not in own_words} == {k: v for k, v in pi.items() if k not in own_words}
    assert [_shape(i) for i in ours["input"]] == [_shape(i) for i in pi["input"]] == [
        ("additional_tools", "developer"), (None, "developer"), (None, "user")]
    assert ours["input"][2] == pi["input"][2]
    pi_tools, our_tools = pi["input"][0]["tools"], ours["input"][0]["tools"]
    assert [(t["type"], t["name"], t["strict"]) for t in our_tools] == \
        [(t["type"], t["name"], t["strict"]) for t in pi_tools]
    for tool in our_tools:  # strict: every property required, nothing else allowed
        assert tool["parameters"]["required"] == list(tool["parameters"]["properties"])
        assert tool["parameters"]["additionalProperties"] is False
    for request in sent.values():
        assert request.headers["content-encoding"] == "zstd"
        assert request.headers["session-id"] == request.headers["x-client-request-id"]
        assert "session_id" not in request.headers
    # pi 1.6's detailed User-Agent, ours with our name, and its originator
    assert sent["pi16"].headers["user-agent"].startswith("pi/1.6.")
    assert sent["ours"].headers["user-agent"].startswith("pi-harness/")
    assert sent["ours"].headers["user-agent"].split(" ", 1)[1].count(";") == 2
    assert sent["ours"].headers["originator"] == sent["pi16"].headers["originator"] == "pi"


def test_the_strict_schemas_are_pi16s_rule(tmp_path, llm_server):
    """pi 1.6's own tools, as its pi-messages request declares them unchanged, made strict
    by ours, are the schemas pi 1.6 sends Codex."""
    codex = _run("pi16", tmp_path, llm_server).body
    declared = _run("pi16", tmp_path, llm_server, model="gw/m1", answer=Reply(raw=_pi_messages_answer("ok"))).body
    raw = {t["name"]: t["parameters"] for t in declared["context"]["messages"][0]["toolsAdded"]}
    strict = {t["name"]: t["parameters"] for t in codex["input"][0]["tools"]}
    assert set(raw) == set(strict) == {"read", "bash", "edit", "write"}
    for name, parameters in raw.items():
        assert strict_schema(parameters) == strict[name], name


def test_the_request_after_a_tool_call_is_pi16s(tmp_path, llm_server):
    """The conversation after the developer items: the question, the call, its output."""
    inputs = {}
    for who in ("pi16", "ours"):
        (tmp_path / who / "project").mkdir(parents=True)
        (tmp_path / who / "project" / "a.txt").write_text("hello\n")
        llm_server.push(Reply(tool_calls=[("read", {"path": "a.txt"}, "call_1")]))
        inputs[who] = _run(who, tmp_path, llm_server, args=("--thinking", "off")).body["input"][2:]
    for item in (*inputs["pi16"], *inputs["ours"]):
        if item.get("type") == "function_call":
            item["id"] = item["id"][:7]  # the scripted server numbers its items across both runs
    assert inputs["ours"] == inputs["pi16"]
    assert [i.get("type") for i in inputs["ours"]] == [None, "function_call", "function_call_output"]


@pytest.mark.parametrize("thinking", ["off", "high"])
def test_a_model_with_mid_conversation_effort_says_its_level_in_a_configuration_update_as_pi16(
        tmp_path, llm_server, thinking):
    """``supportsMidConvoEffort`` (GPT-6 on Codex): a fixed ``reasoning.effort`` and the level
    in a ``configuration_update`` item at the end of the input, so the cached prefix holds."""
    sent = {who: _run(who, tmp_path, llm_server, model="openai-codex/gpt-6-luna", args=("--thinking", thinking)).body
            for who in ("pi16", "ours")}
    pi, ours = sent["pi16"], sent["ours"]
    assert ours["reasoning"] == pi["reasoning"] == {"effort": "medium", "summary": "auto"}
    assert ours["input"][-1] == pi["input"][-1] == {
        "type": "configuration_update", "reasoning": {"effort": "none" if thinking == "off" else "high"}}


def test_an_answer_given_at_a_level_says_it_again_before_it_on_the_next_request_as_pi16(tmp_path, llm_server):
    """``supportsMidConvoEffort``: the answer keeps the level it was asked at, and the
    request after its tool call has that level in a ``configuration_update`` just before
    the answer's items, then the level asked now at the end."""
    shapes = {}
    for who in ("pi16", "ours"):
        (tmp_path / who / "project").mkdir(parents=True)
        (tmp_path / who / "project" / "a.txt").write_text("hello\n")
        llm_server.push(Reply(tool_calls=[("read", {"path": "a.txt"}, "call_1")]))
        body = _run(who, tmp_path, llm_server, model="openai-codex/gpt-6-luna", args=("--thinking", "low")).body
        shapes[who] = [(i.get("type"), i.get("reasoning")) for i in body["input"][2:]]
    assert shapes["ours"] == shapes["pi16"] == [
        (None, None), ("configuration_update", {"effort": "low"}), ("function_call", None),
        ("function_call_output", None), ("configuration_update", {"effort": "low"})]
