"""pi 1.6's terminal capabilities: which image protocol the chat draws with and whether it
paints in 24-bit colour, from the terminal (Rex among those it knows), ``PI_IMAGE_PROTOCOL``
/ ``PI_TRUE_COLOR``, and over both the settings ``terminal.images`` / ``terminal.trueColor``."""

from __future__ import annotations

import base64
import re

import pytest
from support.llm_server import Reply

from pi_plugins.interactive.terminal_capabilities import color_system, detected, image_protocol, true_color

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082")
PLAIN = {"TERM": "xterm-256color"}
REX = {"TERM": "xterm-256color", "TERM_PROGRAM": "Rex"}
KITTY = {"TERM": "xterm-kitty", "KITTY_WINDOW_ID": "1"}


@pytest.mark.parametrize("env,expected", [
    (REX, ("kitty", True)),
    (KITTY, ("kitty", True)),
    ({"TERM_PROGRAM": "WezTerm"}, ("kitty", True)),
    ({"TERM_PROGRAM": "iTerm.app"}, ("iterm2", True)),
    ({"TERM_PROGRAM": "vscode"}, (None, True)),
    (PLAIN, (None, False)),
    ({**PLAIN, "COLORTERM": "truecolor"}, (None, True)),
    ({"TERM": "screen-256color", "TERM_PROGRAM": "Rex"}, (None, False)),
])
def test_the_terminal_is_known_from_its_environment_as_pi16_knows_it(env, expected):
    assert detected(env) == expected


def test_settings_win_over_the_variables_which_win_over_detection():
    assert image_protocol({**KITTY, "PI_IMAGE_PROTOCOL": "iterm2"}) == "iterm2"
    assert image_protocol({**KITTY, "PI_IMAGE_PROTOCOL": "none"}) is None
    assert image_protocol({**KITTY, "PI_IMAGE_PROTOCOL": "none"}, chosen="kitty") == "kitty"
    assert image_protocol(KITTY, chosen=False) is None
    assert image_protocol(PLAIN, chosen="auto") is None and image_protocol(KITTY, chosen="auto") == "kitty"
    assert true_color({**PLAIN, "PI_TRUE_COLOR": "1"}) and not true_color({**REX, "PI_TRUE_COLOR": "0"})
    assert true_color({**REX, "PI_TRUE_COLOR": "0"}, chosen=True) and not true_color(REX, chosen=False)
    assert true_color(REX, chosen="auto")
    settings = {"terminal.trueColor": False}
    assert color_system(settings, REX) == "256" and color_system(None, REX) == "truecolor"
    assert color_system(None, {**REX, "NO_COLOR": "1"}) is None


def _chat_writes(pi_tui, server, tmp_path, env, settings=None) -> str:
    """Everything the chat writes to its terminal while a read shows a picture."""
    (tmp_path / "project" / "pic.png").write_bytes(PNG)
    server.push(Reply(tool_calls=[("read", {"path": "pic.png"})]), Reply(text="A picture."))
    # the dark theme's colours are 24-bit (without a theme, a terminal that reports no
    # background gets pi 1.6's system theme of ANSI colours)
    term = pi_tui("--tui-mode", "regular", env=env, settings={"theme": "dark", **(settings or {})})
    log = tmp_path / "written.log"
    term._tmux("pipe-pane", "-t", "t", "-o", f"cat >> {log}")
    term.submit("look at pic.png")
    term.wait_for("A picture.")
    term.wait_idle()
    return log.read_bytes().decode("utf-8", "replace")


TRUECOLOR = re.compile(r"\x1b\[(?:[0-9;]*;)?38;2;")


@pytest.mark.process
def test_rex_gets_kitty_images_truecolor_and_file_links(pi_tui, server, tmp_path):
    written = _chat_writes(pi_tui, server, tmp_path, {"TERM_PROGRAM": "Rex"})
    assert "\x1b_Ga=T,f=100," in written and base64.b64encode(PNG).decode() in written
    assert TRUECOLOR.search(written)
    assert re.search(r"\x1b\]8;[^;]*;file://[^\x1b]*pic\.png", written)


@pytest.mark.process
def test_terminal_images_and_true_color_settings_override_what_is_detected(pi_tui, server, tmp_path):
    written = _chat_writes(pi_tui, server, tmp_path, {"TERM_PROGRAM": "Rex"},
                           settings={"terminal": {"images": "iterm2", "trueColor": False}})
    assert "\x1b]1337;File=inline=1;" in written and "\x1b_G" not in written
    assert not TRUECOLOR.search(written) and "\x1b[38;5;" in written


@pytest.mark.process
def test_terminal_images_false_draws_none_and_true_color_true_paints_24_bit(pi_tui, server, tmp_path):
    written = _chat_writes(pi_tui, server, tmp_path, {"KITTY_WINDOW_ID": "1"},
                           settings={"terminal": {"images": False, "trueColor": True}})
    assert "\x1b_G" not in written and "\x1b]1337;" not in written
    assert TRUECOLOR.search(written)
