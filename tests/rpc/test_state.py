"""get_state and get_messages; models and thinking levels; automatic compaction and
retries, as a client switches them."""

import threading

from support.llm_server import Reply
from support.rpc import write_models, write_settings

MODEL_KEYS = ["id", "name", "api", "provider", "baseUrl", "reasoning", "input", "cost",
              "contextWindow", "maxTokens"]


def test_get_state_and_get_messages_describe_the_session(rpc, server, pi):
    state = rpc.ok("get_state")
    assert list(state["model"])[:len(MODEL_KEYS)] == MODEL_KEYS
    assert state["model"]["id"] == "test-model" and state["model"]["provider"] == "local"
    assert {k: state[k] for k in ("thinkingLevel", "isStreaming", "isCompacting", "steeringMode",
                                  "followUpMode", "autoCompactionEnabled", "messageCount",
                                  "pendingMessageCount")} == {
        "thinkingLevel": "off", "isStreaming": False, "isCompacting": False,
        "steeringMode": "one-at-a-time", "followUpMode": "one-at-a-time",
        "autoCompactionEnabled": True, "messageCount": 0, "pendingMessageCount": 0}
    assert state["sessionFile"].startswith(str(pi.agent_dir / "sessions")) and state["sessionId"]
    assert "sessionName" not in state
    assert rpc.ok("get_messages") == {"messages": []}

    streaming = threading.Event()
    server.push(Reply(text="slow " * 40, delta_size=5, hold=streaming))
    rpc.ok("prompt", message="hello")
    rpc.event("message_update")
    assert rpc.ok("get_state")["isStreaming"] is True
    streaming.set()
    rpc.event("agent_end")
    state = rpc.ok("get_state")
    assert state["isStreaming"] is False and state["messageCount"] == 3
    messages = rpc.ok("get_messages")["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant"]
    assert messages[1]["content"] == [{"type": "text", "text": "hello"}]
    assert messages[2]["stopReason"] == "stop" and messages[2]["usage"]["totalTokens"] == 15


def test_models_are_listed_set_and_cycled(start_rpc, server, pi):
    write_models(pi, "test-model", {"id": "other-model", "name": "Other", "contextWindow": 32000})
    rpc = start_rpc()
    models = rpc.ok("get_available_models")["models"]
    assert [(m["provider"], m["id"]) for m in models] == [("local", "test-model"), ("local", "other-model")]
    assert models[1]["name"] == "Other" and models[1]["contextWindow"] == 32000

    chosen = rpc.ok("set_model", provider="local", modelId="other-model")
    assert chosen["id"] == "other-model" and list(chosen)[:len(MODEL_KEYS)] == MODEL_KEYS
    assert rpc.ok("get_state")["model"]["id"] == "other-model"
    missing = rpc.request("set_model", provider="local", modelId="nope")
    assert missing["success"] is False and missing["error"] == "Model not found: local/nope"

    cycled = rpc.ok("cycle_model")
    assert cycled["model"]["id"] == "test-model" and cycled["isScoped"] is False
    assert cycled["thinkingLevel"] == "off"
    assert rpc.ok("cycle_model")["model"]["id"] == "other-model"

    server.push(Reply(text="from the other model"))
    rpc.ok("prompt", message="which model?")
    rpc.event("agent_end")
    assert server.requests[-1].body["model"] == "other-model"


def test_cycle_model_with_a_single_model_returns_null(rpc):
    assert rpc.request("cycle_model")["data"] is None


def test_thinking_levels_are_set_cycled_and_clamped_to_the_model(start_rpc, pi):
    write_models(pi, {"id": "test-model", "reasoning": True}, "plain-model")
    rpc = start_rpc()
    rpc.ok("set_thinking_level", level="high")
    assert rpc.ok("get_state")["thinkingLevel"] == "high"
    assert rpc.ok("cycle_thinking_level") == {"level": "off"}
    assert rpc.ok("cycle_thinking_level") == {"level": "minimal"}
    assert rpc.ok("cycle_thinking_level") == {"level": "low"}
    # xhigh needs a model that supports it: the nearest lower level is taken.
    rpc.ok("set_thinking_level", level="xhigh")
    assert rpc.ok("get_state")["thinkingLevel"] == "high"
    bad = rpc.request("set_thinking_level", level="extreme")
    assert bad["success"] is False and "'level' must be one of" in bad["error"]

    rpc.ok("set_model", provider="local", modelId="plain-model")
    assert rpc.ok("get_state")["thinkingLevel"] == "off", "a model without reasoning thinks at off"
    assert rpc.request("cycle_thinking_level")["data"] is None
    rpc.ok("set_thinking_level", level="medium")
    assert rpc.ok("get_state")["thinkingLevel"] == "off"


def test_set_auto_compaction_switches_threshold_compaction(start_rpc, server, pi):
    write_models(pi, {"id": "test-model", "contextWindow": 2000})
    write_settings(pi, compaction={"reserveTokens": 1000, "keepRecentTokens": 10})
    rpc = start_rpc()
    long_prompt = "tell me about this: " + "lorem ipsum " * 500  # about 1,500 tokens
    rpc.ok("set_auto_compaction", enabled=False)
    assert rpc.ok("get_state")["autoCompactionEnabled"] is False
    server.push(Reply(text="no compaction"))
    rpc.ok("prompt", message=long_prompt)
    rpc.event("agent_end")
    assert not rpc.events("compaction_start")

    rpc.ok("set_auto_compaction", enabled=True)
    assert rpc.ok("get_state")["autoCompactionEnabled"] is True
    server.default = Reply(text="## Goal\nA summary.")
    mark = rpc.mark()
    rpc.ok("prompt", message=long_prompt)
    assert rpc.event("compaction_start", after=mark)["reason"] == "threshold"
    rpc.event("agent_end", after=mark)
    assert rpc.request("set_auto_compaction", enabled="yes")["success"] is False


def test_set_auto_retry_switches_retries_of_transient_failures(start_rpc, server, pi):
    # the provider's own retries off, so the harness's retry is what is seen
    write_settings(pi, retry={"baseDelayMs": 10, "provider": {"maxRetries": 0}})
    rpc = start_rpc()
    server.push(Reply(status=503, error="overloaded"), Reply(text="second time lucky"))
    rpc.ok("prompt", message="try")
    start = rpc.event("auto_retry_start")
    assert start["attempt"] == 1 and start["maxAttempts"] == 3 and start["delayMs"] == 10
    assert rpc.event("auto_retry_end") == {"type": "auto_retry_end", "success": True, "attempt": 1}
    rpc.event("agent_end", after=rpc.position(start))

    rpc.ok("set_auto_retry", enabled=False)
    mark = rpc.mark()
    server.push(Reply(status=503, error="overloaded"))
    rpc.ok("prompt", message="try again")
    rpc.wait_for(lambda l: l.get("type") == "agent_end" and l["messages"][-1].get("stopReason") == "error",
                 after=mark)
    assert not rpc.events("auto_retry_start", after=mark)
    assert len(server.requests) == 3


def test_abort_retry_cancels_the_wait_and_stops_retrying(start_rpc, server, pi):
    write_settings(pi, retry={"baseDelayMs": 30000, "provider": {"maxRetries": 0}})
    rpc = start_rpc()
    server.push(Reply(status=503, error="overloaded"))
    rpc.ok("prompt", message="try")
    rpc.event("auto_retry_start")
    rpc.ok("abort_retry")
    end = rpc.event("auto_retry_end", timeout=5)
    assert end["success"] is False and end["attempt"] == 1
    assert rpc.ok("get_state")["isStreaming"] is False
    assert len(server.requests) == 1
