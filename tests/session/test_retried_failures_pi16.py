"""A failed answer that is retried, side by side with pi 1.6 on the scripted server: the
failure stays in the session file and a ``context_edit`` (``replacement: null``) leaves
it out of the context, written after ``auto_retry_start`` and shown as ``entry_appended``;
pi 1.6 resumes the session we wrote as its own. When the retried answer calls tools,
``auto_retry_end`` comes right after that answer, before its tools run, as in pi 1.6."""

import json
import subprocess

import pytest

from support.llm_server import Reply

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]


def _run(who: str, runner, *args: str) -> subprocess.CompletedProcess:
    from support.programs import node_for, require_real

    command = ([node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js")] if who == "pi16"
               else runner.command()[:3])
    done = subprocess.run([*command, *runner.flags(*args)], cwd=runner.cwd, env={**runner.env, "PI_OFFLINE": "1"},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{who}: {done.stderr}"
    return done


def _events(done: subprocess.CompletedProcess) -> list[dict]:
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def _entries(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _shape(entries: list[dict]) -> list[tuple]:
    """The conversation's entries (the opening and the system prompt aside): each
    message's role and stop reason, each context edit with the position of its target."""
    kept = [e for e in entries if e["type"] in ("message", "context_edit")
            and e.get("message", {}).get("role") != "system"]
    where = {e["id"]: n for n, e in enumerate(kept)}
    return [("context_edit", where.get(e["targetId"]), e["replacement"]) if e["type"] == "context_edit"
            else (e["message"]["role"], e["message"].get("stopReason")) for e in kept]


def _setup(pi, server):
    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    (pi.agent_dir / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 20}}))


def test_a_retried_failure_leaves_the_context_by_a_context_edit_as_pi16(pi, server):
    _setup(pi, server)
    seen = {}
    for who in ("pi16", "ours"):
        server.push(Reply(text="half an answer", error="overloaded mid-answer", error_type="overloaded_error"),
                    Reply(text="answered"))
        events = _events(_run(who, pi, "--mode", "json", "hi"))
        [path] = pi.sessions()
        entries = _entries(path)
        appended = [e["entry"] for e in events if e["type"] == "entry_appended"]
        order = [e["type"] for e in events if e["type"] in ("auto_retry_start", "entry_appended", "agent_start")]
        seen[who] = _shape(entries), [a["type"] for a in appended], order, path
        assert appended[0] in entries, who  # the event carries the entry as written
        if who == "pi16":
            path.unlink()  # ours starts a session of its own
    assert seen["ours"][:3] == seen["pi16"][:3]
    assert seen["ours"][0] == [("user", None), ("assistant", "error"), ("context_edit", 1, None),
                               ("assistant", "stop")]
    assert seen["ours"][2] == ["agent_start", "auto_retry_start", "entry_appended", "agent_start"]

    # pi 1.6 resumes the session we wrote: the failure stays out of what it sends
    before = len(server.requests)
    server.push(Reply(text="second answer"))
    _run("pi16", pi, "--session", str(seen["ours"][3]), "-p", "and now?")
    [sent] = server.requests[before:]
    assert [(m["role"], m["content"] if isinstance(m["content"], str) else m["content"][0].get("text"))
            for m in sent.body["messages"][1:]] == [("user", "hi"), ("assistant", "answered"), ("user", "and now?")]


def test_auto_retry_end_comes_before_the_tools_of_a_retried_answer_as_pi16(pi, server):
    _setup(pi, server)
    seen = {}
    for who in ("pi16", "ours"):
        server.push(Reply(status=503, error="busy"), Reply(tool_calls=[("bash", {"command": "echo hi"})]),
                    Reply(text="done"))
        events = _events(_run(who, pi, "--no-session", "--mode", "json", "hi"))
        seen[who] = [e["type"] for e in events if e["type"] in (
            "auto_retry_start", "auto_retry_end", "tool_execution_start", "tool_execution_end", "turn_end")
            or (e["type"] == "message_end" and e["message"]["role"] != "system")]
    assert seen["ours"] == seen["pi16"]
    retried = seen["ours"].index("auto_retry_start")
    assert seen["ours"][retried + 1:retried + 4] == ["message_end", "auto_retry_end", "tool_execution_start"]
