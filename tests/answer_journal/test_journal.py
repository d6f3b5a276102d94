"""The answer journal in-process: kept while an answer streams, removed when the answer
is saved, offered back after a crash, and harmless when damaged or switched off."""

from __future__ import annotations

import asyncio
import json
import logging
import os

import pytest
from support.harnesses import make

from pi_core import Harness, load_plugins
from pi_core.app.settings import Settings
from pi_core.session import Session
from pi_core.testing import Reply, ScriptedProvider, scripted_model
from pi_plugins import answer_journal
from pi_plugins.answer_journal.journal import JournalWriter, read_journal

STORY = "Once upon a time there was a harness that never lost a word. " * 8


def journal(session) -> str:
    return answer_journal.journal_path(session)


def watch_journal(harness, seen: list) -> None:
    """Keep the journal's text each time a delta arrives."""
    def look(event):
        if event.type == "message_update":
            path = journal(harness.session)
            if os.path.exists(path):
                seen.append(open(path).read())
    harness.subscribe(look)


def test_the_journal_is_kept_while_the_answer_streams_and_removed_once_it_is_saved(tmp_path):
    async def scenario():
        harness, _, _ = make(tmp_path, [Reply(text=STORY, chunk=8, delay=0.005)], answer_journal)
        seen: list = []
        watch_journal(harness, seen)
        await harness.prompt("tell me a story")
        await asyncio.sleep(0)  # (removed just after the save)
        return harness, seen

    harness, seen = asyncio.run(scenario())
    assert seen and '"text"' in seen[-1]  # written while it streamed
    assert not os.path.exists(journal(harness.session))
    assert harness.session.path()[-1].message.text == STORY
    assert journal(harness.session).startswith(os.environ["XDG_CACHE_HOME"])


async def crash_mid_answer(tmp_path, reply: Reply, *, after: int = 30) -> tuple[Session, str]:
    """Stream ``reply``, stall it after ``after`` deltas until the journal has caught up,
    and leave on disk what a ``kill -9`` then leaves (the session file and the journal as
    they were at that moment): the session and the text the client had seen."""
    harness, _, _ = make(tmp_path, [reply], answer_journal)
    seen: list = []
    stalled, release = asyncio.Event(), asyncio.Event()

    async def stall(event):
        if event.type == "message_update" and event.assistant_message_event.type.endswith("_delta"):
            seen.append(event.assistant_message_event.delta)
            if len(seen) == after:
                stalled.set()
                await release.wait()

    harness.subscribe(stall)
    run = asyncio.ensure_future(harness.prompt("tell me a story"))
    await stalled.wait()
    await asyncio.sleep(0.3)  # the journal's interval is 100 ms
    session = harness.session
    on_disk, shown = (session.file.read_bytes(), open(journal(session), "rb").read()), "".join(seen)
    release.set()
    await run
    session.close()
    session.file.write_bytes(on_disk[0])  # the answer never reached the file…
    with open(journal(session), "wb") as f:  # …and its journal was never removed
        f.write(on_disk[1])
    return session, shown


async def reopen(tmp_path, session_file, *plugins):
    session = Session.open(session_file)
    harness, provider, events = make(tmp_path, [Reply(text="go on then")], *plugins, session=session)
    await harness.start("resume")
    return harness, provider, events


def test_a_killed_answer_is_offered_back_as_pis_aborted_answer_on_the_next_open(tmp_path):
    async def scenario():
        killed, seen = await crash_mid_answer(tmp_path, Reply(text=STORY, chunk=4, delay=0.004))
        assert os.path.exists(journal(killed))
        harness, provider, events = await reopen(tmp_path, killed.file, answer_journal)
        recovered = harness.session.path()[-1].message
        shown = [e.message for e in events.of("message_end")]
        await harness.prompt("go on")
        return seen, recovered, shown, harness, provider

    seen, recovered, shown, harness, provider = asyncio.run(scenario())
    assert recovered.role == "assistant" and recovered.stop_reason == "aborted"
    assert recovered.error_message == "Request was aborted"
    assert recovered.text == seen and STORY.startswith(seen)
    assert shown == [recovered]  # the clients hear of it as a message
    assert not os.path.exists(journal(harness.session))
    roles = [e.message.role for e in harness.session.path() if e.type == "message"]
    assert roles == ["user", "assistant", "user", "assistant"]
    # the model's context holds it as after an abort by the user; each wire provider
    # leaves it out, as pi's do (the real request is checked in test_kill.py)
    assert [m.role for m in provider.requests[-1].messages] == ["user", "assistant", "user"]
    assert provider.requests[-1].messages[1].stop_reason == "aborted"


def test_thinking_and_a_tool_call_so_far_are_kept_too(tmp_path):
    reply = Reply(thinking="Let me think about this carefully.", text="I will write it.",
                  tool_calls=[("write", {"path": "story.txt", "content": STORY})], chunk=4, delay=0.002)

    async def scenario():
        killed, _ = await crash_mid_answer(tmp_path, reply, after=40)
        harness, _, _ = await reopen(tmp_path, killed.file, answer_journal)
        return harness.session.path()[-1].message

    recovered = asyncio.run(scenario())
    thinking, text, call = recovered.content
    assert thinking.thinking == "Let me think about this carefully." and text.text == "I will write it."
    assert call.name == "write" and call.arguments["path"] == "story.txt"
    assert STORY.startswith(call.arguments.get("content", ""))


