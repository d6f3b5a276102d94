"""What the command line does with sessions it must not damage or lose."""

from __future__ import annotations

import json
import signal
import threading

import pytest
from support.llm_server import Reply

from pi_core.session import Session


@pytest.mark.process
def test_a_prompt_killed_before_the_first_answer_is_in_the_session(pi, server):
    arrived, release = threading.Event(), threading.Event()

    def hold(request):
        arrived.set()
        release.wait(30)
        return Reply(text="too late")

    server.push(hold)
    proc = pi.popen("-p", "remember the milk")
    proc.stdin.close()  # piped stdin would be read as part of the prompt
    try:
        assert arrived.wait(60), proc.stderr.read() if proc.poll() is not None else "no request"
        proc.send_signal(signal.SIGKILL)  # a crash, or a Ctrl+C pi never got to handle
        proc.wait(10)
    finally:
        release.set()
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)
        proc.stdout.close()
        proc.stderr.close()
    [path] = pi.sessions()
    with Session.open(path, read_only=True) as session:
        messages = session.build_context().messages
    assert [m.role for m in messages] == ["system", "user"]  # the prompt's declaration, then the prompt
    message = messages[-1]
    content = message.content
    assert (content if isinstance(content, str) else content[0].text) == "remember the milk"


@pytest.mark.process
def test_a_newer_version_is_refused_by_name_and_can_still_be_forked_and_exported(pi, server):
    path = pi.cwd / "future.jsonl"
    lines = [
        {"type": "session", "version": 99, "id": "01a22aa0-0000-7000-8000-000000000099",
         "timestamp": "2026-11-30T04:04:46.971Z", "cwd": str(pi.cwd)},
        {"type": "message", "id": "aaaaaaaa", "parentId": None,
         "timestamp": "2026-11-30T04:04:47.013Z",
         "message": {"role": "user", "content": "from a newer pi", "timestamp": 1}},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    original = path.read_bytes()

    refused = pi.run("--session", str(path), "-p", "go on")
    assert refused.returncode != 0 and "version 99" in refused.stderr
    assert server.requests == [] and path.read_bytes() == original

    server.push(Reply(text="forked fine"))
    forked = pi.run("--fork", str(path), "-p", "go on in a copy")
    assert forked.returncode == 0, forked.stderr
    assert "from a newer pi" in json.dumps(server.requests[0].body["messages"])
    [copy] = pi.sessions()
    assert json.loads(copy.read_text().splitlines()[0])["version"] == 3

    exported = pi.run("--export", str(path), str(pi.cwd / "out.html"))
    assert exported.returncode == 0, exported.stderr
    assert "from a newer pi" in (pi.cwd / "out.html").read_text()
    assert path.read_bytes() == original
