"""Chatting: a streamed answer, tool calls with their diff and output, the footer."""

import re
from pathlib import Path

import pytest

from support.llm_server import Reply

pytestmark = pytest.mark.process  # starts real processes (see tests/conftest.py)

ARTIFACTS = Path(__file__).parent / "artifacts"


def test_prompt_streams_the_answer_as_markdown(pi_tui, server):
    answer = "# Plan\n\nFirst **read** the `config`, then:\n\n- check it\n- fix it\n\n" + "More words. " * 30
    server.push(Reply(text=answer, delta_size=6, delay=0.02))
    term = pi_tui()
    term.submit("Make a plan")
    partial = term.wait_for("Plan")
    assert "Working..." in partial  # the answer shows while it streams
    screen = term.wait_idle()
    assert "Make a plan" in screen
    assert "# Plan" not in screen and " Plan" in screen  # the heading is rendered, not raw
    assert "First read the config, then:" in screen
    assert "- check it" in screen and "- fix it" in screen
    assert server.requests[0].body["messages"][-1]["content"] in (
        "Make a plan", [{"type": "text", "text": "Make a plan"}])


def test_a_tool_using_answer_shows_the_diff_the_output_tail_and_the_footer(pi_tui, server):
    """Leaves the screen in artifacts/tool_answer_screen.txt (and .ansi, with colours)."""
    server.push(
        Reply(text="I'll fix the greeting.", tool_calls=[
            ("edit", {"path": "greeting.txt", "edits": [{"oldText": "hello world", "newText": "goodbye world"}]}),
            ("bash", {"command": "seq 1 12"}),
        ], usage={"input": 1200, "output": 340}),
        Reply(text="Done: the greeting now says **goodbye**.", usage={"input": 1500, "output": 20}),
    )
    # the regular screen: its lines compared whole (fullscreen adds the scrollbar's column)
    term = pi_tui("--tui-mode", "regular", files={"greeting.txt": "first line\nhello world\nlast line\n"})
    term.submit("Change the greeting")
    screen = term.wait_for("Done: the greeting now says goodbye.")
    screen = term.wait_idle()
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "tool_answer_screen.txt").write_text(screen)
    (ARTIFACTS / "tool_answer_screen.ansi").write_text(term.screen(ansi=True))
    lines = screen.splitlines()
    # the edit tool's details.diff, rendered
    assert "edit greeting.txt" in screen
    assert any(l.strip() == "-2 hello world" for l in lines)
    assert any(l.strip() == "+2 goodbye world" for l in lines)
    assert any(l.strip() == "1 first line" for l in lines)
    # the bash output's tail, the rest folded
    assert "$ seq 1 12" in screen and "... (7 earlier lines, ctrl+o to expand)" in screen
    assert [l.strip() for l in lines if l.strip().isdigit()][-5:] == ["8", "9", "10", "11", "12"]
    # the footer: where, tokens spent, context use, model and thinking level
    footer = lines[-2:]
    assert footer[0].strip() == "~/project"
    assert footer[1].startswith("↑2.7k ↓360 $0.013 ") and "%/128k (auto)" in footer[1]
    assert footer[1].endswith("test-model • medium")  # a reasoning model starts at pi's default level
    assert (term.cwd / "greeting.txt").read_text() == "first line\ngoodbye world\nlast line\n"
    term.press("C-o")  # expand tool output: the whole bash output is repainted
    # wait for the whole repaint (the footer is drawn last), then check the answer survived it
    expanded = term.wait_for(lambda s: "earlier lines" not in s and "\n 1\n 2\n 3\n" in s and "(auto)" in s)
    assert "Done: the greeting now says goodbye." in expanded


def test_thinking_is_shown_dimmed_and_ctrl_t_collapses_it(pi_tui, server):
    server.push(Reply(thinking="Weighing the two options carefully.", text="Option B."))
    term = pi_tui()
    term.submit("A or B?")
    screen = term.wait_for("Option B.")
    assert "Weighing the two options carefully." in screen
    coloured = term.screen(ansi=True)
    thinking_line = next(l for l in coloured.splitlines() if "Weighing" in l)
    style = re.findall(r"\x1b\[([0-9;]*)m", thinking_line.split("Weighing")[0])[-1].split(";")
    assert "3" in style  # italic
    assert "2" in style or "38" in style  # muted: faint (the ANSI system theme, as pi 1.6) or a colour
    term.press("C-t")
    collapsed = term.wait_for(lambda s: "Weighing" not in s and "Thinking..." in s)
    assert "Option B." in collapsed


def test_a_message_on_the_command_line_starts_the_chat(pi_tui, server):
    server.push(Reply(text="Started with your question."))
    term = pi_tui("What is in here?")
    screen = term.wait_for("Started with your question.")
    assert "What is in here?" in screen
    term.wait_idle()
    term.press("Up")
    term.wait_drawn(lambda s: term.editor(s) == "What is in here?")


def test_an_answer_taller_than_the_screen_streams_above_the_editor_and_lands_whole(pi_tui, server):
    text = "\n\n".join(f"Paragraph number {i}." for i in range(60))
    server.push(Reply(text=text, delta_size=12, delay=0.01))
    term = pi_tui("--tui-mode", "regular", height=20)  # the regular screen: the answer lands in the scrollback
    term.submit("Write a lot")
    streaming = term.wait_drawn("Paragraph number 30.")
    assert "Working..." in streaming  # the end of the answer shows while it streams, above the editor
    assert "Paragraph number 0." not in streaming  # its start has scrolled away
    term.wait_idle()
    history = term.screen(history=True)
    for i in range(60):
        assert history.count(f"Paragraph number {i}.") == 1
