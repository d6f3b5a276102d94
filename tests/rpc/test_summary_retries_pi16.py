"""Side by side with pi 1.6 through ``--mode rpc``: a ``compact`` whose summary request
first fails with a transient 503 is retried, and both announce it with the same
``summarization_retry_*`` events (fields and order; the error's wording is each
provider's own)."""

import json
import subprocess
import sys

import pytest

from support.llm_server import Reply
from support.rpc import RpcClient

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]

SETTINGS = {"compaction": {"keepRecentTokens": 200},
            "retry": {"maxRetries": 2, "baseDelayMs": 5, "provider": {"maxRetries": 0}}}


def _compact_with_one_failure(pi, server, command: list[str]) -> list[dict]:
    """Two prompts, then ``compact`` with the first summary request failing: the events."""
    process = subprocess.Popen([*command, *pi.flags("--mode", "rpc")], cwd=pi.cwd,
                               env={**pi.env, "PI_OFFLINE": "1"}, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    client = RpcClient(process, timeout=60)
    try:
        server.push(Reply(text="First answer. " * 40), Reply(text="Second answer. " * 40))
        client.ok("prompt", message="one")
        first = client.event("agent_end")
        client.ok("prompt", message="two")
        client.event("agent_end", after=client.position(first) + 1)
        mark = client.mark()
        server.push(Reply(status=503, error="overloaded"))
        server.default = lambda request: Reply(text="## Goal\nsummary")
        assert client.ok("compact")["summary"]
        return [e for e in client.events(after=mark) if e["type"] != "response"]
    finally:
        server.default = None
        client.close(timeout=20)
        client.kill()


def test_a_retried_compaction_summary_is_announced_as_pi16_announces_it(pi, server):
    from support.programs import node_for, require_real

    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    (pi.agent_dir / "settings.json").write_text(json.dumps(SETTINGS))
    theirs = _compact_with_one_failure(pi, server, [node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js")])
    ours = _compact_with_one_failure(pi, server, [sys.executable, "-m", "pi_plugins.cli"])

    def retries(events):
        kept = [e for e in events if e["type"].startswith(("summarization_retry", "compaction_"))]
        for event in kept:
            if event["type"] == "summarization_retry_scheduled":
                assert "overloaded" in event.pop("errorMessage")
            event.pop("result", None)
        return kept

    assert retries(ours) == retries(theirs) == [
        {"type": "compaction_start", "reason": "manual"},
        {"type": "summarization_retry_scheduled", "attempt": 1, "maxAttempts": 2, "delayMs": 5},
        {"type": "summarization_retry_attempt_start", "source": "compaction", "reason": "manual"},
        {"type": "summarization_retry_finished"},
        {"type": "compaction_end", "reason": "manual", "aborted": False, "willRetry": False},
    ]
