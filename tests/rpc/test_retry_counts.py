"""How many requests a persistent server error costs, as a user sees it through
``pi --mode rpc``: a configured provider gets ``1 + retry.maxRetries`` attempts, as pi
gives it; a model found on a local server stops once it answers the same error twice
and gets no retries inside the provider on top."""

import json

from support.cli import use_environment
from support.llm_server import Reply
from support.local_servers import LocalServer
from support.rpc import InProcessPi, rpc_starter, write_settings

BOOM = "the chat template failed"


def test_a_configured_providers_persistent_500_is_sent_one_plus_max_retries_times(start_rpc, server, pi):
    write_settings(pi, retry={"maxRetries": 2, "baseDelayMs": 5, "provider": {"maxRetries": 0}})
    server.push(*[Reply(status=500, error=BOOM) for _ in range(5)])
    rpc = start_rpc()
    rpc.ok("prompt", message="hi")
    final = rpc.event("auto_retry_end")  # each attempt is a run of its own (agent_end)
    assert final["success"] is False and BOOM in final["finalError"]
    assert len(server.requests) == 3
    assert [e["attempt"] for e in rpc.events("auto_retry_start")] == [1, 2]
    assert rpc.events("agent_end")[-1]["messages"][-1]["stopReason"] == "error"


def test_a_discovered_servers_persistent_500_costs_two_requests(tmp_path, monkeypatch):
    with LocalServer("llama.cpp") as stub:
        agent_dir, cwd = tmp_path / "agent", tmp_path / "project"
        agent_dir.mkdir()
        cwd.mkdir()
        (agent_dir / "settings.json").write_text(json.dumps(
            {"localModels": {"endpoints": [stub.url]}, "retry": {"maxRetries": 2, "baseDelayMs": 5}}))
        use_environment(monkeypatch, {"HOME": str(tmp_path / "home"), "PI_CODING_AGENT_DIR": str(agent_dir)}, cwd)
        stub.push(*[Reply(status=500, error=BOOM) for _ in range(6)])
        with rpc_starter(InProcessPi) as start:
            rpc = start()
            rpc.ok("prompt", message="hi")
            final = rpc.event("auto_retry_end")
            assert final["success"] is False and "the same answer twice" in final["finalError"]
            assert len(stub.requests) == 2  # no provider retries, and the same answer twice ends it
            assert [e["attempt"] for e in rpc.events("auto_retry_start")] == [1]
