"""Images in the terminal: a read image's result drawn with iTerm2's or kitty's protocol
(what the chat writes to the terminal is logged by tmux's pipe-pane)."""

import base64

import pytest
from support.llm_server import Reply

pytestmark = pytest.mark.process  # starts real processes (see tests/conftest.py)

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082")


def _read_a_picture(pi_tui, server, tmp_path, env, settings=None):
    (tmp_path / "project" / "pic.png").write_bytes(PNG)
    server.push(Reply(tool_calls=[("read", {"path": "pic.png"})]), Reply(text="A picture."))
    term = pi_tui("--tui-mode", "regular", env=env, settings=settings)  # images go to the regular screen's scrollback
    log = tmp_path / "written.log"
    term._tmux("pipe-pane", "-t", "t", "-o", f"cat >> {log}")
    term.submit("look at pic.png")
    term.wait_for("A picture.")
    term.wait_idle()
    return log.read_bytes().decode("utf-8", "replace")


def test_iterm2_gets_an_inline_image(pi_tui, server, tmp_path):
    written = _read_a_picture(pi_tui, server, tmp_path, {"TERM_PROGRAM": "iTerm.app"})
    assert "\x1b]1337;File=inline=1;" in written and base64.b64encode(PNG).decode() in written


def test_kitty_gets_the_graphics_protocol(pi_tui, server, tmp_path):
    written = _read_a_picture(pi_tui, server, tmp_path, {"KITTY_WINDOW_ID": "1"})
    assert "\x1b_Ga=T,f=100," in written and base64.b64encode(PNG).decode() in written


def test_show_images_off_draws_none(pi_tui, server, tmp_path):
    written = _read_a_picture(pi_tui, server, tmp_path, {"KITTY_WINDOW_ID": "1"},
                              settings={"terminal": {"showImages": False}})
    assert "\x1b_G" not in written
