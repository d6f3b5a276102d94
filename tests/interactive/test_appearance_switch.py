"""The ``system`` theme follows the terminal's light/dark switch while the chat runs, as pi
1.6 does: DEC mode 2031 asked for at start, and on the terminal's report (``CSI ? 997 ; 2 n``
light, ``; 1 n`` dark) the colours asked for again and the chat repainted in them. tmux
answers the colour query with its window style, changed between the two; the report is
sent as the terminal would send it."""

import json
import re
import sys

import pytest

from pi_plugins.interactive.system_theme import generate
from support.llm_server import Reply
from support.programs import NODE22, require_program, require_real
from support.terminal import Terminal

pytestmark = pytest.mark.process  # tmux and real programs

DARK, LIGHT = "#101018", "#f0f0f0"
_TMUX_COLOURS = {"default-terminal": "tmux-256color", "terminal-overrides": ",*:Tc"}


def _box(background: str) -> str:
    box = generate(tuple(int(background[i:i + 2], 16) for i in (1, 3, 5)))[0]["userMessageBg"]
    return "48;2;" + ";".join(str(int(box[i:i + 2], 16)) for i in (1, 3, 5))


def _user_box(screen: str) -> str | None:
    found = re.findall(r"48;2;\d+;\d+;\d+", screen.split("hello")[0])
    return found[-1] if found else None


def _switch(term, background: str, report: str) -> None:
    term._tmux("set-option", "-g", "window-style", f"bg={background}")
    term.send_raw(report)


def test_a_light_dark_switch_repaints_the_chat_in_the_new_colours(pi_tui, server):
    server.push(Reply(text="Answered."))
    term = pi_tui(env={"COLORTERM": "truecolor"}, tmux_options={"window-style": f"bg={DARK}", **_TMUX_COLOURS})
    term.submit("hello")
    term.wait_for("Answered.")
    assert _user_box(term.screen(ansi=True)) == _box(DARK)
    _switch(term, LIGHT, "\x1b[?997;2n")
    term.wait_for(lambda s: _user_box(term.screen(ansi=True)) == _box(LIGHT))
    _switch(term, DARK, "\x1b[?997;1n")
    screen = term.wait_for(lambda s: _user_box(term.screen(ansi=True)) == _box(DARK))
    assert "997" not in screen and term.editor(screen) == ""  # the reports were not typed


def test_a_fixed_theme_does_not_follow_the_switch(pi_tui, server):
    server.push(Reply(text="Answered."))
    term = pi_tui(env={"COLORTERM": "truecolor"}, settings={"theme": "dark"},
                  tmux_options={"window-style": f"bg={LIGHT}", **_TMUX_COLOURS})
    term.submit("hello")
    term.wait_for("Answered.")
    before = _user_box(term.screen(ansi=True))
    _switch(term, DARK, "\x1b[?997;1n")
    term.submit("again")
    term.wait_for(lambda s: s.count("Answered.") == 1 and "again" in s)
    assert _user_box(term.screen(ansi=True)) == before


def test_pi_16_and_ours_repaint_the_same_after_a_switch(tmp_path, server):
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
                      options={"window-style": f"bg={DARK}", **_TMUX_COLOURS}) as term:
            term.wait_for("(auto)", timeout=30, settle=2.0)  # pi 1.6's start-up done (quiet for 2 s)
            term.type("hello")
            for _ in range(30):  # pi 1.6 refuses a prompt while its start-up is in progress
                term.press("Enter")
                if "Answered." in term.wait_for(lambda s: "Answered." in s or "still in progress" in s, timeout=30):
                    break
                term.wait_for(lambda s: "still in progress" not in s, timeout=30)
            _switch(term, LIGHT, "\x1b[?997;2n")
            term.wait_for(lambda s, t=term: _user_box(t.screen(ansi=True)) == _box(LIGHT), timeout=30)
            boxes[name] = _user_box(term.screen(ansi=True))
    assert boxes["ours"] == boxes["pi16"] == _box(LIGHT)
