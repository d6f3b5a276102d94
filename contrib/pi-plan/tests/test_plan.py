"""pi-plan through a real harness with the built-in tools: what the model is offered,
what it may run, approval by command and by dialog, resume and tree navigation."""

import asyncio
import json

import pi_plan
import pytest
from pi_plan.readonly import is_read_only_command

from pi_core import CustomMessage, Session, text_of
from pi_core.testing import RecordingUI, Reply, assert_light_import

PLAN_ANSWER = ("I looked around.\n\n**Plan:**\n1. Add `parse()` to parser.py\n2. **Write tests** for it\n"
               "3) Run the tests\n\nShall I go ahead?")


def run(coro):
    return asyncio.run(coro)


@pytest.fixture
def make(harness):
    """``await make(script, ui=..., session=...)`` -> (harness, provider, project folder), with
    the built-in tools and pi-plan loaded."""
    async def make(script, ui=None, session="file"):
        made = await harness(pi_plan, script=script, builtins=True, ui=ui, session=session)
        return made, harness.provider, harness.work
    return make


def asked(ui):
    return [(d.title, d.detail) for d in ui.dialogs if d.kind == "confirm"]


async def plan(harness, args=""):
    commands = await harness.plugins.call("register_commands", ctx=harness.ctx)
    return await {c.name: c for c in commands}["plan"].handler(args, harness.ctx)


def results(harness):
    return [m for m in harness.messages if m.role == "toolResult"]


def test_in_plan_mode_the_model_is_offered_and_may_run_only_read_only_tools(make):
    script = [Reply(tool_calls=[("write", {"path": "x.py", "content": "boom"}), ("bash", {"command": "ls"}),
                                ("bash", {"command": "echo hi > x.py"}), ("read", {"path": "notes.md"})]),
              Reply(text=PLAN_ANSWER)]

    async def scenario():
        harness, provider, work = await make(script, ui=RecordingUI(confirms=[False]))
        (work / "notes.md").write_text("the notes")
        before = harness.ctx.get_active_tools()
        said = await plan(harness)
        await harness.prompt("how would you add a parser?")
        return harness, provider, work, before, said

    harness, provider, work, before, said = run(scenario())
    assert set(before) == {"read", "bash", "edit", "write"}
    assert said.startswith("Plan mode on: the model can only read (read, grep, find, ls, bash)")
    assert sorted(provider.payloads[0]["tools"]) == ["bash", "find", "grep", "ls", "read"]
    assert "# Plan mode" in provider.requests[0].system_prompt
    write, ls, redirect, read = results(harness)
    assert write.is_error and not (work / "x.py").exists()
    assert not ls.is_error and "notes.md" in text_of(ls.content)
    assert redirect.is_error and "Plan mode: only commands that read" in text_of(redirect.content)
    assert text_of(read.content).startswith("the notes")


def test_the_before_tool_call_guard_holds_even_if_the_tools_are_switched_back_on(make):
    script = [Reply(tool_calls=[("write", {"path": "x.py", "content": "boom"})]), Reply(text="ok")]

    async def scenario():
        harness, _, work = await make(script)
        await plan(harness)
        harness.ctx.set_active_tools(["read", "write"])  # another plugin, or the user
        await harness.prompt("write it anyway")
        return harness, work

    harness, work = run(scenario())
    blocked = results(harness)[0]
    assert blocked.is_error and not (work / "x.py").exists()
    assert text_of(blocked.content).startswith("Plan mode: write is not available until the user approves")


def test_approving_by_command_restores_the_tools_and_tells_the_model_the_steps(make):
    script = [Reply(text=PLAN_ANSWER),
              Reply(tool_calls=[("write", {"path": "parser.py", "content": "def parse(): pass\n"})]),
              Reply(text="Step 1 done.")]

    async def scenario():
        harness, provider, work = await make(script)  # NullUI: no dialog, approve by command
        await plan(harness)
        await harness.prompt("plan the parser")
        shown = await plan(harness)
        approved = await plan(harness, "approve")
        await harness.prompt("go")
        return harness, provider, work, shown, approved

    harness, provider, work, shown, approved = run(scenario())
    assert shown == ("Plan mode is on. The plan:\n1. Add `parse()` to parser.py\n2. Write tests for it\n"
                     "3. Run the tests\n/plan approve approves it, /plan off leaves.")
    assert approved.startswith("Plan approved")
    assert set(provider.payloads[-1]["tools"]) == {"read", "bash", "edit", "write"}
    assert "# Plan mode" not in provider.requests[-1].system_prompt
    assert (work / "parser.py").read_text() == "def parse(): pass\n"
    sent = [text_of(m.content) for m in provider.requests[1].messages]
    assert any(t.startswith("The user approved the plan.") and "1. Add `parse()` to parser.py" in t for t in sent)
    lines = [json.loads(l) for l in harness.session.file.read_text().splitlines()]
    states = [l["data"] for l in lines if l["type"] == "custom" and l["customType"] == "pi-plan"]
    assert [s["planning"] for s in states] == [True, True, False]
    assert [l["customType"] for l in lines if l["type"] == "custom_message"] == ["pi-plan"]


