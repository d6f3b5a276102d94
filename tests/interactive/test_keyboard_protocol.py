"""kitty's keyboard protocol, switched on as pi 1.6 does: pushed (flags 7) and asked for
with ``CSI ? u`` at start, xterm's modifyOtherKeys where the terminal does not answer, both
undone at exit; keys the protocol sends (super keys, Ctrl as ``CSI 99;5u``, releases) work.
The programs run on a pseudo-terminal that keeps the protocol's stack and answers its
query (tmux does not pass the protocol on)."""

import json
import re
import sys
import textwrap
import time

import pytest

from support.programs import NODE22, require_real
from support.pty_terminal import PtyTerminal

pytestmark = pytest.mark.process

_KEYBOARD = re.compile(rb"\x1b\[[<>?][\d;]*[um]")

SUPER_PLUGIN = '''
from pi_core import hookimpl
from pi_core.protocol.commands import Shortcut


async def hello(ctx):
    ctx.ui.notify("super-k-pressed")


@hookimpl
def register_shortcuts():
    return [Shortcut("super+k", hello, "say hello")]
'''


def _place(tmp_path, server) -> tuple[dict, object]:
    home = tmp_path / "home"
    (home / "project").mkdir(parents=True, exist_ok=True)
    (home / "agent").mkdir(parents=True, exist_ok=True)
    (home / "agent" / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PI_CODING_AGENT_DIR": str(home / "agent"),
           "TERM": "xterm-256color", "LANG": "C.UTF-8", "SHELL": "/bin/sh", "PI_PROGRAM_STATUS": "0"}
    return env, home / "project"


def _keyboard_bytes(argv, env, cwd, kitty: bool) -> tuple[list[bytes], list[int], list[int]]:
    """What the program wrote to the keyboard protocols, the terminal's flags stack while it
    ran, and the stack after it quit."""
    with PtyTerminal([*argv, "--model", "local/test-model"], env=env, cwd=cwd, kitty_keyboard=kitty) as term:
        term.wait_for("(auto)")
        time.sleep(0.5)
        running = list(term.kitty_flags)
        term.type("/quit")
        term.write(b"\r")
        term.process.wait(20)
        time.sleep(0.2)
        return _KEYBOARD.findall(term.output), running, list(term.kitty_flags)


@pytest.mark.parametrize("kitty", [True, False], ids=["kitty-terminal", "other-terminal"])
def test_the_keyboard_protocol_is_pushed_and_popped_as_pi_16_does(tmp_path, server, kitty):
    env, cwd = _place(tmp_path, server)
    pi16 = _keyboard_bytes([str(NODE22), str(require_real("pi16") / "dist" / "cli.js")], env, cwd, kitty)
    ours = _keyboard_bytes([sys.executable, "-m", "pi_plugins.cli"], env, cwd, kitty)
    assert ours == pi16
    written, running, after = ours
    if kitty:
        assert written == [b"\x1b[>7u", b"\x1b[?u", b"\x1b[<u"] and running == [7] and after == []
    else:  # no answer: modifyOtherKeys instead, reset at exit
        assert written == [b"\x1b[>7u", b"\x1b[?u", b"\x1b[>4;2m", b"\x1b[<u", b"\x1b[>4;0m"]


def test_keys_in_kittys_protocol_reach_the_chat(tmp_path, server):
    """Once the protocol is on: a super key runs its shortcut, Ctrl and Esc sent as reports
    act as themselves, releases type nothing."""
    env, cwd = _place(tmp_path, server)
    plugin = tmp_path / "super_plugin.py"
    plugin.write_text(textwrap.dedent(SUPER_PLUGIN))
    argv = [sys.executable, "-m", "pi_plugins.cli", "--model", "local/test-model", "-e", str(plugin)]
    with PtyTerminal(argv, env=env, cwd=cwd, kitty_keyboard=True) as term:
        term.wait_for("(auto)")
        time.sleep(0.5)
        term.write(b"\x1b[107;9u")  # super+k pressed
        term.write(b"\x1b[107;9:3u")  # … and released
        term.wait_for("super-k-pressed")
        term.type("ab")
        term.write(b"\x1b[97;1:3u\x1b[98;1:3u")  # releases: nothing typed
        term.write(b"\x1b[117;5u")  # Ctrl+U: the line is deleted
        term.type("/quit")
        term.write(b"\r")
        term.process.wait(20)
    assert term.process.returncode == 0  # "/quit" alone was in the editor: "ab" went with Ctrl+U


