"""pi 1.6's terminal progress (``terminal.showTerminalProgress``): OSC 9;4;3 while the
agent works, OSC 9;4;0 when it is done; nothing by default. In this process, on the
emulated screen, whose every write is kept."""

from __future__ import annotations

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
