"""A budget in the chat: one line says it was reached, and no request goes out."""

from support.llm_server import Reply


def test_the_chat_shows_one_line_when_the_budget_is_reached(pi_screen, server):
    server.push(Reply(text="Looking.", tool_calls=[("ls", {"path": "."})]), Reply(text="unsent"))
    term = pi_screen("--max-turns", "1")
    term.submit("look around")
    screen = term.wait_for("Budget reached")
    assert screen.count("Budget reached: turns 1 of 1 turns spent") == 1
    term.wait_idle()
    assert len(server.requests) == 1
