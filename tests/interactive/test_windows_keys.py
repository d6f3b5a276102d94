"""Windows Terminal's keys, as pi 1.6 documents them (docs/terminal-setup.md, "Windows
Terminal"; docs/keybindings.md): under WSL, a Linux that most likely runs in Windows
Terminal, the defaults are 1.6's Windows ones (``ctrl+q`` for a follow-up, since Windows
Terminal takes Alt+Enter), and the Shift+Enter Windows Terminal is told to send
(``sendInput`` ``\\u001b[13;2u``) inserts a new line. Native Windows (its Shift-key check,
no job control) cannot run here."""

import json
import subprocess

import pytest

from pi_plugins.interactive.keybindings import DEFAULTS, WINDOWS_DEFAULTS, Keybindings, windows_keybindings
from support.programs import NODE22, require_real


def _pi16_defaults(env: dict, ids: list[str]) -> dict[str, list[str]]:
    module = require_real("pi16") / "dist" / "core" / "keybindings.js"
    script = (f"import({json.dumps(module.as_uri())}).then(m => console.log(JSON.stringify("
              f"Object.fromEntries({json.dumps(ids)}.map(id => [id, [m.KEYBINDINGS[id].defaultKeys].flat()])))))")
    done = subprocess.run([str(NODE22), "--input-type=module", "-e", script], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.process
def test_under_wsl_the_default_keys_are_pi_16s_windows_ones(tmp_path):
    import os

    ids = sorted(WINDOWS_DEFAULTS)
    wsl = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "WSL_DISTRO_NAME": "Ubuntu"}
    ours = Keybindings.load(tmp_path, wsl)
    assert {i: list(ours.keys(i)) for i in ids} == _pi16_defaults(wsl, ids)
    assert windows_keybindings({"WSL_INTEROP": "/run/WSL/1_interop"}, platform="linux")
    assert not windows_keybindings({}, platform="linux")
    plain = Keybindings.load(tmp_path, {})
    assert plain.keys("app.message.followUp") == DEFAULTS["app.message.followUp"] == ("alt+enter",)
    (tmp_path / "keybindings.json").write_text(json.dumps({"app.message.followUp": "alt+enter"}))
    assert Keybindings.load(tmp_path, wsl).keys("app.message.followUp") == ("alt+enter",)  # the file wins


def test_under_wsl_hotkeys_list_the_windows_keys(pi_screen, monkeypatch):
    monkeypatch.setenv("WSL_DISTRO_NAME", "Ubuntu")
    term = pi_screen()
    term.submit("/hotkeys")
    screen = term.wait_for("ctrl+q")
    line = next(line for line in screen.splitlines() if "ctrl+q" in line)
    assert "follow" in line.lower()


def test_windows_terminals_shift_enter_inserts_a_new_line(pi_screen):
    term = pi_screen()
    term.type("first line")
    term.type("\x1b[13;2u")  # what terminal-setup.md has Windows Terminal send for Shift+Enter
    term.type("second line")
    screen = term.wait_for("second line")
    lines = screen.splitlines()
    first = next(i for i, line in enumerate(lines) if "first line" in line)
    assert "second line" in lines[first + 1] and "second line" not in lines[first]
