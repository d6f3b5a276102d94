"""The default theme is pi 1.6's ``system``, light or dark as the terminal is: its answer
to a colour query (OSC 10/11) first, then ``COLORFGBG`` by colour index, then dark."""

import pytest

from pi_core.app.settings import Settings
from pi_plugins.interactive.terminal_colors import parse_replies, terminal_appearance
from pi_plugins.interactive.themes import choose, load_themes
from support.llm_server import Reply


def test_a_terminals_colour_replies_are_read_in_either_ending_and_any_channel_width():
    replies = b"\x1b]10;rgb:1010/1010/1010\x07\x1b]11;rgb:f/e/d\x1b\\\x1b[?1;2c"
    assert parse_replies(replies) == {"foreground": (16.0, 16.0, 16.0), "background": (255.0, 238.0, 221.0)}
    assert parse_replies(b"\x1b[?1;2c") == {}  # a terminal that keeps its colours to itself


@pytest.mark.parametrize("colors, env, expected", [
    ({"background": (240, 240, 240)}, {"COLORFGBG": "15;0"}, "light"),  # the reply beats COLORFGBG
    ({"background": (30, 30, 46), "foreground": (205, 214, 244)}, {}, "dark"),
    ({"background": (128, 128, 128), "foreground": (0, 0, 0)}, {}, "light"),  # text leans dark on grey
    ({}, {"COLORFGBG": "0;8"}, "dark"),  # bright black (Solarized Dark's background)
    ({}, {"COLORFGBG": "0;7"}, "light"),
    ({}, {"COLORFGBG": "0;default;12"}, "light"),  # rxvt's fg;xpm;bg
    ({}, {"COLORFGBG": "15;default"}, "dark"),  # no index: pi's last fallback
    ({}, {}, "dark"),
])
def test_the_terminal_is_light_or_dark_as_pi_16_decides(colors, env, expected):
    assert terminal_appearance(env, colors) == expected


def test_without_a_theme_setting_the_system_theme_is_used(tmp_path):
    themes, _ = load_themes(cwd=tmp_path, agent_dir=None, env={"COLORFGBG": "0;15"})
    chosen, problems = choose(themes, Settings({}))
    assert chosen.name == "system" and problems == []
    assert chosen.styles["user.box"] == themes["light"].styles["user.box"]


@pytest.mark.process
@pytest.mark.parametrize("background, box", [("#f0f0f0", "48;2;236;239;244"), ("#101018", "48;2;52;53;65")])
def test_the_default_theme_follows_the_background_tmux_reports(pi_tui, server, background, box):
    """tmux answers a colour query with its window style's colours: a light style gives
    the light palette (the user's message on #eceff4), a dark one the dark (#343541)."""
    server.push(Reply(text="Answered."))
    term = pi_tui(env={"COLORTERM": "truecolor"},
                  tmux_options={"window-style": f"bg={background}", "default-terminal": "tmux-256color",
                                "terminal-overrides": ",*:Tc"})
    term.submit("hello")
    term.wait_for("Answered.")
    assert box in term.screen(ansi=True)
