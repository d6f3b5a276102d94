"""pi-todo through a real harness: the scripted model calls the tool, the list is kept in
custom entries of a session file, and it follows the branch through /tree and resume."""

import asyncio
import json

import pi_todo
import pytest

from pi_core import CustomEntry, MessageEntry, Session, load_plugins
from pi_core.testing import RecordingUI, Reply, assert_light_import, run_command


def run(coro):
    return asyncio.run(coro)


@pytest.fixture
def make(harness):
    """``await make(script, session=..., ui=...)`` -> (harness, provider), with pi-todo loaded."""
    async def make(script, session="file", ui=None):
        made = await harness(pi_todo, script=script, session=session, ui=ui or RecordingUI())
        return made, harness.provider
    return make


def todo(action, **args):
    return ("todo", {"action": action, **args})


async def command(harness, name, args=""):
    return await run_command(harness, f"/{name} {args}".rstrip())


def tool_results(harness):
    return [m for m in harness.messages if m.role == "toolResult"]


def test_the_model_adds_and_completes_items_and_each_change_is_a_custom_entry_in_the_file(make):
    script = [
        Reply(tool_calls=[todo("add", text="write the parser"), todo("add", text="test it")]),
        Reply(tool_calls=[todo("complete", id=1)]),
        Reply(text="one down"),
    ]

    async def scenario():
        harness, provider = await make(script)
        await harness.prompt("plan the parser work")
        shown = await command(harness, "todos")
        await harness.close()
        return harness, provider, shown

    harness, provider, shown = run(scenario())
    assert shown == "1/2 done\n[x] #1 write the parser\n[ ] #2 test it"
    assert "todo" in provider.payloads[0]["tools"]
    last = tool_results(harness)[-1]
    assert not last.is_error and "Completed #1." in last.content[0].text
    lines = [json.loads(l) for l in harness.session.file.read_text().splitlines()]
    custom = [l for l in lines if l["type"] == "custom"]
    assert [c["customType"] for c in custom] == ["pi-todo"] * 3
    assert custom[-1]["data"] == {"todos": [{"id": 1, "text": "write the parser", "done": True},
                                            {"id": 2, "text": "test it", "done": False}], "nextId": 3}
    # Custom entries never reach the model.
    assert all("pi-todo" not in json.dumps(str(m)) for m in provider.requests[-1].messages)


def test_navigating_back_in_the_tree_brings_back_the_earlier_list_and_forward_the_later(make):
    script = [
        Reply(tool_calls=[todo("add", text="first")]), Reply(text="added first"),
        Reply(tool_calls=[todo("add", text="second"), todo("complete", id=1)]), Reply(text="more"),
        Reply(tool_calls=[todo("add", text="other branch")]), Reply(text="branched"),
    ]

    async def scenario():
        harness, _ = await make(script)
        await harness.prompt("start a list")
        early_leaf = harness.session.leaf_id  # the answer "added first"
        await harness.prompt("extend it")
        late_leaf = harness.session.leaf_id
        seen = {"late": await command(harness, "todos")}
        assert await harness.navigate_tree(early_leaf)
        seen["early"] = await command(harness, "todos")
        # A new prompt from the earlier point grows a second branch from the earlier list.
        await harness.prompt("go another way")
        seen["branch"] = await command(harness, "todos")
        assert await harness.navigate_tree(late_leaf)
        seen["back to late"] = await command(harness, "todos")
        return seen

    seen = run(scenario())
    assert seen["late"] == "1/2 done\n[x] #1 first\n[ ] #2 second"
    assert seen["early"] == "0/1 done\n[ ] #1 first"
    assert seen["branch"] == "0/2 done\n[ ] #1 first\n[ ] #2 other branch"
    assert seen["back to late"] == seen["late"]


def test_navigating_to_before_the_first_item_empties_the_list(make):
    async def scenario():
        harness, _ = await make([Reply(tool_calls=[todo("add", text="x")]), Reply(text="ok")])
        await harness.prompt("add x")
        first_user = next(e.id for e in harness.session.path()
                          if isinstance(e, MessageEntry) and e.message.role == "user")
        await harness.navigate_tree(first_user)
        return await command(harness, "todos")

    assert run(scenario()) == "No todos."


