"""What pi 1.6 tells the terminal beyond the text: progress (``terminal.showTerminalProgress``:
OSC 9;4;3 while the agent works, OSC 9;4;0 when it is done; nothing by default) and OSC 8
file links on tool titles (``PI_HYPERLINKS``, ``terminal.hyperlinks``). In this process, on
the emulated screen, whose every write is kept."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from support.llm_server import Reply

ACTIVE, CLEAR = "\x1b]9;4;3\x07", "\x1b]9;4;0\x07"


def test_terminal_progress_shows_while_the_agent_works_and_clears_after(pi_screen, server):
    server.push(Reply(text="Done thinking.", delay=0.5))
    term = pi_screen(settings={"terminal": {"showTerminalProgress": True}})
    term.submit("work for a while")
    term.wait_for("Done thinking.")
    term.wait_idle()
    time.sleep(0.2)
    written = "".join(term.terminal.written)
    assert written.count(ACTIVE) >= 2  # set at the start, and kept alive each second
    assert written.rfind(CLEAR) > written.rfind(ACTIVE)  # cleared when the run ended


def test_no_terminal_progress_unless_asked_for(pi_screen, server):
    server.push(Reply(text="Quick answer."))
    term = pi_screen()
    term.submit("hello")
    term.wait_for("Quick answer.")
    term.wait_idle()
    written = "".join(term.terminal.written)
    assert ACTIVE not in written and CLEAR not in written


def test_a_tools_file_is_an_osc8_link_where_the_terminal_shows_links(pi_screen, server, monkeypatch):
    server.push(Reply(tool_calls=[("read", {"path": "notes.txt"})]), Reply(text="Read it."))
    monkeypatch.setenv("PI_HYPERLINKS", "1")
    term = pi_screen(files={"notes.txt": "hello\n"})
    term.submit("read the notes")
    screen = term.wait_for("Read it.")
    term.wait_idle()
    assert "read notes.txt" in screen and "8;" not in screen  # the link shows as its text only
    written = "".join(term.terminal.written)
    url = (term.cwd / "notes.txt").resolve().as_uri()
    assert re.search(r"\x1b\]8;[^;\x1b]*;" + re.escape(url) + r"\x1b\\(\x1b\[[0-9;]*m)*notes\.txt", written)


def test_no_file_links_where_the_terminal_may_not_show_them(pi_screen, server, monkeypatch):
    server.push(Reply(tool_calls=[("read", {"path": "notes.txt"})]), Reply(text="Read it."))
    monkeypatch.delenv("PI_HYPERLINKS", raising=False)  # auto, and TERM is xterm-256color
    term = pi_screen(files={"notes.txt": "hello\n"})
    term.submit("read the notes")
    term.wait_for("Read it.")
    term.wait_idle()
    assert "\x1b]8;" not in "".join(term.terminal.written)


def test_hyperlink_detection_follows_pi_16s_switches():
    from pi_core.app.settings import Settings
    from pi_plugins.interactive.file_links import hyperlinks_wanted

    auto = Settings({})
    assert hyperlinks_wanted(auto, {"TERM_PROGRAM": "WezTerm"})
    assert hyperlinks_wanted(auto, {"TERM": "xterm-kitty"})
    assert not hyperlinks_wanted(auto, {"TERM": "xterm-256color"})
    assert not hyperlinks_wanted(auto, {"TERM_PROGRAM": "WezTerm", "STY": "1234.pts-0.host"})  # screen
    assert hyperlinks_wanted(Settings({"terminal": {"hyperlinks": True}}), {"TERM": "dumb"})
    assert not hyperlinks_wanted(Settings({"terminal": {"hyperlinks": False}}), {"TERM_PROGRAM": "WezTerm"})
    assert hyperlinks_wanted(Settings({"terminal": {"hyperlinks": False}}), {"PI_HYPERLINKS": "1"})
    assert not hyperlinks_wanted(auto, {"PI_HYPERLINKS": "0", "TERM_PROGRAM": "WezTerm"})


def _pi16_hyperlinks(env: dict) -> bool:
    """pi 1.6's own answer (pi-tui's ``detectCapabilities``), run with node in ``env``."""
    import json
    import subprocess

    from support.programs import NODE22, require_real

    module = require_real("pi16").parent / "pi-tui" / "dist" / "terminal-image.js"
    script = f"import({json.dumps(module.as_uri())}).then(m => console.log(m.detectCapabilities().hyperlinks))"
    done = subprocess.run([str(NODE22), "-e", script], env=env, capture_output=True, text=True, timeout=30)
    return done.stdout.strip() == "true"


@pytest.mark.process
def test_inside_tmux_links_follow_whether_tmux_passes_them_on(tmp_path):
    """pi 1.6 asks tmux for its client's features and links only where ``hyperlinks`` is
    one; the same answer here, side by side. This machine's tmux (3.3) has no such feature,
    so a ``tmux`` on PATH that answers as tmux 3.4 does stands in for the yes."""
    import os
    import pty
    import shutil
    import subprocess

    from pi_core.app.settings import Settings
    from pi_plugins.interactive.file_links import hyperlinks_wanted

    tmux = shutil.which("tmux")
    assert tmux, "tmux runs the chat's tests"
    socket = tmp_path / "tmux.sock"
    base = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "TERM": "xterm-256color"}
    subprocess.run([tmux, "-S", str(socket), "-f", "/dev/null", "new-session", "-d", "sleep 60"], env=base, check=True)
    client, fd = pty.fork()
    if client == 0:  # an attached client, whose features tmux reports
        os.execve(tmux, [tmux, "-S", str(socket), "attach"], base)
    try:
        inside = {**base, "TMUX": f"{socket},1,0", "TERM": "screen-256color", "TERM_PROGRAM": "tmux"}
        deadline = time.monotonic() + 10
        while not subprocess.run([tmux, "display-message", "-p", "#{client_termfeatures}"], env=inside,
                                 capture_output=True, text=True).stdout.strip() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert hyperlinks_wanted(Settings({}), inside) is _pi16_hyperlinks(inside) is False

        fake = tmp_path / "bin"
        fake.mkdir()
        (fake / "tmux").write_text("#!/bin/sh\necho 'bpaste,clipboard,hyperlinks,title'\n")
        (fake / "tmux").chmod(0o755)
        forwarding = {**inside, "PATH": f"{fake}:{os.environ['PATH']}"}
        assert hyperlinks_wanted(Settings({}), forwarding) is _pi16_hyperlinks(forwarding) is True
    finally:
        os.kill(client, 9)
        os.waitpid(client, 0)
        os.close(fd)
        subprocess.run([tmux, "-S", str(socket), "kill-server"], env=base, capture_output=True)


def _linked_paths(argv: list[str], home, server) -> set[str]:
    """The file:// targets of the OSC 8 links a program writes while a model lists the
    folder, greps and finds in ``src`` (whose output names src/notes.txt) and reads a file."""
    import json
    import time
    from urllib.parse import unquote, urlparse

    from support.pty_terminal import PtyTerminal

    (home / "project" / "src").mkdir(parents=True)
    (home / "project" / "src" / "notes.txt").write_text("hello there\n")
    (home / "agent").mkdir()
    (home / "agent" / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PI_CODING_AGENT_DIR": str(home / "agent"),
           "TERM": "xterm-256color", "LANG": "C.UTF-8", "PI_PROGRAM_STATUS": "0", "PI_HYPERLINKS": "1"}
    server.push(Reply(tool_calls=[("ls", {}), ("grep", {"pattern": "hello", "path": "src"}),
                                  ("find", {"pattern": "*.txt", "path": "src"}),
                                  ("read", {"path": "src/notes.txt"})]), Reply(text="Looked around."))
    argv = [*argv, "--approve", "--model", "local/test-model", "--tools", "read,ls,grep,find"]
    with PtyTerminal(argv, env=env, cwd=home / "project") as term:
        term.wait_for("(auto)")
        time.sleep(0.5)
        term.type("look around")
        term.write(b"\r")
        term.wait_for("Looked around.")
        time.sleep(1.0)
        written = term.text()
    project = (home / "project").resolve()
    return {str(Path(unquote(urlparse(url).path)).relative_to(project))
            for url in re.findall(r"\x1b\]8;[^;\x1b\x07]*;(file://[^\x1b\x07]+)", written)}


@pytest.mark.process
def test_file_links_are_where_pi_16_puts_them(tmp_path, server):
    """Side by side with pi 1.6: the titles of read, edit, write and ls link their path
    (ls's missing one is the folder); grep's and find's titles and what tools print are
    not linked."""
    import sys

    from support.programs import NODE22, require_real

    ours = _linked_paths([sys.executable, "-m", "pi_plugins.cli"], tmp_path / "ours", server)
    pi16 = _linked_paths([str(NODE22), str(require_real("pi16") / "dist" / "cli.js")], tmp_path / "pi16", server)
    assert ours == pi16 == {".", "src/notes.txt"}
