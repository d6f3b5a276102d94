"""Retries inside a provider, side by side with pi 1.6 on the scripted server: unset,
``retry.provider.maxRetries`` is 0, so a 503 then an answer is the session's retry (two
requests, ``auto_retry_start`` then ``auto_retry_end``); set, the provider sends the
request again itself and ``--mode json`` shows no retry at all. ``auto_retry_end`` comes
where pi 1.6 puts it: after the answer, before its ``turn_end``; after the last run when
the retries run out. Same for each API whose
provider pi 1.6 wraps in its provider retry (OpenAI's and Anthropic's)."""

import json
import subprocess

import pytest

from support.llm_server import ANTHROPIC, COMPLETIONS, RESPONSES, Reply

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]


def _run(who: str, runner, *args: str) -> subprocess.CompletedProcess:
    from support.programs import node_for, require_real

    command = ([node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js")] if who == "pi16"
               else runner.command()[:3])
    return subprocess.run([*command, *runner.flags(*args)], cwd=runner.cwd, env={**runner.env, "PI_OFFLINE": "1"},
                          capture_output=True, text=True, timeout=120)


def _retries_seen(done: subprocess.CompletedProcess) -> list[tuple]:
    """The retry events, each with the run's events around it (the assistant's
    ``message_end``, ``turn_end``, ``agent_end``), in the order ``--mode json`` printed them."""
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return [(e["type"], e.get("attempt"), e.get("maxAttempts"), e.get("success"))
            if e["type"].startswith("auto_retry_") else (e["type"], e["message"]["stopReason"])
            if e["type"] == "message_end" else (e["type"],)
            for e in events if e["type"].startswith("auto_retry_") or e["type"] in ("turn_end", "agent_end")
            or (e["type"] == "message_end" and e["message"]["role"] == "assistant")]


def _side_by_side(pi, server, api: str, retry: dict) -> dict:
    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", api, apiKey="test-key")))
    (pi.agent_dir / "settings.json").write_text(json.dumps({"retry": retry}))
    seen = {}
    for who in ("pi16", "ours"):
        before = len(server.requests)
        server.push(Reply(status=503, error="busy"), Reply(text="answered"))
        done = _run(who, pi, "--no-session", "--mode", "json", "hi")
        assert done.returncode == 0, f"{who}: {done.stderr}"
        assert '"answered"' in done.stdout or "answered" in done.stdout, who
        seen[who] = len(server.requests) - before, _retries_seen(done)
        server.replies.clear()
    return seen


@pytest.mark.parametrize("api", [COMPLETIONS, ANTHROPIC, RESPONSES])
def test_unset_a_503_is_the_sessions_retry_with_its_events_as_pi16(pi, server, api):
    seen = _side_by_side(pi, server, api, {"baseDelayMs": 20})
    assert seen["ours"] == seen["pi16"]
    assert seen["ours"] == (2, [("message_end", "error"), ("turn_end",), ("agent_end",),
                                ("auto_retry_start", 1, 3, None),
                                ("message_end", "stop"), ("auto_retry_end", 1, None, True), ("turn_end",),
                                ("agent_end",)])


def test_set_the_provider_sends_it_again_itself_and_no_retry_event_is_shown_as_pi16(pi, server):
    seen = _side_by_side(pi, server, COMPLETIONS, {"baseDelayMs": 20, "provider": {"maxRetries": 2}})
    assert seen["ours"] == seen["pi16"] == (2, [("message_end", "stop"), ("turn_end",), ("agent_end",)])


def test_retries_that_run_out_end_after_the_last_run_as_pi16(pi, server):
    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", COMPLETIONS, apiKey="test-key")))
    (pi.agent_dir / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 20, "maxRetries": 1}}))
    seen = {}
    for who in ("pi16", "ours"):
        before = len(server.requests)
        server.push(Reply(status=503, error="busy"), Reply(status=503, error="busy"))
        done = _run(who, pi, "--no-session", "--mode", "json", "hi")
        seen[who] = len(server.requests) - before, _retries_seen(done)
    assert seen["ours"] == seen["pi16"]
    assert seen["ours"][1][-2:] == [("agent_end",), ("auto_retry_end", 1, None, False)]
