"""pi-compact-notes through a real harness: /compact, the threshold and a second
compaction, with the built-in tools working in a temp project and no model call for the
summary."""

import asyncio
import json

import pi_compact_notes
import pytest
from pi_compact_notes.notes import Limits, Notes

from pi_core import CompactionSummaryMessage, Settings, UserMessage, text_of
from pi_core.testing import Reply, assert_light_import


def run(coro):
    return asyncio.run(coro)


def refuse_summaries(context):
    """Any summarisation request would fail, as it would offline."""
    last = context.messages[-1] if context.messages else None
    if last is not None and "<conversation>" in text_of(last.content):
        raise AssertionError("a summary was requested from the model")
    return None


FIRST_WORK = [
    Reply(tool_calls=[("write", {"path": "parser.py", "content": "print('parsed')\n"})]),
    Reply(tool_calls=[("bash", {"command": "python3 parser.py"})]),
    Reply(text="The parser is written and runs."),
]
SECOND_WORK = [
    Reply(tool_calls=[("read", {"path": "config.toml"})]),
    Reply(tool_calls=[("bash", {"command": "exit 3"})]),
    Reply(text="There is no config.toml yet."),
]


@pytest.fixture
def make(harness):
    """``await make(script, settings, window)`` -> (harness, provider): the built-ins and
    pi-compact-notes over a session file; a summary asked of the model fails the test."""
    async def make(script, settings=None, window=128_000):
        data = {"compaction": {"keepRecentTokens": 1}, **(settings or {})}
        made = await harness(pi_compact_notes, script=script, router=refuse_summaries, builtins=True,
                             settings=Settings(data), context_window=window)
        return made, harness.provider
    return make


def file_lines(harness):
    return [json.loads(line) for line in harness.session.file.read_text().splitlines()]


def test_manual_compaction_writes_notes_without_asking_the_model(make):
    async def scenario():
        harness, provider = await make([*FIRST_WORK, *SECOND_WORK, Reply(text="Tests next."),
                                                  Reply(text="Carrying on.")])
        await harness.prompt("Write a parser module")
        await harness.prompt("Read the config\nand check it")
        await harness.prompt("Now the tests")
        before = len(provider.requests)
        result = await harness.compact("keep the file names")
        asked = len(provider.requests) - before
        await harness.prompt("go on")
        return harness, provider, result, asked

    harness, provider, result, asked = run(scenario())
    assert asked == 0
    summary = result.summary
    assert summary.startswith("# Session notes\n\nWritten by pi-compact-notes from ")
    assert "Focus asked for: keep the file names" in summary
    assert "## User requests\n- Write a parser module\n- Read the config and check it\n- Now the tests" in summary
    assert "## Commands run\n- `python3 parser.py`\n- `exit 3` (failed)" in summary
    assert "## Tool calls\nbash ×2, read ×1, write ×1" in summary
    assert "## Problems\n- read: " in summary and "- bash: " in summary
    assert "## Where it stood\nThere is no config.toml yet." in summary
    assert summary.endswith("<read-files>\nconfig.toml\n</read-files>\n\n"
                            "<modified-files>\nparser.py\n</modified-files>")

    entry = [l for l in file_lines(harness) if l["type"] == "compaction"]
    assert len(entry) == 1 and entry[0]["fromHook"] is True
    assert entry[0]["summary"] == summary and entry[0]["firstKeptEntryId"] == result.first_kept_entry_id
    assert entry[0]["details"]["generator"] == "pi-compact-notes"
    assert entry[0]["details"]["modifiedFiles"] == ["parser.py"]

    # The rebuilt context starts with the notes (after pi 1.6's system message, which
    # compaction keeps), then what was kept; the model sees them.
    conversation = [m for m in harness.messages if m.role != "system"]
    assert isinstance(conversation[0], CompactionSummaryMessage)
    assert conversation[0].summary == summary
    first_sent = text_of(provider.requests[-1].messages[0].content)
    assert "condensed into the summary below" in first_sent and "# Session notes" in first_sent
    sent_users = [text_of(m.content) for m in provider.requests[-1].messages if isinstance(m, UserMessage)]
    assert "Write a parser module" not in sent_users