def test_the_protocols_keys_decode_to_what_legacy_terminals_send():
    from pi_plugins.interactive.keyboard_protocol import decode

    assert decode("\x1b[99;5u") == "\x03"  # Ctrl+C
    assert decode("\x1b[27u") == "\x1b"  # Esc
    assert decode("\x1b[97;3u") == "\x1ba"  # Alt+A
    assert decode("\x1b[97:65;2u") == "A"  # Shift+A, with its shifted key
    assert decode("\x1b[9;2u") == "\x1b[Z"  # Shift+Tab
    assert decode("\x1b[13;2u") == "\x1b[13;2u"  # Shift+Enter stays a report (a new line)
    assert decode("\x1b[107;9u") == "\x1b[107;9u"  # super+k: only a report carries it
    assert decode("\x1b[112;6u") == "\x1b[112;6u"  # Ctrl+Shift+P
    assert decode("\x1b[107;73u") == "\x1b[107;9u"  # Caps Lock is not a modifier
    assert decode("\x1b[97;1:3u") == ""  # a release
    assert decode("\x1b[97;1:2u") == "a"  # a repeat
    assert decode("\x1b[1;1:3A") == "" and decode("\x1b[1;1:1A") == "\x1b[A"  # arrows with event types
    assert decode("\x1b[1;5:1C") == "\x1b[1;5C"
    assert decode("\x1b[27;5;99~") == "\x03"  # modifyOtherKeys' Ctrl+C
    assert decode("\x1b[27;9;107~") == "\x1b[27;9;107~"
    assert decode("plain \x1b[?62;22c text") == "plain \x1b[?62;22c text"


def test_the_external_editor_runs_with_the_protocol_popped(tmp_path, server):
    """pi 1.6 stops its terminal for the external editor: the editor reads legacy keys;
    the protocol is pushed again when it returns."""
    env, cwd = _place(tmp_path, server)
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\necho EDITOR-RUNNING\nsleep 1\necho edited > \"$1\"\n")
    editor.chmod(0o755)
    env = {**env, "VISUAL": str(editor)}
    with PtyTerminal([sys.executable, "-m", "pi_plugins.cli", "--model", "local/test-model"], env=env, cwd=cwd,
                     kitty_keyboard=True) as term:
        term.wait_for("(auto)")
        time.sleep(0.5)
        assert term.kitty_flags == [7]
        term.write(b"\x07")  # Ctrl+G
        term.wait_for("EDITOR-RUNNING")
        assert term.kitty_flags == []
        deadline = time.monotonic() + 10
        while term.kitty_flags != [7] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert term.kitty_flags == [7]


def _keyboard_bytes_around_the_editor(argv, env, cwd, kitty: bool) -> list[bytes]:
    """What the program wrote to the keyboard protocols over a run with one trip to the
    external editor (which writes "/quit" for the chat to send)."""
    with PtyTerminal([*argv, "--model", "local/test-model"], env=env, cwd=cwd, kitty_keyboard=kitty) as term:
        term.wait_for("(auto)")
        time.sleep(0.5)
        term.write(b"\x07")  # Ctrl+G
        term.wait_for("EDITOR-DONE")
        time.sleep(1.0)  # the answers to the questions asked again arrive and are read
        term.write(b"\r")
        term.process.wait(20)
        time.sleep(0.2)
        return _KEYBOARD.findall(term.output)


@pytest.mark.parametrize("kitty", [True, False], ids=["kitty-terminal", "other-terminal"])
def test_the_terminal_is_asked_again_after_the_external_editor_as_pi_16_does(tmp_path, server, kitty):
    """Back from the editor, pi 1.6 pushes the protocol and asks ``CSI ? u`` again, and
    chooses between the protocol and modifyOtherKeys by the answer, as at start."""
    env, cwd = _place(tmp_path, server)
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nprintf /quit > \"$1\"\necho EDITOR-DONE\n")
    editor.chmod(0o755)
    env = {**env, "VISUAL": str(editor), "EDITOR": str(editor)}
    pi16 = _keyboard_bytes_around_the_editor([str(NODE22), str(require_real("pi16") / "dist" / "cli.js")], env, cwd,
                                             kitty)
    ours = _keyboard_bytes_around_the_editor([sys.executable, "-m", "pi_plugins.cli"], env, cwd, kitty)
    assert ours == pi16
    once = [b"\x1b[>7u", b"\x1b[?u", b"\x1b[<u"] if kitty else \
        [b"\x1b[>7u", b"\x1b[?u", b"\x1b[>4;2m", b"\x1b[<u", b"\x1b[>4;0m"]
    assert ours == once + once
