"""What pi 1.6 tells the terminal beyond the text: progress (``terminal.showTerminalProgress``:
OSC 9;4;3 while the agent works, OSC 9;4;0 when it is done; nothing by default) and OSC 8
file links on tool titles (``PI_HYPERLINKS``, ``terminal.hyperlinks``). In this process, on
the emulated screen, whose every write is kept."""

from __future__ import annotations

import re
import time

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
    assert not hyperlinks_wanted(auto, {"TERM_PROGRAM": "WezTerm", "TMUX": "/tmp/tmux-0/default,1,0"})
    assert hyperlinks_wanted(Settings({"terminal": {"hyperlinks": True}}), {"TERM": "dumb"})
    assert not hyperlinks_wanted(Settings({"terminal": {"hyperlinks": False}}), {"TERM_PROGRAM": "WezTerm"})
    assert hyperlinks_wanted(Settings({"terminal": {"hyperlinks": False}}), {"PI_HYPERLINKS": "1"})
    assert not hyperlinks_wanted(auto, {"PI_HYPERLINKS": "0", "TERM_PROGRAM": "WezTerm"})
