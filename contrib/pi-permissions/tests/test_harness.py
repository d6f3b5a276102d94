"""pi-permissions in a real harness with the built-in tools: the scripted model calls
bash, read and write in a temp project; a fake UI answers the dialogs."""

import asyncio

import pi_permissions
import pytest

from pi_core import Settings, text_of
from pi_core.testing import RecordingUI, Reply, assert_light_import, run_command


def run(coro):
    return asyncio.run(coro)


def confirm_only(answers):
    """A UI that has ``confirm`` but no ``select`` dialog."""
    ui = RecordingUI(confirms=answers)
    ui.select = None
    return ui


def bash(command):
    return ("bash", {"command": command})


@pytest.fixture
def make(harness):
    """``await make(script, ui, rules, project)`` -> (harness, provider, project folder), with
    the built-in tools, pi-permissions and those global and project rules."""
    async def make(script, ui, rules=None, project=None):
        settings = Settings({"permissions": rules} if rules else {},
                            {"permissions": project} if project else {})
        made = await harness(pi_permissions, script=script, builtins=True, settings=settings,
                             ui=ui, session="memory")
        return made, harness.provider, harness.work
    return make


def results(harness):
    return [m for m in harness.messages if m.role == "toolResult"]


def test_allow_for_the_session_runs_the_same_command_again_without_asking(make):
    ui = RecordingUI(selects=["Allow bash `echo one >> log`", "Deny and tell"], inputs=["use the logger instead"])
    script = [Reply(tool_calls=[bash("echo one >> log")]), Reply(tool_calls=[bash("echo one >> log")]),
              Reply(tool_calls=[bash("echo two >> log")]), Reply(text="ok")]

    async def scenario():
        harness, provider, work = await make(script, ui)
        await harness.prompt("log things")
        return harness, provider, work

    harness, provider, work = run(scenario())
    assert (work / "log").read_text() == "one\none\n"
    kinds = [d.kind for d in ui.dialogs]
    assert kinds == ["select", "select", "input"]  # the second "echo one" was not asked about
    title, options = ui.dialogs[0].title, ui.dialogs[0].detail
    assert title == "Allow bash: echo one >> log?"
    assert options == ["Allow once", "Allow bash `echo one >> log` for this session",
                       "Allow every bash call for this session", "Deny", "Deny and tell the model why…"]
    denied = results(harness)[-1]
    assert denied.is_error
    assert text_of(denied.content) == "The user denied this bash call. They said: use the logger instead"
    # The model reads the reason in its next request.
    assert "use the logger instead" in text_of(provider.requests[-1].messages[-1].content)


def test_allow_every_call_of_a_tool_and_deny_rules_still_win(make):
    ui = RecordingUI(selects=["Allow every bash call"])
    rules = {"deny": [{"rule": "bash(rm *)", "reason": "deleting is done by hand"}]}
    script = [Reply(tool_calls=[bash("touch a")]), Reply(tool_calls=[bash("touch b"), bash("rm a")]),
              Reply(text="ok")]

    async def scenario():
        harness, _, work = await make(script, ui, rules)
        await harness.prompt("files")
        return harness, work

    harness, work = run(scenario())
    assert len(ui.dialogs) == 1
    assert (work / "a").exists() and (work / "b").exists()
    blocked = results(harness)[-1]
    assert blocked.is_error and "Permission denied by the rule deny bash(rm *) (global settings). " \
                                 "Reason: deleting is done by hand" in text_of(blocked.content)


def test_a_denied_read_never_shows_the_file_to_the_model(make):
    ui = RecordingUI()
    script = [Reply(tool_calls=[("read", {"path": ".env"}), ("read", {"path": "notes.txt"})]), Reply(text="ok")]

    async def scenario():
        harness, provider, work = await make(script, ui, project={"deny": ["read(.env*)"]})
        (work / ".env").write_text("TOKEN=hunter2")
        (work / "notes.txt").write_text("public")
        await harness.prompt("read both")
        return harness, provider

    harness, provider = run(scenario())
    env, notes = results(harness)
    assert env.is_error and "deny read(.env*) (project settings)" in text_of(env.content)
    assert text_of(notes.content).startswith("public")
    assert ui.dialogs == []  # read is allowed by default, deny needs no question
    assert all("hunter2" not in text_of(m.content) for m in provider.requests[-1].messages
               if m.role != "assistant")


def test_without_a_ui_an_ask_is_a_denial_that_says_how_to_allow_it(make):
    script = [Reply(tool_calls=[("write", {"path": "x.txt", "content": "hi"})]), Reply(text="ok")]

    async def scenario():
        harness, _, work = await make(script, ui=None)  # NullUI
        await harness.prompt("write")
        return harness, work

    harness, work = run(scenario())
    assert not (work / "x.txt").exists()
    text = text_of(results(harness)[0].content)
    assert "needs the user's approval and there is no one to ask" in text and "'permissions.allow'" in text


def test_a_ui_with_only_confirm_allows_once_per_yes(make):
    ui = confirm_only([True, False])
    script = [Reply(tool_calls=[bash("echo a >> f")]), Reply(tool_calls=[bash("echo a >> f")]), Reply(text="ok")]

    async def scenario():
        harness, _, work = await make(script, ui)
        await harness.prompt("go")
        return harness, work

    harness, work = run(scenario())
    assert [d.title for d in ui.dialogs] == ["Allow bash: echo a >> f?"] * 2
    assert (work / "f").read_text() == "a\n"
    assert results(harness)[-1].is_error


def test_a_dismissed_dialog_denies_and_a_new_session_forgets_the_answers(make):
    ui = RecordingUI(selects=["Allow every bash call", None, "Allow once"])
    script = [Reply(tool_calls=[bash("true")]), Reply(text="1"),
              Reply(tool_calls=[bash("true")]), Reply(text="2"),
              Reply(tool_calls=[bash("true")]), Reply(text="3")]

    async def scenario():
        harness, _, _ = await make(script, ui)
        await harness.prompt("one")
        await harness.prompt("two")  # remembered: no dialog
        await harness.start(reason="new")  # session_start: answers forgotten
        await harness.prompt("three")  # dismissed
        return harness

    harness = run(scenario())
    assert len(ui.dialogs) == 2
    assert [r.is_error for r in results(harness)] == [False, False, True]
    assert "The user denied this bash call. Do not retry it" in text_of(results(harness)[-1].content)


def test_the_permissions_command_shows_rules_and_answers_and_resets_them(make):
    ui = RecordingUI(selects=["Allow bash `ls`"])
    rules = {"deny": ["bash(rm *)"], "default": "ask", "allow": [{"rule": "bash(git*)"}, "nonsense(("]}

    async def scenario():
        harness, _, _ = await make([Reply(tool_calls=[bash("ls")]), Reply(text="ok")], ui, rules)
        await harness.prompt("list")
        return [await run_command(harness, "/permissions"), await run_command(harness, "/permissions reset"),
                await run_command(harness, "/permissions")]

    shown, reset, after = run(scenario())
    assert shown.splitlines()[:3] == ["default: ask", "allow bash(git*) (global)", "deny bash(rm *) (global)"]
    assert shown.splitlines()[-1] == "allowed for this session: bash `ls`"
    assert reset == "Forgot the answers given in this session."
    assert "allowed for this session" not in after
    warnings = ui.warnings()
    assert warnings == ["pi-permissions: global settings: permissions.allow: cannot read the rule "
                        "'nonsense((': write 'tool' or 'tool(pattern)' (ignored)"]


def test_loading_the_plugin_imports_nothing_heavy():
    assert_light_import("pi_permissions")