def test_a_second_compaction_carries_the_first_notes_forward_without_nesting_them(make):
    async def scenario():
        harness, _ = await make([*FIRST_WORK, Reply(text="a"), *SECOND_WORK, Reply(text="b")])
        await harness.prompt("Write a parser module")
        await harness.prompt("first break")
        await harness.compact()
        await harness.prompt("Read the config")
        await harness.prompt("second break")
        return await harness.compact()

    second = run(scenario())
    assert "## Earlier summary" not in second.summary and second.summary.count("# Session notes") == 1
    assert "- Write a parser module\n- first break\n- Read the config" in second.summary
    assert "- `python3 parser.py`\n- `exit 3` (failed)" in second.summary
    assert second.details["readFiles"] == ["config.toml"] and second.details["modifiedFiles"] == ["parser.py"]


def test_the_threshold_compacts_mid_run_with_notes_and_the_run_goes_on(make):
    script = [Reply(tool_calls=[("bash", {"command": f"seq 1 400 # {i}"})]) for i in range(4)]
    script.append(Reply(text="counted"))

    async def scenario():
        harness, provider = await make(script, window=1200,
                                       settings={"compaction": {"reserveTokens": 400, "keepRecentTokens": 300}})
        seen = []
        harness.subscribe(lambda e: e.type == "compaction_end" and seen.append(e))
        await harness.prompt("count a lot")
        return harness, seen

    harness, seen = run(scenario())
    assert harness.messages[-1].text == "counted"
    assert seen and seen[0].reason == "threshold" and seen[0].result is not None
    assert "- `seq 1 400 # 0`" in seen[0].result.summary


def test_disabled_in_settings_the_built_in_summariser_runs_instead(harness):
    async def scenario():
        made = await harness(
            pi_compact_notes, script=[Reply(text="done"), Reply(text="A MODEL SUMMARY")], builtins=True,
            session="memory",
            settings=Settings({"compaction": {"keepRecentTokens": 1}, "compactNotes": {"enabled": False}}))
        await made.prompt("hello")
        return await made.compact(), made

    result, harness = run(scenario())
    assert "A MODEL SUMMARY" in result.summary and "Session notes" not in result.summary
    assert not harness.session.path()[-1].from_hook


def test_nothing_to_compact_gives_no_entry(make):
    async def scenario():
        harness, _ = await make([])
        return await harness.compact(), harness

    result, harness = run(scenario())
    assert result is None
    assert not any(e.type == "compaction" for e in harness.session.entries)


def test_limits_keep_the_newest_and_say_how_many_were_left_out():
    notes = Notes(requests=[f"request {i}" for i in range(12)], commands=[f"`c{i}`" for i in range(3)])
    limits = Limits.from_settings({"maxRequests": 2, "maxCommands": 0, "maxProblems": "x"})
    text = notes.render(limits, previous_summary="an LLM summary", instructions=None)
    assert "## User requests\n- (10 earlier requests not shown)\n- request 10\n- request 11" in text
    assert "## Commands run\n- (3 earlier commands not shown)\n\n" in text
    assert text.endswith("## Earlier summary\nan LLM summary")
    assert limits.problems == 5
    assert notes.details(limits)["requests"] == ["request 10", "request 11"]
    assert notes.details(limits)["commands"] == []


def test_loading_the_plugin_imports_nothing_heavy():
    assert_light_import("pi_compact_notes")


def test_the_plugin_uses_only_the_public_event_not_the_built_in_compaction():
    from pathlib import Path

    source = "".join(p.read_text() for p in Path(pi_compact_notes.__file__).parent.glob("*.py"))
    assert "pi_plugins" not in source
