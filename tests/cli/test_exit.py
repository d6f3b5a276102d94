"""How a ``pi`` process ends: as any Python program does, after its plugins' atexit hooks,
with every byte of its output written and its threads waited for."""

from __future__ import annotations

import subprocess

import pytest

from support.llm_server import Reply

pytestmark = pytest.mark.process  # starts real processes (see tests/conftest.py)


EXIT_PLUGIN = '''
import atexit, os, sys, threading, time
from pi_core import hookimpl

LOG = os.environ["EXIT_LOG"]

def note(text):
    with open(LOG, "a") as f:
        f.write(text + "\\n")

class TornDown:
    def __del__(self, os=os, log=LOG):  # what it needs, kept for the teardown
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        os.write(fd, b"torn down\\n")
        os.close(fd)

KEPT = TornDown()  # freed only by the interpreter's teardown

@hookimpl
def session_shutdown(event, ctx):
    atexit.register(note, "atexit hook")
    sys.stdout.write("x" * 200_000)  # still in the buffer when the run returns
    if os.environ.get("EXIT_THREAD"):
        def late():
            time.sleep(0.3)
            note("thread done")
        threading.Thread(target=late).start()
'''


def one_shot(pi, tmp_path, *flags: str, **env: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    (tmp_path / "exits.py").write_text(EXIT_PLUGIN)
    log = tmp_path / "exit.log"
    log.unlink(missing_ok=True)
    done = subprocess.run(pi.command("-e", str(tmp_path / "exits.py"), *flags), cwd=pi.cwd,
                          env={**pi.env, "EXIT_LOG": str(log), **env}, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    return done, log.read_text().splitlines() if log.exists() else []


def test_a_one_shot_run_ends_after_its_hooks_its_output_and_the_teardown(pi, server, tmp_path):
    server.push(Reply(text="Hello."))
    done, notes = one_shot(pi, tmp_path, "-p", "hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello.\n" + "x" * 200_000, done.stderr
    assert notes == ["atexit hook", "torn down"]  # the interpreter's own way out
    server.push(Reply(status=401, error="invalid api key"))
    failed, notes = one_shot(pi, tmp_path, "-p", "hi")
    assert failed.returncode == 1 and "invalid api key" in failed.stderr
    assert failed.stdout == "x" * 200_000 and notes == ["atexit hook", "torn down"]
    server.push(Reply(text="Hello."))
    events, notes = one_shot(pi, tmp_path, "--mode", "json", "hi")
    assert events.returncode == 0 and '"agent_end"' in events.stdout
    assert events.stdout.endswith("x" * 200_000) and notes == ["atexit hook", "torn down"]


def test_a_run_with_a_thread_still_going_waits_for_it_and_exits_as_ever(pi, server, tmp_path):
    server.push(Reply(text="Hello."))
    done, notes = one_shot(pi, tmp_path, "-p", "hi", EXIT_THREAD="1")
    assert done.returncode == 0, done.stderr
    assert notes[0] == "thread done" and sorted(notes) == ["atexit hook", "thread done", "torn down"]
