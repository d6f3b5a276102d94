"""keybindings.json: pi's keybinding ids move the chat's keys, in a real terminal."""

import json

import pytest

pytestmark = pytest.mark.process  # starts real processes (see tests/conftest.py)

#: Shift+Ctrl+P as kitty's keyboard protocol and xterm's modifyOtherKeys report it
SHIFT_CTRL_P = ("\x1b[112;6u", "\x1b[27;6;112~")


def _model_lines(screen: str) -> list[str]:
    return [line.strip() for line in screen.splitlines() if line.strip().startswith("Model: ")]


def test_a_key_bound_to_cycle_forward_cycles_and_the_old_key_stops(pi_tui):
    term = pi_tui(agent_files={"keybindings.json": json.dumps({"app.model.cycleForward": "ctrl+y"})})
    term.press("C-y")
    term.wait_drawn("Model: local/other-model")
    term.press("C-p")  # no longer cycles: the next line is the third model, not the first again
    term.press("C-y")
    screen = term.wait_drawn("Model: local/third-model")
    assert _model_lines(screen) == ["Model: local/other-model", "Model: local/third-model"]
    assert screen.rstrip().endswith("third-model")  # the footer names it


def test_shift_ctrl_p_cycles_the_models_backward(pi_tui):
    term = pi_tui()
    term.send_raw(SHIFT_CTRL_P[0])
    term.wait_drawn("Model: local/third-model")
    term.send_raw(SHIFT_CTRL_P[1])
    term.wait_drawn("Model: local/other-model")
    term.press("C-p")
    screen = term.wait_drawn(lambda s: len(_model_lines(s)) == 3)
    assert _model_lines(screen) == ["Model: local/third-model", "Model: local/other-model",
                                    "Model: local/third-model"]
    assert term.editor(screen) == ""  # nothing of the sequences was typed


def test_legacy_ids_and_hotkeys_follow_the_file(pi_tui):
    term = pi_tui(agent_files={"keybindings.json": json.dumps({"cycleModelForward": ["alt+m"],
                                                               "app.thinking.cycle": "bogus+key"})})
    screen = term.screen()
    assert "keybindings: app.thinking.cycle" in screen  # the header says what was not understood
    term.press("M-m")
    term.wait_drawn("Model: local/other-model")
    term.submit("/hotkeys")
    # the whole list, not a frame caught while it is being written
    screen = term.wait_drawn(lambda s: "Keyboard shortcuts" in s and "next model" in s and "previous model" in s)
    assert [line for line in screen.splitlines() if "next model" in line][0].split()[0] == "alt+m"
    assert [line for line in screen.splitlines() if "previous model" in line][0].split()[0] == "shift+ctrl+p"


def test_reload_applies_an_edited_keybindings_file(pi_tui):
    term = pi_tui()
    (term.agent_dir / "keybindings.json").write_text(json.dumps({"app.model.cycleForward": "alt+n"}))
    term.submit("/reload")
    term.wait_drawn("keybindings.")
    term.press("M-n")
    term.wait_drawn("Model: local/other-model")


def test_an_editor_action_moves_to_another_key(pi_tui):
    # Emacs users move the cursor to the line start with ctrl+a; here it is alt+a only
    term = pi_tui(agent_files={"keybindings.json": json.dumps({"tui.editor.cursorLineStart": ["alt+a"]})})
    term.type("world")
    term.press("C-a")  # no longer moves the cursor
    term.type("!")
    term.press("M-a")
    term.type("hello ")
    term.wait_drawn(lambda s: term.editor(s) == "hello world!")


def test_the_lists_keys_follow_tui_select_ids(pi_tui):
    term = pi_tui(agent_files={"keybindings.json": json.dumps({"tui.select.down": ["ctrl+n"],
                                                               "tui.select.cancel": ["ctrl+q"]})})
    term.submit("/model")
    term.wait_for("→ test-model [local]")
    term.press("C-n")
    term.wait_for("→ other-model [local]")
    term.press("Down")  # no longer moves
    term.press("C-n")
    term.wait_for("→ third-model [local]")
    term.press("C-q")
    term.wait_drawn(lambda s: "Select a model" not in s)


def test_a_super_key_binds_where_the_terminal_reports_the_modifier(pi_tui):
    """pi 1.6's ``super`` modifier: kitty's keyboard protocol and xterm's modifyOtherKeys
    report it as modifier bit 8 (``super+k``: CSI 107;9u, CSI 27;9;107~)."""
    term = pi_tui(agent_files={"keybindings.json": json.dumps({"app.model.cycleForward": "super+k",
                                                               "app.model.cycleBackward": "ctrl+super+up"})})
    term.send_raw("\x1b[107;9u")
    term.wait_drawn("Model: local/other-model")
    term.send_raw("\x1b[27;9;107~")
    term.wait_drawn("Model: local/third-model")
    term.send_raw("\x1b[1;13A")  # Ctrl+Super+Up
    screen = term.wait_drawn(lambda s: len(_model_lines(s)) == 3)
    assert _model_lines(screen)[-1] == "Model: local/other-model"
    assert term.editor(screen) == ""  # nothing of the sequences was typed


SUPER_PLUGIN = '''
from pi_core import hookimpl
from pi_core.protocol.commands import Shortcut


async def hello(ctx):
    ctx.ui.notify("super j pressed")


@hookimpl
def register_shortcuts():
    return [Shortcut("super+j", hello, "say hello")]
'''


def test_a_plugin_shortcut_with_super_runs_on_the_reported_key(pi_tui):
    term = pi_tui(plugin=SUPER_PLUGIN)
    term.send_raw("\x1b[106;9u")
    screen = term.wait_drawn("super j pressed")
    assert "Shortcut not bound" not in screen and term.editor(screen) == ""
