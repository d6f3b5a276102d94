"""A partial answer survives ``kill -9``: the real ``pi`` streaming an answer is killed,
and the next ``pi -c`` finds in the session what the client had seen, as the aborted
answer pi writes; the next request is the one pi sends after an aborted answer."""

from __future__ import annotations

import json
import queue
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from support.llm_server import Reply

from pi_core.session import Session

pytestmark = pytest.mark.process

ANSWER = "".join(f"Sentence number {n} of a long answer that streams slowly. " for n in range(40))


@pytest.fixture
def pi(pi, tmp_path, monkeypatch):
    """The real pi, with a cache folder this test also sees (where the journal lives)."""
    cache = str(tmp_path / "cache")
    pi.env["XDG_CACHE_HOME"] = cache
    monkeypatch.setenv("XDG_CACHE_HOME", cache)
    return pi


def journal_of(session_file: Path) -> Path:
    from pi_core.paths import session_side_file

    return Path(session_side_file(session_file, "answer"))


def lines_of(stream) -> queue.Queue:
    found: queue.Queue = queue.Queue()

    def read():
        for line in stream:
            found.put(line)
        found.put(None)

    threading.Thread(target=read, daemon=True).start()
    return found


def kill_mid_answer(pi, server, prompt: str) -> tuple[str, Path]:
    """Run ``pi --mode json -p PROMPT`` until some deltas were printed and the server
    holds the rest, then SIGKILL it: (the text the client saw, the session file)."""
    hold = threading.Event()
    server.push(Reply(text=ANSWER, delta_size=8, delay=0.005, hold=hold, hold_after=60))
    proc = pi.popen("--mode", "json", "-p", prompt)
    proc.stdin.close()
    seen = ""
    try:
        lines = lines_of(proc.stdout)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:  # the server holds the answer: silence means every write was printed
                line = lines.get(timeout=1.0 if seen else 30)
            except queue.Empty:
                break
            assert line is not None, proc.stderr.read()
            event = json.loads(line)
            if event.get("type") == "message_update":
                delta = event["assistantMessageEvent"]
                if delta["type"] == "text_delta":
                    seen += delta["delta"]
        assert len(seen) > 100, seen
        [session_file] = pi.sessions()
        journal = journal_of(session_file)
        deadline = time.monotonic() + 10  # written at most every 100 ms
        while not (journal.exists() and seen in journal.read_text()) and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        hold.set()
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)
        proc.stdout.close()
        proc.stderr.close()
    return seen, session_file


def messages(path: Path) -> list:
    """The conversation's messages on the session's path, pi 1.6's ``system`` declarations
    left out (they are the prompt, not the conversation)."""
    with Session.open(path, read_only=True) as session:
        return [entry.message for entry in session.path()
                if getattr(entry, "type", None) == "message" and entry.message.role != "system"]


def test_the_answer_the_client_saw_is_in_the_session_after_kill_9(pi, server):
    seen, session_file = kill_mid_answer(pi, server, "tell me a long story")
    journal = journal_of(session_file)
    assert [m.role for m in messages(session_file)] == ["user"]  # what pi's file holds too
    assert journal.exists() and str(journal).startswith(str(pi.env["XDG_CACHE_HOME"]))

    server.push(Reply(text="continued"))
    resumed = pi.run("-c", "-p", "go on")
    assert resumed.returncode == 0, resumed.stderr
    assert "journal" not in resumed.stderr  # no warning: the journal was whole
    assert resumed.stdout.strip() == "continued"

    user, recovered, again, answer = messages(session_file)
    assert (user.role, again.role, answer.text) == ("user", "user", "continued")
    assert recovered.role == "assistant" and recovered.stop_reason == "aborted"
    assert recovered.text == seen and recovered.error_message == "Request was aborted"
    assert (recovered.provider, recovered.model) == ("local", "test-model")
    assert not journal.exists()
    # the next request is pi's after an aborted answer: the answer is not sent back
    sent = json.dumps(server.requests[-1].body["messages"])
    assert "tell me a long story" in sent and "go on" in sent and seen[:40] not in sent


def _pi16(runner, *args):
    from support.programs import node_for, require_real

    package = require_real("pi16")
    return subprocess.run([node_for("pi16"), str(package / "dist" / "cli.js"), *runner.flags(*args)],
                          cwd=runner.cwd, env={**runner.env, "PI_OFFLINE": "1"}, capture_output=True,
                          text=True, timeout=120)


def _conversation(request) -> list:
    return [(m["role"], m["content"] if isinstance(m["content"], str) else
             "".join(part.get("text", "") for part in m["content"]))
            for m in request.body["messages"] if m["role"] not in ("system", "developer")]


@pytest.mark.requires("pi16")
def test_pi16_reads_the_recovered_answer_and_sends_what_we_send(pi, server):
    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    seen, session_file = kill_mid_answer(pi, server, "tell me a long story")
    server.push(Reply(text="continued"))
    assert pi.run("-c", "-p", "go on").returncode == 0
    assert any(m.role == "assistant" and m.stop_reason == "aborted" for m in messages(session_file))

    theirs_file = session_file.with_name("pi16-copy.jsonl")
    shutil.copy(session_file, theirs_file)
    server.push(Reply(text="third"), Reply(text="third"))
    ours = pi.run("--session", str(session_file), "-p", "and then")
    theirs = _pi16(pi, "--session", str(theirs_file), "-p", "and then")
    assert (ours.returncode, theirs.returncode) == (0, 0), theirs.stderr
    assert ours.stdout.strip() == theirs.stdout.strip() == "third"
    ours_sent, theirs_sent = _conversation(server.requests[-2]), _conversation(server.requests[-1])
    assert ours_sent == theirs_sent
    assert not any(seen[:40] in text for _, text in theirs_sent)