def test_a_journal_whose_answer_was_saved_is_removed_and_nothing_added(tmp_path):
    async def scenario():
        harness, _, _ = make(tmp_path, [Reply(text=STORY, chunk=8, delay=0.002)], answer_journal)
        kept: list = []
        watch_journal(harness, kept)
        await harness.prompt("tell me a story")
        harness.session.close()
        with open(journal(harness.session), "w") as f:  # killed between the save and the removal
            f.write(kept[-1])
        again, _, _ = await reopen(tmp_path, harness.session.file, answer_journal)
        return again

    again = asyncio.run(scenario())
    assert [e.message.role for e in again.session.path() if e.type == "message"] == ["user", "assistant"]
    assert not os.path.exists(journal(again.session))


@pytest.mark.parametrize("damage", ["garbage", "empty", "not ours", "another session"])
def test_a_corrupt_journal_is_ignored_with_a_warning(tmp_path, caplog, damage):
    async def scenario():
        killed, _ = await crash_mid_answer(tmp_path, Reply(text=STORY, chunk=4, delay=0.004))
        path = journal(killed)
        header = json.loads(open(path).readline())
        text = {"garbage": "\x00\xff not json at all\n{{{", "empty": "",
                "not ours": json.dumps({"type": "something else"}) + "\n",
                "another session": json.dumps({**header, "sessionId": "someone-else"}) + '\n{"i": 0, "text": "x"}\n'}
        with open(path, "w", errors="surrogateescape") as f:
            f.write(text[damage])
        with caplog.at_level(logging.WARNING, logger="pi.answer_journal"):
            harness, _, _ = await reopen(tmp_path, killed.file, answer_journal)
            await harness.prompt("go on")
        return harness, path

    harness, path = asyncio.run(scenario())
    assert [e.message.role for e in harness.session.path() if e.type == "message"] == ["user", "user", "assistant"]
    assert "is ignored" in caplog.text
    assert not os.path.exists(path)


def test_a_journal_cut_mid_line_gives_back_what_came_before_the_cut(tmp_path, caplog):
    async def scenario():
        killed, seen = await crash_mid_answer(tmp_path, Reply(text=STORY, chunk=4, delay=0.004))
        path = journal(killed)
        with open(path, "a") as f:
            f.write('{"i": 0, "text": "and then the pow')  # a write cut short
        with caplog.at_level(logging.WARNING, logger="pi.answer_journal"):
            harness, _, _ = await reopen(tmp_path, killed.file, answer_journal)
        return harness.session.path()[-1].message, seen

    recovered, seen = asyncio.run(scenario())
    assert recovered.stop_reason == "aborted" and recovered.text == seen
    assert "is cut or damaged" in caplog.text


def test_a_journal_that_cannot_be_written_costs_the_answer_nothing(tmp_path, caplog, monkeypatch):
    blocked = tmp_path / "cache-is-a-file"
    blocked.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))

    async def scenario():
        harness, _, _ = make(tmp_path, [Reply(text=STORY, chunk=8, delay=0.002)], answer_journal)
        with caplog.at_level(logging.WARNING, logger="pi.answer_journal"):
            await harness.prompt("tell me a story")
        return harness

    harness = asyncio.run(scenario())
    assert harness.session.path()[-1].message.text == STORY
    assert "cannot be written" in caplog.text


@pytest.mark.parametrize("switched_off", [False, True], ids=["built-in on", "-builtin:answer_journal"])
def test_minus_builtin_answer_journal_keeps_no_journal(tmp_path, switched_off):
    settings = Settings({"extensions": ["-builtin:answer_journal"]} if switched_off else {})
    plugins = load_plugins(cwd=tmp_path, agent_dir=tmp_path / "agent", discover=False, settings=settings)
    assert ("answer_journal" in [i.name for i in plugins.infos]) is not switched_off
    plugins.register(ScriptedProvider([Reply(text=STORY, chunk=8, delay=0.003)]), "scripted")
    session = Session.create(tmp_path / "work", tmp_path / "sessions")
    harness = Harness(plugins=plugins, session=session, model=scripted_model(), cwd=str(tmp_path),
                      settings=settings)
    seen: list = []
    watch_journal(harness, seen)
    asyncio.run(harness.prompt("tell me a story"))
    assert bool(seen) is not switched_off
    assert not os.path.exists(journal(session))


def test_the_writer_and_reader_agree_on_every_block(tmp_path):
    from pi_core import AssistantMessage, TextContent, ThinkingContent, ToolCall

    message = AssistantMessage(api="a", provider="p", model="m", response_id="r1")
    writer = JournalWriter(str(tmp_path / "j" / "answer"), message, "parent", "sid")
    message.content.append(ThinkingContent(thinking="hm"))
    writer.flush()
    message.content[0].thinking += " — ünïcode \ud83d"  # a lone surrogate too
    message.content.append(TextContent(text="Hello"))
    message.content.append(ToolCall(id="c1", name="read", arguments={"path": "a"}))
    writer.flush()
    message.content[1].text += ", world"
    message.content[2].arguments = {"path": "a.txt"}
    writer.flush()
    writer.close(remove=False)
    header, read, problem = read_journal(writer.path)
    assert problem is None and header["parentId"] == "parent"
    assert [b.type for b in read.content] == ["thinking", "text", "toolCall"]
    assert read.content[0].thinking == "hm — ünïcode \ud83d" and read.content[1].text == "Hello, world"
    assert read.content[2].arguments == {"path": "a.txt"}
    assert (read.timestamp, read.response_id, read.stop_reason) == (message.timestamp, "r1", "aborted")
