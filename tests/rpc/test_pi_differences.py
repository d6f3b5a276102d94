"""Where RPC clients saw ours differ from the real pi 0.73.1: no model configured, the
session stats, ``thinking_level_changed``, ``text_end`` on abort, the provider's own
retries (now pi 1.6's: none unless ``retry.provider.maxRetries`` asks) and a missing key."""

import pytest
import json
import subprocess
import sys

from support.llm_server import Reply
from support.rpc import RpcClient, write_models, write_settings


def exchange(rpc, server, prompt: str, answer: str) -> None:
    server.push(Reply(text=answer))
    mark = rpc.mark()
    rpc.ok("prompt", message=prompt)
    rpc.event("agent_end", after=mark)


def start_without_model(pi, start_rpc_clients) -> RpcClient:
    """``pi --mode rpc`` with no --model and nothing configured (no models.json, no keys)."""
    (pi.agent_dir / "models.json").unlink()
    env = {k: v for k, v in pi.env.items() if not k.endswith("_API_KEY")}
    process = subprocess.Popen([sys.executable, "-m", "pi_plugins.cli", "--mode", "rpc", "--no-themes"],
                               cwd=pi.cwd, env=env, text=True, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    client = RpcClient(process)
    start_rpc_clients.append(client)
    return client


@pytest.mark.process
def test_rpc_with_no_model_keeps_serving_and_says_why_a_prompt_fails(pi, tmp_path):
    clients = []
    try:
        rpc = start_without_model(pi, clients)
        assert rpc.ok("get_available_models") == {"models": []}
        state = rpc.ok("get_state")
        assert state["model"]["id"] == "unknown" and state["model"]["provider"] == "unknown"
        failed = rpc.request("prompt", message="hi")
        assert failed["success"] is False and "No model available" in failed["error"]
        assert rpc.events("agent_start") == []  # nothing ran
        stats = rpc.ok("get_session_stats")
        assert stats["totalMessages"] == 0 and "contextUsage" not in stats
        assert rpc.ok("get_state")["isStreaming"] is False  # still serving
        assert rpc.close() == 0
    finally:
        for client in clients:
            client.kill()


def test_a_missing_key_fails_the_prompt_before_any_request(start_rpc, server, pi):
    pi.env = {k: v for k, v in pi.env.items() if not k.endswith("_API_KEY")}
    rpc = start_rpc("--model", "openai/gpt-4o-mini")
    failed = rpc.request("prompt", message="hi")
    assert failed["success"] is False
    assert "No API key found for openai" in failed["error"] and "OPENAI_API_KEY" in failed["error"]
    assert rpc.events("agent_start") == [] and server.requests == []


def test_session_stats_count_the_whole_file_after_a_compaction_as_pi16_does(start_rpc, server, pi):
    write_settings(pi, compaction={"keepRecentTokens": 5})
    rpc = start_rpc()
    exchange(rpc, server, "first " * 50, "First answer. " * 20)
    exchange(rpc, server, "second " * 50, "Second answer. " * 20)
    before = rpc.ok("get_session_stats")
    assert (before["userMessages"], before["assistantMessages"], before["totalMessages"]) == (2, 2, 5)  # and pi 1.6's system message
    server.default = Reply(text="## Goal\nThe summary.")
    rpc.ok("compact")
    messages = rpc.ok("get_messages")["messages"]
    stats = rpc.ok("get_session_stats")
    roles = [m["role"] for m in messages]
    # pi 1.6 counts the session file (0.73.1 counted what the model sees): every message,
    # every answer's tokens and the summary request's, which the compaction entry holds
    assert len(messages) < stats["totalMessages"] == 5 and "compactionSummary" in roles
    assert (stats["userMessages"], stats["assistantMessages"]) == (2, 2)
    assert stats["tokens"]["total"] == sum(stats["tokens"][k] for k in ("input", "output", "cacheRead", "cacheWrite"))
    assert stats["tokens"]["input"] > before["tokens"]["input"]
    # until the model answers again the context's size is unknown, as pi reports it
    assert stats["contextUsage"] == {"tokens": None, "contextWindow": 128000, "percent": None}
    exchange(rpc, server, "third", "Third answer.")
    assert rpc.ok("get_session_stats")["contextUsage"]["tokens"] > 0


def test_thinking_level_changed_on_set_cycle_and_a_clamping_model_change(start_rpc, pi):
    write_models(pi, {"id": "thinker", "reasoning": True}, {"id": "plain"})
    rpc = start_rpc("--model", "local/thinker", "--thinking", "low")
    mark = rpc.mark()
    rpc.ok("set_thinking_level", level="high")
    assert rpc.event("thinking_level_changed", after=mark) == {"type": "thinking_level_changed", "level": "high"}
    mark = rpc.mark()
    rpc.ok("set_thinking_level", level="high")  # no change, no event
    assert rpc.events("thinking_level_changed", after=mark) == []
    assert rpc.ok("cycle_thinking_level") == {"level": "off"}
    assert rpc.event("thinking_level_changed", after=mark)["level"] == "off"
    rpc.ok("set_thinking_level", level="medium")
    mark = rpc.mark()
    rpc.ok("set_model", provider="local", modelId="plain")  # no reasoning: clamped to off
    assert rpc.event("thinking_level_changed", after=mark)["level"] == "off"
    assert rpc.ok("get_state")["thinkingLevel"] == "off"
    # as pi 1.6: the choices are this session's; nothing becomes the next run's default
    settings = pi.agent_dir / "settings.json"
    saved = json.loads(settings.read_text()) if settings.exists() else {}
    assert not {"defaultThinkingLevel", "defaultProvider", "defaultModel"} & set(saved)


def test_an_abort_ends_the_streamed_text_before_the_message_ends(rpc, server):
    server.push(Reply(text="word " * 400, delta_size=5, delay=0.01))
    rpc.ok("prompt", message="talk")
    rpc.wait_for(lambda l: l.get("type") == "message_update"
                 and l["assistantMessageEvent"]["type"] == "text_delta")
    rpc.ok("abort")
    rpc.event("agent_end")
    ends = [l for l in rpc.events("message_end") if l["message"]["role"] == "assistant"]
    assert ends and ends[-1]["message"]["stopReason"] == "aborted"
    updates = [l["assistantMessageEvent"] for l in rpc.events("message_update")]
    text_end = [u for u in updates if u["type"] == "text_end"]
    assert len(text_end) == 1 and text_end[0]["contentIndex"] == 0
    streamed = ends[-1]["message"]["content"][0]["text"]
    assert text_end[0]["content"] == streamed and streamed.startswith("word ")
    assert rpc.position(rpc.events("message_update")[-1]) < rpc.position(ends[-1])


def test_a_transient_failure_is_the_sessions_retry_unless_provider_retries_are_asked_for(start_rpc, server, pi):
    # pi 1.6: retry.provider.maxRetries is 0 unless set, so the session retries (auto_retry_*)
    write_settings(pi, retry={"baseDelayMs": 10})
    rpc = start_rpc()
    server.push(Reply(status=500, error="boom"), Reply(text="fine"))
    rpc.ok("prompt", message="hi")
    start = rpc.event("auto_retry_start")  # the harness's retry, which pi records as an error turn
    assert start["attempt"] == 1 and "boom" in start["errorMessage"]
    assert rpc.event("auto_retry_end")["success"] is True
    assert len(server.requests) == 2
    rpc.close()

    write_settings(pi, retry={"baseDelayMs": 10, "provider": {"maxRetries": 2}})
    rpc = start_rpc()
    server.push(Reply(status=500, error="boom"), Reply(text="fine again"))
    mark = rpc.mark()
    rpc.ok("prompt", message="hi")
    end = rpc.event("agent_end", after=mark)
    assert end["messages"][-1]["content"] == [{"type": "text", "text": "fine again"}]
    assert rpc.events("auto_retry_start") == [] and len(server.requests) == 4  # inside the provider
