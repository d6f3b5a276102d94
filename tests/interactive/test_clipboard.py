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


PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082")


def test_ctrl_v_attaches_the_clipboards_image(pi_tui, server, tmp_path):
    bin_dir = tmp_path / "bin"
    image = tmp_path / "clip.png"
    image.write_bytes(PNG)
    _fake_tool(bin_dir, "xclip", f'case "$*" in\n'
                                 f'  *TARGETS*) printf "TARGETS\\nimage/png\\ntext/plain\\n" ;;\n'
                                 f'  *image/png*) cat {image} ;;\n'
                                 f'  *) exit 1 ;;\nesac\n')
    server.push(Reply(text="A tiny picture."))
    term = pi_tui(env={"PATH": f"{bin_dir}:/usr/bin:/bin", "DISPLAY": ":99"})
    term.press("C-v")
    term.wait_drawn(lambda s: term.editor(s) == "[image #1]")
    term.type(" what is this?")
    term.press("Enter")
    term.wait_for("A tiny picture.")
    sent = server.requests[0].body["messages"][-1]["content"]
    import base64
    assert {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG).decode()}} in sent
    assert any(part.get("text") == "[image #1] what is this?" for part in sent if part["type"] == "text")


def test_ctrl_v_without_an_image_says_so(pi_tui, tmp_path):
    term = pi_tui(env={"PATH": "/usr/bin:/bin"})
    term.press("C-v")
    term.wait_drawn("No image in the clipboard")
