"""Typing while the agent works: Enter steers, Alt+Enter queues a follow-up, Esc aborts."""

import json
import threading

import pytest

from support.gates import Gate
from support.llm_server import Reply


@pytest.fixture
def gate(pi_screen, tmp_path):
    """A gate in the project folder, where the tools run (``read _ < gate`` waits for it)."""
    opened = Gate(tmp_path / "project" / "gate")
    yield opened
    opened.close()


def _last_user_text(request) -> str:
    message = [m for m in request.body["messages"] if m["role"] == "user"][-1]
    content = message["content"]
    return content if isinstance(content, str) else "".join(c.get("text", "") for c in content)


def test_enter_while_a_tool_runs_steers_the_next_request(pi_screen, server, gate):
    server.push(Reply(text="Running it.", tool_calls=[("bash", {"command": "read _ < gate; echo $((40 + 2))"})]),
                Reply(text="Switched to python as you asked."))
    term = pi_screen()
    term.submit("Run the slow script")
    term.wait_for("$ read _ < gate; echo $((40 + 2))")
    term.submit("use python instead")
    queued = term.wait_for("Steering: use python instead")
    assert " 42\n" not in queued  # the tool is still running: it waits for the gate
    assert len(server.requests) == 1
    gate.open()
    screen = term.wait_for("Switched to python as you asked.")
    assert "Steering:" not in term.wait_idle()
    second = server.requests[1].body["messages"]
    assert [m["role"] for m in second[-2:]] == ["tool", "user"]
    assert "42" in json.dumps(second[-2]) and _last_user_text(server.requests[1]) == "use python instead"
    assert screen.index(" 42\n") < screen.index("use python instead") < screen.index("Switched to python")


def test_alt_enter_queues_a_follow_up_for_when_the_run_ends(pi_screen, server):
    streaming = threading.Event()  # the answer streams until the follow-up is queued
    server.push(Reply(text="A long answer. " * 20, delta_size=4, hold=streaming, hold_after=5),
                Reply(text="Here is the follow-up answer."))
    term = pi_screen()
    term.submit("Tell me a story")
    term.wait_for("A long answer.")
    term.type("and then?")
    term.press("M-Enter")  # Alt+Enter: Esc then Enter, in one write
    term.wait_for("Follow-up: and then?")
    assert len(server.requests) == 1
    streaming.set()
    term.wait_for("Here is the follow-up answer.")
    assert len(server.requests) == 2 and _last_user_text(server.requests[1]) == "and then?"
    assert "Follow-up:" not in term.wait_idle()


def test_escape_aborts_the_answer_and_returns_queued_messages_to_the_editor(pi_screen, server):
    streaming = threading.Event()  # held mid-answer until the abort
    server.push(Reply(text="word " * 400, delta_size=5, hold=streaming, hold_after=4))
    term = pi_screen()
    term.submit("Talk for a long time")
    term.wait_for("word word word")
    term.submit("actually, stop")
    term.wait_for("Steering: actually, stop")
    term.press("Escape")
    screen = term.wait_drawn("Operation aborted")
    streaming.set()  # the rest of the answer meets a closed connection
    assert server.wait_for_disconnect()
    assert "Steering:" not in screen
    assert term.editor(screen) == "actually, stop"  # back in the editor, not sent
    assert len(server.requests) == 1
    [assistant] = [e["message"] for e in term.entries() if e.get("message", {}).get("role") == "assistant"]
    assert assistant["stopReason"] == "aborted"


SLOW_INPUT = '''
import asyncio

from pi_core import hookimpl

SETTLED = asyncio.Event()


@hookimpl
def agent_settled(event, ctx):
    SETTLED.set()


@hookimpl
async def input(event, ctx):
    """Holds "two" in the input chain until the first prompt has wholly ended."""
    if event.text == "two":
        await SETTLED.wait()
        while ctx.harness.is_running:
            await asyncio.sleep(0.01)
'''


def test_a_message_typed_as_the_run_ends_is_sent_not_left_queued(pi_screen, server):
    """Enter while the agent works queues the message; if the run ends while the message
    is still on its way through the ``input`` chain, it starts the next turn."""
    streaming = threading.Event()  # the first answer streams on once "two" is on its way
    server.push(Reply(text="First. " * 10, delta_size=7, hold=streaming, hold_after=2), Reply(text="Second."))
    term = pi_screen(plugin=SLOW_INPUT)
    term.submit("one")
    term.wait_for("First.")
    term.submit("two")
    term.wait_for(lambda screen: "two" not in term.editor(screen))
    streaming.set()
    term.wait_drawn("Second.")
    assert "Steering:" not in term.wait_idle()
    assert len(server.requests) == 2 and _last_user_text(server.requests[1]) == "two"
