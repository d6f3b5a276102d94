"""A stdio server that was spawned but never answers ``initialize`` must not hold up the
end of ``pi -p`` when nothing waits for it (no ``direct`` tools): measured side by side
with pi 1.6, which exits at once."""

import json
import subprocess
import sys
import time

import pytest

from support.cli import PiRunner
from support.llm_server import Reply
from support.programs import node_for, require_real

from .conftest import SERVER, write_servers

pytestmark = [pytest.mark.process]

#: never answers: reads stdin to its end, then lingers (a server slow to start, or stuck)
HANG = "import time\ntime.sleep(60)"


def exit_wait(runner, command) -> tuple[str, float]:
    """Runs ``pi -p``; the answer, and how long the process took to end after printing it."""
    with subprocess.Popen([*command, *runner.flags("--no-session", "-p", "hello")], cwd=runner.cwd,
                          env={**runner.env, "PI_OFFLINE": "1"}, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True) as process:
        assert process.stdout is not None
        answer = process.stdout.readline().strip()
        printed = time.monotonic()
        process.wait(timeout=60)
        return answer, time.monotonic() - printed


def prepared(tmp_path, server, name, config):
    runner = PiRunner(tmp_path / name, server)
    (runner.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    write_servers(runner.agent_dir / "mcp.json", {"srv": config})
    server.push(Reply(text="done", delay=1.0))  # long enough for the server to be spawned
    return runner


def exit_costs(tmp_path, server, command) -> tuple[float, float]:
    """The exit wait with a server that never answers, and with one that does."""
    hung_answer, hung = exit_wait(prepared(tmp_path, server, "hung", {"command": sys.executable, "args": ["-c", HANG]}),
                                  command)
    ok_answer, answering = exit_wait(prepared(tmp_path, server, "ok", {"command": sys.executable, "args": [SERVER]}),
                                     command)
    assert hung_answer == ok_answer == "done"
    return hung, answering


def test_pi_print_exits_promptly_past_a_server_that_never_answers_initialize(tmp_path, server):
    """It used to wait out the SDK's 2 s grace for the server to end on its own."""
    hung, answering = exit_costs(tmp_path, server, [sys.executable, "-m", "pi_plugins.cli"])
    assert hung < answering + 1.0, f"exit: {hung:.2f}s past a hung server, {answering:.2f}s past one that answers"


@pytest.mark.requires("pi16")
def test_pi16_also_exits_promptly_past_a_server_that_never_answers_initialize(tmp_path, server):
    hung, answering = exit_costs(tmp_path, server, [node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js")])
    assert hung < answering + 1.0, f"pi 1.6: {hung:.2f}s past a hung server, {answering:.2f}s past one that answers"