def test_a_plan_in_the_answer_is_offered_for_approval_through_the_ui(make):
    ui = RecordingUI(confirms=[True])

    async def scenario():
        harness, provider, _ = await make([Reply(text=PLAN_ANSWER), Reply(text="on it")], ui=ui)
        await plan(harness)
        await harness.prompt("plan it")
        tools_after = harness.ctx.get_active_tools()
        await harness.prompt("go")
        return harness, provider, tools_after

    harness, provider, tools_after = run(scenario())
    assert asked(ui) == [("Approve the plan?", "1. Add `parse()` to parser.py\n2. Write tests for it\n3. Run the tests")]
    assert set(tools_after) == {"read", "bash", "edit", "write"}
    conversation = [m for m in harness.messages if m.role != "system"]  # without pi 1.6's system message
    assert isinstance(conversation[2], CustomMessage) and conversation[2].details["approved"]


def test_an_answer_without_a_plan_asks_nothing_and_a_declined_plan_stays_in_plan_mode(make):
    ui = RecordingUI(confirms=[False])

    async def scenario():
        harness, _, _ = await make([Reply(text="Which file?"), Reply(text=PLAN_ANSWER)], ui=ui)
        await plan(harness)
        await harness.prompt("plan it")
        await harness.prompt("parser.py")
        return harness

    harness = run(scenario())
    assert len(asked(ui)) == 1
    assert sorted(harness.ctx.get_active_tools()) == ["bash", "find", "grep", "ls", "read"]


def test_plan_mode_survives_resume_and_approval_after_it_restores_the_tools(make):
    async def first():
        harness, _, _ = await make([Reply(text=PLAN_ANSWER)])
        await plan(harness)
        await harness.prompt("plan it")
        await harness.close()
        return harness.session.file

    path = run(first())

    async def second():
        harness, provider, _ = await make([Reply(text="still planning")], session=Session.open(path))
        await harness.prompt("anything else?")
        status = await plan(harness, "status")
        await plan(harness, "approve")
        return harness, provider, status

    harness, provider, status = run(second())
    assert sorted(provider.payloads[0]["tools"]) == ["bash", "find", "grep", "ls", "read"]
    assert status.startswith("Plan mode is on. The plan:\n1. Add `parse()` to parser.py")
    assert set(harness.ctx.get_active_tools()) == {"read", "bash", "edit", "write"}


def test_moving_in_the_tree_to_before_plan_mode_restores_the_tools(make):
    async def scenario():
        harness, _, _ = await make([Reply(text="hello"), Reply(text=PLAN_ANSWER)])
        await harness.prompt("hi")
        before_plan = harness.session.leaf_id
        await plan(harness)
        await harness.prompt("plan it")
        planning = sorted(harness.ctx.get_active_tools())
        planning_leaf = harness.session.leaf_id
        await harness.navigate_tree(before_plan)
        back = sorted(harness.ctx.get_active_tools())
        await harness.navigate_tree(planning_leaf)
        return planning, back, sorted(harness.ctx.get_active_tools())

    planning, back, again = run(scenario())
    assert planning == again == ["bash", "find", "grep", "ls", "read"]
    assert back == ["bash", "edit", "read", "write"]


def test_plan_off_leaves_without_telling_the_model_and_usage_is_explained(make):
    async def scenario():
        harness, _, _ = await make([])
        said = [await plan(harness, "off"), await plan(harness, "approve"), await plan(harness),
                await plan(harness), await plan(harness, "off"), await plan(harness, "dance")]
        return harness, said

    harness, said = run(scenario())
    assert said == ["Plan mode is off.", "Plan mode is off; nothing to approve.",
                    "Plan mode on: the model can only read (read, grep, find, ls, bash) until you approve its plan.",
                    "Plan mode is on; no plan yet. /plan approve approves, /plan off leaves.",
                    "Plan mode off.", "Usage: /plan [approve | off | status]"]
    assert not any(isinstance(m, CustomMessage) for m in harness.messages)
    assert sorted(harness.ctx.get_active_tools()) == ["bash", "edit", "read", "write"]


def test_the_plan_tools_setting_narrows_plan_mode(make, harness, monkeypatch):
    from pi_core.testing import trust_project

    (harness.work / ".pi").mkdir(parents=True)
    (harness.work / ".pi" / "settings.json").write_text('{"plan": {"tools": ["read", "ls"]}}')
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(harness.tmp_path / "agent"))
    trust_project(harness.tmp_path / "agent", harness.work)  # project settings need trust
    script = [Reply(tool_calls=[("bash", {"command": "ls"})]), Reply(text="ok")]

    async def scenario():
        harness, provider, _ = await make(script)
        await plan(harness)
        harness.ctx.set_active_tools(["read", "ls", "bash"])
        await harness.prompt("look")
        return harness

    harness = run(scenario())
    assert "bash is not available" in text_of(results(harness)[0].content)


@pytest.mark.parametrize("command", [
    "ls -la", "cat a.txt | grep x | wc -l", "git status && git log --oneline -5", "git diff HEAD~1",
    "rg TODO src 2>/dev/null", "find . -name '*.py'", "FOO=1 ls", "git branch -a", "make -n 2>&1 | head",
])
def test_read_only_commands(command):
    assert is_read_only_command(command) == (not command.startswith("make"))


@pytest.mark.parametrize("command", [
    "rm -rf build", "echo x > file", "cat a >> b", "ls; touch x", "git commit -m x", "git push",
    "git branch -D main", "git branch new", "find . -delete", "find . -exec rm {} ;", "sort -o out in",
    "ls $(rm x)", "ls `rm x`", "env rm x", "sleep 10 &", "python3 -c 'print(1)'", "sed -i s/a/b/ f",
    "npm install", "pip install x", "tee out", "ls &> out", "echo 'unterminated",
])
def test_commands_that_write_or_run_things_are_not_read_only(command):
    assert not is_read_only_command(command)


def test_loading_the_plugin_imports_nothing_heavy():
    assert_light_import("pi_plan")
