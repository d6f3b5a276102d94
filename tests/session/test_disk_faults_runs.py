"""A run whose session cannot be saved stops at once with an error event, as a failed
request does (what ``pi -p``, JSON, RPC and the chat show), instead of carrying on; the
messages stay in memory and reach the file once the disk has room again."""

from __future__ import annotations

import asyncio
import json

import pytest
from support.small_disk import PAGE, mounted

from pi_core import AssistantMessage, tool
from pi_core.session import Session
from pi_core.testing import Reply


@pytest.fixture(scope="module")
def small_disk():
    with mounted(256 * 1024) as disk:
        yield disk


@pytest.fixture
def disk(small_disk):
    small_disk.clear()
    yield small_disk
    small_disk.clear()


def test_a_prompt_that_cannot_be_saved_ends_the_run_before_the_model_is_asked(harness, disk):
    errors: list = []
    session = Session.create(harness.work, disk.root)

    async def scenario():
        made = await harness(script=[Reply(text="answer")], session=session)
        made.plugins.error_listeners.append(errors.append)
        disk.fill_to_the_brim()
        await made.prompt("x" * 2 * PAGE)
        first = list(made.agent.messages)
        disk.give_back()
        await made.prompt("once more")
        return first, made

    first, made = asyncio.run(scenario())
    prompt, failure = first
    assert isinstance(failure, AssistantMessage) and failure.stop_reason == "error"
    assert "the session could not be saved (No space left on device)" in failure.error_message
    assert "user message" in failure.error_message and "disk has room again" in failure.error_message
    assert len(harness.provider.requests) == 1  # only the second prompt reached the model
    assert errors == []  # a clear stop, not an extension_error
    session.close()
    with Session.open(session.file, read_only=True) as reopened:
        roles = [(e.message.role, e.message.stop_reason if e.message.role == "assistant" else None)
                 for e in reopened.entries if e.type == "message"]
    assert roles == [("user", None), ("assistant", "error"), ("user", None), ("assistant", "stop")]


def test_an_answer_that_cannot_be_saved_runs_none_of_its_tool_calls(harness, disk):
    ran: list[str] = []

    @tool(parameters={"type": "object", "properties": {"path": {"type": "string"}}})
    def remove(path: str) -> str:
        """Remove a file."""
        ran.append(path)
        return "removed"

    session = Session.create(harness.work, disk.root)

    def full_disk_then(reply: Reply):
        def answer(_context):
            disk.fill_to_the_brim()  # the disk fills while the model answers
            return reply
        return answer

    async def scenario():
        made = await harness(script=[full_disk_then(Reply(text="y" * 2 * PAGE,
                                                            tool_calls=[("remove", {"path": "a"})])),
                                     Reply(text="done")], session=session, tools=[remove])
        await made.prompt("clean up")
        return made

    made = asyncio.run(scenario())
    assert ran == []
    answer, failure = made.agent.messages[-2:]
    assert answer.tool_calls and failure.stop_reason == "error"
    assert "could not be saved" in failure.error_message
    assert [e.message.role for e in session.unsaved] == ["assistant", "assistant"]
    disk.give_back()
    session.close()
    with Session.open(session.file, read_only=True) as reopened:
        assert [e.id for e in reopened.entries] == [e.id for e in session.entries]


@pytest.mark.process
def test_pi_print_on_a_full_disk_exits_non_zero_with_the_reason(pi, server, disk):
    disk.fill_to_the_brim()
    done = pi.run("--session-dir", str(disk.root), "-p", "hello " * PAGE)
    assert done.returncode == 1, done.stderr
    assert "the session could not be saved (No space left on device)" in done.stderr
    # the first write refused is pi 1.6's system message; the prompt after it is still kept
    assert "Not on disk: 3 entries (model_change" in done.stderr and "system message" in done.stderr
    [lost] = [line for line in done.stderr.splitlines() if "lost on closing" in line]
    assert "lost on closing: 5 entries (model_change" in lost and "user message" in lost
    assert server.requests == []  # nothing was asked of the model


@pytest.mark.process
def test_pi_json_on_a_full_disk_ends_with_the_error_event(pi, server, disk):
    disk.fill_to_the_brim()
    done = pi.run("--session-dir", str(disk.root), "--mode", "json", "hello " * PAGE)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    ends = [e["message"] for e in events if e["type"] == "message_end"]
    assert ends[-1]["role"] == "assistant" and ends[-1]["stopReason"] == "error"
    assert "could not be saved" in ends[-1]["errorMessage"]
    assert "extension_error" not in {e["type"] for e in events}