def test_a_resumed_session_has_its_list_back(make):
    async def first():
        harness, _ = await make([Reply(tool_calls=[todo("add", text="survive a restart")]),
                                           Reply(text="noted")])
        await harness.prompt("remember this")
        await harness.close()
        return harness.session.file

    path = run(first())

    async def second():
        harness, _ = await make([Reply(tool_calls=[todo("list")]), Reply(text="listed")],
                                session=Session.open(path))
        await harness.prompt("what is on the list?")
        return tool_results(harness)[-1]

    listed = run(second())
    assert listed.content[0].text == "0/1 done\n[ ] #1 survive a restart"
    assert listed.details["nextId"] == 2


def test_bad_requests_are_errors_the_model_can_read_and_change_nothing(make):
    script = [Reply(tool_calls=[todo("add", text="keep me"), todo("complete", id=7),
                                todo("add"), todo("remove"), todo("explode")]),
              Reply(text="sorry")]

    async def scenario():
        harness, _ = await make(script)
        await harness.prompt("break it")
        return harness

    harness = run(scenario())
    results = tool_results(harness)
    assert [r.is_error for r in results] == [False, True, True, True, True]
    assert "there is no item #7 (items: #1)" in results[1].content[0].text
    assert "add needs a non-empty text" in results[2].content[0].text
    assert "remove needs the id" in results[3].content[0].text
    assert "Validation failed" in results[4].content[0].text  # not in the enum
    entries = [e for e in harness.session.entries if isinstance(e, CustomEntry)]
    assert len(entries) == 1  # only the successful add wrote anything


def test_remove_reopen_and_clear_keep_numbers_unique(make):
    script = [Reply(tool_calls=[todo("add", text="a"), todo("add", text="b"), todo("complete", id=2),
                                todo("reopen", id=2), todo("remove", id=1), todo("clear"),
                                todo("add", text="c")]),
              Reply(text="done")]

    async def scenario():
        harness, _ = await make(script)
        await harness.prompt("shuffle")
        return tool_results(harness)

    results = run(scenario())
    assert [r.is_error for r in results] == [False] * 7
    assert results[3].details["todos"] == [{"id": 1, "text": "a", "done": False},
                                           {"id": 2, "text": "b", "done": False}]
    assert results[-1].details == {"todos": [{"id": 3, "text": "c", "done": False}], "nextId": 4}


def test_the_todos_command_clears_and_rejects_unknown_arguments(make):
    ui = RecordingUI()

    async def scenario():
        harness, _ = await make([Reply(tool_calls=[todo("add", text="a")]), Reply(text="ok")], ui=ui)
        await harness.prompt("add")
        usage = await command(harness, "todos", "frobnicate")
        cleared = await command(harness, "todos", "clear")
        return usage, cleared, await command(harness, "todos"), harness

    usage, cleared, after, harness = run(scenario())
    assert usage == "Usage: /todos [clear]" and cleared == "Todo list cleared." and after == "No todos."
    assert ui.messages() == [usage, cleared, after]
    assert harness.session.path()[-1].data == {"todos": [], "nextId": 2}


def test_malformed_entries_are_skipped_not_fatal():
    data = {"todos": [{"id": 1, "text": "ok"}, {"id": "x"}, "junk"], "nextId": "?"}
    todos = pi_todo.TodoList.from_data(data)
    assert [i.text for i in todos.items] == ["ok"] and todos.next_id == 2
    assert pi_todo.TodoList.from_data(None).items == []


def test_the_installed_package_is_found_through_its_entry_point(tmp_path):
    plugins = load_plugins(cwd=tmp_path, agent_dir=tmp_path / "agent")
    found = [i for i in plugins.infos if i.distribution == "pi-todo"]
    assert [(i.name, i.source, i.location) for i in found] == [("todo", "entry point", "pi_todo")]
    assert {"register_tools", "register_commands", "session_start", "session_tree"} <= set(
        plugins.hooks_of("todo"))


def test_loading_the_plugin_imports_nothing_heavy():
    assert_light_import("pi_todo")
