"""/copy: the last answer reaches the clipboard tool and the terminal (OSC 52)."""

import stat

import pytest
from support.llm_server import Reply

pytestmark = pytest.mark.process  # starts real processes (see tests/conftest.py)


def _fake_tool(folder, name: str, script: str):
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_copy_sends_the_last_answer_as_osc52_and_to_xclip(pi_tui, server, tmp_path):
    bin_dir = tmp_path / "bin"
    copied = tmp_path / "copied.txt"
    _fake_tool(bin_dir, "xclip", f'echo "$@" > {copied}.args\ncat > {copied}\n')
    server.push(Reply(text="The answer is **42**, said the machine."))
    term = pi_tui(env={"PATH": f"{bin_dir}:/usr/bin:/bin", "DISPLAY": ":99"})
    term._tmux("set-option", "-s", "set-clipboard", "on")  # tmux keeps what OSC 52 sends as a buffer
    term.submit("/copy")
    term.wait_drawn("No agent messages to copy yet.")
    term.submit("question")
    term.wait_for("said the machine.")
    term.wait_idle()
    term.submit("/copy")
    term.wait_drawn("Copied last agent message to clipboard")
    assert term._tmux("show-buffer") == "The answer is **42**, said the machine."
    assert copied.read_text() == "The answer is **42**, said the machine."
    assert (tmp_path / "copied.txt.args").read_text().split() == ["-selection", "clipboard"]
