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
    assert chosen.styles["user.box"] == "none"  # nothing reported: no panel backgrounds (pi 1.6's ANSI tier)


_TMUX_COLOURS = {"default-terminal": "tmux-256color", "terminal-overrides": ",*:Tc"}


def _user_box(screen: str) -> str | None:
    """The background SGR (``48;2;R;G;B``) the user's message "hello" is drawn on (set
    on the box's padding row above it, or on its own line)."""
    import re

    found = re.findall(r"48;2;\d+;\d+;\d+", screen.split("hello")[0])
    return found[-1] if found else None


@pytest.mark.process
@pytest.mark.parametrize("background", ["#f0f0f0", "#101018"])
def test_the_system_theme_builds_its_colours_from_the_background_tmux_reports(pi_tui, server, background):
    """tmux answers a colour query with its window style's background (no palette: tmux
    3.3 leaves the index out of its OSC 4 replies): pi 1.6's colours placed for that
    background, the user's message on the box colour 1.6 computes for it."""
    from pi_plugins.interactive.system_theme import generate

    rgb = tuple(int(background[i:i + 2], 16) for i in (1, 3, 5))
    box = generate(rgb)[0]["userMessageBg"]
    server.push(Reply(text="Answered."))
    term = pi_tui(env={"COLORTERM": "truecolor"}, tmux_options={"window-style": f"bg={background}", **_TMUX_COLOURS})
    term.submit("hello")
    term.wait_for("Answered.")
    assert _user_box(term.screen(ansi=True)) == "48;2;" + ";".join(str(int(box[i:i + 2], 16)) for i in (1, 3, 5))


@pytest.mark.process
@pytest.mark.parametrize("background", ["#f0f0f0", "#101018"])
def test_the_system_theme_draws_the_users_message_as_pi_16_does(tmp_path, server, background):
    """Side by side in the same tmux: pi 1.6's box colour and ours, to the channel."""
    import json
    import sys
    import time

    from support.programs import NODE22, require_program, require_real
    from support.terminal import Terminal

    require_program("tmux", ".ci/run installs it")
    package = require_real("pi16")
    home = tmp_path / "home"
    (home / "project").mkdir(parents=True)
    (home / "agent").mkdir()
    (home / "agent" / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PI_CODING_AGENT_DIR": str(home / "agent"),
           "TERM": "xterm-256color", "COLORTERM": "truecolor", "LANG": "C.UTF-8", "SHELL": "/bin/sh"}
    boxes = {}
    for name, argv in {"pi16": [str(NODE22), str(package / "dist" / "cli.js")],
                       "ours": [sys.executable, "-m", "pi_plugins.cli"]}.items():
        (tmp_path / name).mkdir()
        server.push(Reply(text="Answered."))
        with Terminal(tmp_path / name, [*argv, "--model", "local/test-model"], env=env, cwd=home / "project",
                      options={"window-style": f"bg={background}", **_TMUX_COLOURS}) as term:
            term.wait_for("(auto)", timeout=30)
            term.type("hello")
            for _ in range(30):  # pi 1.6 refuses a prompt while its start-up is in progress
                term.press("Enter")
                if "Answered." in term.wait_for(lambda s: "Answered." in s or "still in progress" in s, timeout=30):
                    break
                term.wait_for(lambda s: "still in progress" not in s, timeout=30)
                time.sleep(0.5)
            boxes[name] = _user_box(term.screen(ansi=True))
    assert boxes["pi16"] is not None
    channels = {name: [int(c) for c in box.split(";")[2:]] for name, box in boxes.items() if box}
    assert max(abs(a - b) for a, b in zip(channels["ours"], channels["pi16"], strict=True)) <= 1, boxes
