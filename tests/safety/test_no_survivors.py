"""No process outlives its run: the escape tree (a plain background job, a ``setsid``
one that leaves the session, ``nohup``, and a double fork) leaves nothing behind after a
timeout, an RPC ``abort``, an RPC ``abort_bash`` of a ``!cmd``, SIGINT, SIGTERM or
SIGHUP. Survivors are found by scanning ``/proc`` for the command's own marker."""

import json
import os
import signal
import socket
import sys
import textwrap
import time
import uuid

import pytest

from support.llm_server import Reply
from support.survivors import escape_tree, marked, marked_pids, survivors, wait_for, wait_for_tree

pytestmark = [pytest.mark.process,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="scans /proc")]

@pytest.fixture
def mark():
    """A marker for one test's processes; whatever still carries it afterwards (the
    test failed) is killed, by pid."""
    value = uuid.uuid4().hex
    yield value
    for pid in marked_pids(value):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def test_a_tool_timeout_leaves_no_survivor(rpc, server, mark):
    server.push(Reply(tool_calls=[("bash", {"command": escape_tree(mark), "timeout": 1})]),
                Reply(text="It timed out."))
    rpc.ok("prompt", message="run it")
    end = rpc.event("tool_execution_end", timeout=20)
    assert end["isError"] and "timed out" in json.dumps(end["result"])
    assert marked(mark) == []
    rpc.event("agent_end")


def test_an_rpc_abort_leaves_no_survivor(rpc, server, mark):
    server.push(Reply(tool_calls=[("bash", {"command": escape_tree(mark)})]), Reply(text="unused"))
    rpc.ok("prompt", message="run it")
    wait_for_tree(mark)
    rpc.ok("abort")
    rpc.event("agent_end")
    assert survivors(mark, grace=5) == []  # (killed ones may take a moment to die on a loaded machine)


def test_an_rpc_abort_bash_of_a_user_command_leaves_no_survivor(rpc, mark):
    started = time.monotonic()
    command = rpc.send("bash", command=escape_tree(mark))
    wait_for_tree(mark)
    rpc.ok("abort_bash")
    result = rpc.response_to(command)["data"]
    assert result["cancelled"] is True and result["output"] == "started\n"
    assert marked(mark) == []
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)],
                         ids=["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_to_print_mode_runs_shutdown_and_leaves_no_survivor(pi, server, mark, signum, code):
    (pi.cwd / "farewell.py").write_text(textwrap.dedent('''
        from pathlib import Path
        from pi_core import hookimpl

        @hookimpl
        def session_shutdown(event, ctx):
            Path(ctx.cwd, "shutdown.txt").write_text("session_shutdown ran")
    '''))
    server.push(Reply(tool_calls=[("bash", {"command": escape_tree(mark)})]), Reply(text="unused"))
    process = pi.popen("-e", "farewell.py", "-p", "run it")
    process.stdin.close()
    try:
        wait_for_tree(mark)
        process.send_signal(signum)
        assert process.wait(20) == code, process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert survivors(mark) == []
    assert (pi.cwd / "shutdown.txt").read_text() == "session_shutdown ran"
    [session] = pi.sessions()  # what was written before the signal is there, whole
    assert all(json.loads(line) for line in session.read_text().splitlines())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def test_a_background_server_does_not_hang_the_tool_and_is_stopped_when_pi_exits(rpc, server, mark):
    port = free_port()
    # The server keeps the tool's stdout open (it logs there), as `npm run dev &` does.
    command = (f"export ESCAPE_MARK={mark}; {sys.executable} -u -m http.server {port} "
               f"--bind 127.0.0.1 & echo started")
    server.push(Reply(tool_calls=[("bash", {"command": command})]), Reply(text="Server is up."))
    started = time.monotonic()
    rpc.ok("prompt", message="start the dev server")
    end = rpc.event("tool_execution_end", timeout=20)
    assert time.monotonic() - started < 5 and not end["isError"]
    assert "started" in json.dumps(end["result"])
    rpc.event("agent_end")
    wait_for(lambda: answers(port), what="the server to listen")  # it lives on with the session
    assert rpc.close() == 0
    assert marked(mark) == [] and not answers(port)


def test_rpc_bash_answers_when_its_command_returns_not_when_its_background_job_does(rpc, mark):
    started = time.monotonic()
    result = rpc.ok("bash", command=f"export ESCAPE_MARK={mark}; sleep 20 & echo started")
    assert result["output"] == "started\n" and result["exitCode"] == 0
    assert time.monotonic() - started < 3
    assert marked(mark) == ["sleep 20"]  # the job goes on until the session ends
    assert rpc.close() == 0
    assert marked(mark) == []
