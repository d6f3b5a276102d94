"""Requests on a subscription carry what the service requires, as pi 0.73.1 sends them:
checked in-process for their parts and against the real pi's own request to the same
local server (pi runs with ``support/node/provider_origins.mjs``, which applies
PI_PROVIDER_ORIGINS to its fetch: pi has no such setting)."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.llm_server import Reply
from support.programs import node_for, require_real
from support.provider_streams import collect, run
from support.side_by_side import requests_of_both

from pi_core.protocol.messages import TextContent, UserMessage
from pi_core.protocol.provider import LlmContext, StreamOptions, ToolSpec
from pi_core.testing import assert_light_import

NODE = Path(__file__).parents[1] / "support" / "node"
TOKEN = "sk-ant-oat01-subscription-token"
CONTEXT = LlmContext(system_prompt="Be brief.", messages=[UserMessage(content=[TextContent("Hi")])],
                     tools=[ToolSpec("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}),
                            ToolSpec("lookup", "Ours", {"type": "object", "properties": {}})])


@pytest.mark.process
@pytest.mark.parametrize("provider", ["openai_completions", "openai_responses", "anthropic", "openai_codex"])
def test_a_provider_imports_the_sign_in_flows_only_for_a_subscription_request(provider):
    # pi -p to any other server does not pay for them (a local callback server, hashing)
    assert_light_import(f"pi_plugins.providers.{provider}", (), also=("pi_plugins.signin.flows",))


def test_a_claude_subscription_request_is_bearer_with_claude_codes_identity(llm_server):
    llm_server.push(Reply(tool_calls=[("Read", {"path": "a.txt"})]))
    message = run(collect(llm_server.model("anthropic-messages"), CONTEXT,
                          StreamOptions(api_key=TOKEN, max_retries=0)))[1]
    [request] = llm_server.requests
    assert request.headers["authorization"] == f"Bearer {TOKEN}" and "x-api-key" not in request.headers
    assert request.headers["anthropic-beta"].startswith("claude-code-20250219,oauth-2025-04-20")
    assert request.headers["user-agent"] == "claude-cli/2.1.322" and request.headers["x-app"] == "cli"
    system = request.body["system"]
    assert [block["text"] for block in system] == [
        "You are Claude Code, Anthropic's official CLI for Claude.", "Be brief."]
    assert [tool["name"] for tool in request.body["tools"]] == ["Read", "lookup"]
    [call] = [b for b in message.content if b.type == "toolCall"]
    assert call.name == "read"  # Claude Code's name mapped back to the caller's tool


def test_an_api_key_request_stays_as_it_was(llm_server):
    llm_server.push(Reply(text="ok"))
    run(collect(llm_server.model("anthropic-messages"), CONTEXT, StreamOptions(api_key="sk-ant-api03-key", max_retries=0)))
    [request] = llm_server.requests
    assert request.headers["x-api-key"] == "sk-ant-api03-key" and "authorization" not in request.headers
    assert [b["text"] for b in request.body["system"]] == ["Be brief."]
    assert [tool["name"] for tool in request.body["tools"]] == ["read", "lookup"]


def _signed_in(agent: Path) -> None:
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "auth.json").write_text(json.dumps({"anthropic": {
        "type": "oauth", "refresh": "r-1", "access": TOKEN, "expires": int(time.time() * 1000) + 3_600_000}}))
    os.chmod(agent / "auth.json", 0o600)


#: What the subscription needs and both programs must send alike.
COMPARED_HEADERS = ("authorization", "anthropic-beta", "user-agent", "x-app", "anthropic-version",
                    "anthropic-dangerous-direct-browser-access", "accept", "content-type")


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_the_claude_subscription_request_matches_the_real_pis(tmp_path, llm_server):
    """pi 1.6's: its Claude Code version and betas (message threads on api.anthropic.com;
    0.73.1 sent neither)."""
    pi, ours = requests_of_both(tmp_path, llm_server, "anthropic/claude-sonnet-4-5", prepare=_signed_in,
                                origins={"https://api.anthropic.com": llm_server.url}, real="pi16")
    assert ours.path == pi.path
    assert {h: ours.headers.get(h) for h in COMPARED_HEADERS} == {h: pi.headers.get(h) for h in COMPARED_HEADERS}
    assert ours.body["system"][0] == pi.body["system"][0]
    assert len(ours.body["system"]) == len(pi.body["system"]) == 2
    assert sorted(t["name"] for t in ours.body["tools"]) == sorted(t["name"] for t in pi.body["tools"])
    skip = ("system", "tools", "messages", "max_tokens")
    assert {k: v for k, v in ours.body.items() if k not in skip} == {k: v for k, v in pi.body.items() if k not in skip}
    assert ours.body["max_tokens"] == 64000


def _codex_signed_in(agent: Path, token: str) -> None:
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "auth.json").write_text(json.dumps({"openai-codex": {
        "type": "oauth", "access": token, "refresh": "r-1", "expires": int(time.time() * 1000) + 3_600_000,
        "accountId": "acct-123"}}))
    os.chmod(agent / "auth.json", 0o600)


#: Codex headers both programs send alike. Not the user agent: pi means "pi (<platform>
#: <release>; <arch>)", which we send, but its first request of a run often says
#: "pi (browser)" (its os module is still being imported).
CODEX_HEADERS = ("authorization", "chatgpt-account-id", "originator", "openai-beta", "accept", "content-type")


@pytest.mark.process
@pytest.mark.requires("pi")
def test_the_chatgpt_subscription_request_matches_the_real_pis(tmp_path, llm_server):
    from support.signin_server import fake_jwt

    package = require_real("pi")
    token = fake_jwt({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-123"}})
    requests = {}
    for who in ("pi", "ours"):
        agent, cwd = tmp_path / who / "agent", tmp_path / who / "project"
        cwd.mkdir(parents=True)
        _codex_signed_in(agent, token)
        # the base URL through models.json, which pi honours (its WebSocket try goes there too)
        (agent / "models.json").write_text(json.dumps(
            {"providers": {"openai-codex": {"baseUrl": f"{llm_server.url}/backend-api"}}}))
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / who / "home"), "PI_OFFLINE": "1",
               "PI_CODING_AGENT_DIR": str(agent)}
        command = ([node_for("pi"), str(package / "dist" / "cli.js")] if who == "pi"
                   else [sys.executable, "-m", "pi_plugins.cli"])
        llm_server.push(Reply(text="ok"))
        done = subprocess.run([*command, "--model", "openai-codex/gpt-5.1", "--no-session", "-p", "Hi"], cwd=cwd,
                              env=env, capture_output=True, text=True, timeout=90)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "ok"
        requests[who] = [r for r in llm_server.requests if r.method == "POST"][-1]
    pi, ours = requests["pi"], requests["ours"]
    assert ours.path == pi.path == "/backend-api/codex/responses"
    assert {h: ours.headers.get(h) for h in CODEX_HEADERS} == {h: pi.headers.get(h) for h in CODEX_HEADERS}
    # pi 0.73.1's "pi (<os> <release>; <arch>)"; ours pi 1.6's detailed form with our name
    assert ours.headers["user-agent"].startswith("pi-harness/") and pi.headers["user-agent"].startswith("pi (")
    # pi 1.6 (which ours follows; test_codex_request_pi16.py) sends the model's output
    # limit, and the prompt and the tools (strict where pi's tools ask) as developer items
    # of the input; 0.73.1 sent none, and instructions and tools fields
    moved = ("instructions", "tools", "max_output_tokens")
    assert ours.body["max_output_tokens"] == 128000 and "max_output_tokens" not in pi.body
    skip = ("input", "prompt_cache_key", *moved)
    assert {k: v for k, v in ours.body.items() if k not in skip} == {k: v for k, v in pi.body.items() if k not in skip}
    assert [k for k in ours.body if k not in moved] == [k for k in pi.body if k not in moved]
    [declared] = [i for i in ours.body["input"] if i.get("type") == "additional_tools"]
    assert sorted(t["name"] for t in declared["tools"]) == sorted(t["name"] for t in pi.body["tools"])
    assert ours.body["input"][1]["role"] == "developer" and pi.body["instructions"]  # each one's own prompt


COPILOT_TOKEN = "tid=1;exp=9999999999;sku=x;proxy-ep=proxy.individual.githubcopilot.com;8kp=1"
#: What Copilot requires and both programs must send alike (the editor identity, the
#: per-request intent and initiator, the Copilot token as Bearer).
COPILOT_HEADERS = ("authorization", "user-agent", "editor-version", "editor-plugin-version",
                   "copilot-integration-id", "x-initiator", "openai-intent", "copilot-vision-request")


@pytest.mark.process
@pytest.mark.parametrize("model_id,path,real", [
    # models in both pis' catalogues go side by side with 0.73.1; Copilot's chat-completions
    # models are all new in 1.6, so that one goes with pi 1.6
    ("claude-sonnet-4.6", "/v1/messages", "pi"), ("kimi-k3", "/chat/completions", "pi16"),
    ("gpt-5.3-codex", "/responses", "pi")])
def test_the_copilot_request_matches_the_real_pis_for_each_of_its_apis(tmp_path, llm_server, model_id, path, real):
    package = require_real(real)
    requests = {}
    for who in ("pi", "ours"):
        agent, cwd = tmp_path / who / "agent", tmp_path / who / "project"
        cwd.mkdir(parents=True)
        agent.mkdir(parents=True)
        (agent / "auth.json").write_text(json.dumps({"github-copilot": {
            "type": "oauth", "refresh": "gho_x", "access": COPILOT_TOKEN,
            "expires": int(time.time() * 1000) + 3_600_000}}))
        os.chmod(agent / "auth.json", 0o600)
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / who / "home"), "PI_OFFLINE": "1",
               "PI_CODING_AGENT_DIR": str(agent),
               "PI_PROVIDER_ORIGINS": json.dumps({"https://api.individual.githubcopilot.com": llm_server.url})}
        command = ([node_for(real), "--import", str(NODE / "provider_origins.mjs"), str(package / "dist" / "cli.js")]
                   if who == "pi" else [sys.executable, "-m", "pi_plugins.cli"])
        llm_server.push(Reply(text="ok"))
        done = subprocess.run([*command, "--model", f"github-copilot/{model_id}", "--no-session", "-p", "Hi"],
                              cwd=cwd, env=env, capture_output=True, text=True, timeout=90)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "ok"
        requests[who] = llm_server.requests[-1]
    pi, ours = requests["pi"], requests["ours"]
    assert ours.path == pi.path == path
    assert {h: ours.headers.get(h) for h in COPILOT_HEADERS} == {h: pi.headers.get(h) for h in COPILOT_HEADERS}
    assert ours.headers["authorization"] == f"Bearer {COPILOT_TOKEN}" and ours.headers["x-initiator"] == "user"
    assert "x-api-key" not in ours.headers
    skip = ("messages", "input", "system", "tools", "prompt_cache_key", "stream_options")
    limits = ("max_completion_tokens", "max_tokens", "max_output_tokens")
    if real == "pi":  # 0.73.1 capped the output at 32000 tokens; we ask for pi 1.6's whole limit
        skip += limits
    elif model_id == "kimi-k3":
        # its output limit is its whole window, so what is asked for is the window less the
        # estimated input: the system prompt and tools, which are not yet pi 1.6's word for word
        skip += limits
        [field] = [f for f in limits if f in pi.body]
        assert field in ours.body and abs(ours.body[field] - pi.body[field]) < 2000
        assert ours.body[field] < 1048576 - 4096
    assert {k: v for k, v in ours.body.items() if k not in skip} == {k: v for k, v in pi.body.items() if k not in skip}


def test_copilot_goes_to_the_api_its_token_names_with_the_initiator_and_vision_headers(llm_server, monkeypatch):
    from pi_core.protocol.messages import AssistantMessage, ImageContent, ToolCall, ToolResultMessage
    from pi_plugins.providers.catalogue import builtin_models

    token = "tid=1;exp=9999999999;proxy-ep=proxy.business.githubcopilot.com;x=1"
    monkeypatch.setenv("PI_PROVIDER_ORIGINS", json.dumps({"https://api.business.githubcopilot.com": llm_server.url}))
    model = next(m for m in builtin_models() if m.key == "github-copilot/kimi-k3")  # a chat-completions one
    history = LlmContext(messages=[
        UserMessage(content=[TextContent("Look"), ImageContent(data="aGk=", mime_type="image/png")]),
        AssistantMessage(content=[ToolCall(id="c1", name="read", arguments={})], api=model.api,
                         provider=model.provider, model=model.id, stop_reason="toolUse"),
        ToolResultMessage(tool_call_id="c1", tool_name="read", content=[TextContent("x")])])
    llm_server.push(Reply(text="ok"))
    message = run(collect(model, history, StreamOptions(api_key=token, max_retries=0)))[1]
    assert message.text == "ok", message.error_message
    [request] = llm_server.requests
    assert request.path == "/chat/completions"
    assert request.headers["x-initiator"] == "agent" and request.headers["copilot-vision-request"] == "true"
    assert request.headers["openai-intent"] == "conversation-edits"
    assert request.headers["editor-version"] == "vscode/1.107.0"
