"""pi's ``terminal.clearOnShrink``: when what is drawn below the scrollback gets shorter
(a dialog closes), the rows it leaves stay empty below the footer (pi's default), or
the chat is drawn again so that none are left (tmux)."""

import pytest
from support.llm_server import Reply

pytestmark = pytest.mark.process  # starts real processes (see tests/conftest.py)

ROWS = 30
ANSWER = "\n\n".join(f"para {i}" for i in range(30))


def close_a_dialog(pi_tui, server, clear_on_shrink: bool):
    server.push(Reply(text=ANSWER))
    term = pi_tui("--tui-mode", "regular", height=ROWS, settings={"terminal": {"clearOnShrink": clear_on_shrink}})
    term.submit("tell me")
    term.wait_for("para 29")
    term.submit("/model")
    term.wait_for("Select a model")
    term.press("Escape")
    return term


def test_by_default_the_rows_a_closed_dialog_leaves_stay_empty_below_the_footer(pi_tui, server):
    term = close_a_dialog(pi_tui, server, False)
    screen = term.wait_drawn(lambda s: "Select a model" not in s)
    rows = screen.rstrip("\n").split("\n")
    assert "test-model" in rows[-1] and len(rows) < ROWS - 5  # the footer moved up; empty rows below


def test_clear_on_shrink_draws_the_chat_again_down_to_the_last_row(pi_tui, server):
    term = close_a_dialog(pi_tui, server, True)

    def filled(screen: str) -> bool:
        rows = screen.rstrip("\n").split("\n")
        return "Select a model" not in screen and len(rows) == ROWS and "test-model" in rows[-1]

    screen = term.wait_for(filled)
    assert "para 18" in screen  # more of the answer, where the dialog's rows were
    history = term.screen(history=True)
    assert all(history.count(f"para {i}\n") == 1 for i in range(30)) and history.count("tell me") == 1
