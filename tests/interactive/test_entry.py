"""How ``pi`` picks the interactive mode."""

import pytest

from support.cli import PiRunner
from support.llm_server import Reply

pytestmark = pytest.mark.process  # starts real processes (see tests/conftest.py)


def test_without_a_terminal_on_stdin_pi_answers_once_as_print_mode_does(tmp_path, server):
    pi = PiRunner(tmp_path, server)
    server.push(Reply(text="Printed, not chatted."))
    out = pi.run("Summarise this", input="some piped text\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "Printed, not chatted.\n"
    sent = str(server.requests[0].body["messages"][-1])
    assert "some piped text" in sent and "Summarise this" in sent


def test_the_interactive_mode_is_a_plugin_imported_only_when_it_runs(tmp_path):
    import subprocess
    import sys

    code = ("import sys, pi_plugins.interactive as m; assert m.register_modes()[0].name == 'interactive'; "
            "assert 'prompt_toolkit' not in sys.modules and 'rich' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
