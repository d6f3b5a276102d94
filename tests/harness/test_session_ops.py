"""Harness operations the RPC and interactive modes share: new, switch, fork, clone,
the user's shell, model and thinking cycling, stats, commands."""

import asyncio
import json

from pi_core import hookimpl
from pi_core.protocol.commands import Command
from pi_core.protocol.messages import BashExecutionMessage, text_of
from pi_core.testing import Reply, scripted_model

from support.agents import run
from support.gates import Gate

from support.harnesses import lines, make


def test_new_session_starts_empty_in_a_new_file_and_a_plugin_can_refuse(tmp_path):
    harness, provider, _ = make(tmp_path, [Reply(text="a"), Reply(text="b")])
    run(harness.prompt("first"))
    first_file = harness.session.file
    assert run(harness.new_session())
    assert harness.messages == [] and harness.session.file != first_file
    run(harness.prompt("second"))
    assert [m.role for m in provider.requests[-1].messages] == ["user"]
    assert len(list((tmp_path / "sessions").glob("*.jsonl"))) == 2

    class Keep:
        @hookimpl
        def session_before_switch(self, event):
            return {"cancel": True} if event.reason == "new" else None

    harness2, *_ = make(tmp_path / "b", [Reply(text="a")], Keep())
    run(harness2.prompt("x"))
    file = harness2.session.file
    assert not run(harness2.new_session()) and harness2.session.file == file


def test_switch_session_resumes_another_file(tmp_path):
    harness, provider, _ = make(tmp_path, [Reply(text="one"), Reply(text="two"), Reply(text="three")])
    run(harness.prompt("in the first session"))
    first = harness.session.file
    run(harness.new_session())
    run(harness.prompt("in the second"))
    assert run(harness.switch_session(str(first)))
    run(harness.prompt("back"))
    users = [text_of(m.content) for m in provider.requests[-1].messages if m.role == "user"]
    assert users == ["in the first session", "back"]


def test_fork_starts_a_new_session_before_the_chosen_user_message(tmp_path):
    harness, provider, _ = make(tmp_path, [Reply(text="a1"), Reply(text="a2"), Reply(text="a2 again")])
    run(harness.prompt("question one"))
    run(harness.prompt("question two"))
    points = harness.fork_messages()
    assert [text for _, text in points] == ["question one", "question two"]
    source = harness.session.file
    text, cancelled = run(harness.fork(points[1][0]))
    assert (text, cancelled) == ("question two", False)
    assert [m.text for m in harness.messages if m.role == "assistant"] == ["a1"]
    run(harness.prompt("question two, rephrased"))
    header = lines(harness.session)[0]
    assert header["parentSession"] == str(source) and harness.session.file != source


def test_clone_copies_the_branch_into_a_new_session(tmp_path):
    harness, *_ = make(tmp_path, [Reply(text="a")])
    run(harness.prompt("hello"))
    before = [m.role for m in harness.messages]
    source = harness.session.file
    assert run(harness.clone())
    assert harness.session.file != source and [m.role for m in harness.messages] == before


def test_user_bash_joins_the_context_unless_excluded_and_plugins_can_answer(tmp_path):
    harness, provider, _ = make(tmp_path, [Reply(text="seen")])
    shown = run(harness.run_bash("echo visible; exit 3"))
    hidden = run(harness.run_bash("echo secret", exclude_from_context=True))
    assert shown.output == "visible\n" and shown.exit_code == 3 and not shown.cancelled
    assert hidden.exclude_from_context
    run(harness.prompt("what happened?"))
    sent = json.dumps([text_of(m.content) for m in provider.requests[0].messages if m.role == "user"])
    assert "visible" in sent and "secret" not in sent
    kinds = [l.get("message", {}).get("role") for l in lines(harness.session)]
    assert kinds.count("bashExecution") == 2  # both are kept in the file

    class Fake:
        @hookimpl
        def user_bash(self, event):
            return BashExecutionMessage(command=event.command, output="from plugin\n", exit_code=0)

    harness2, *_ = make(tmp_path / "b", [Reply(text="x")], Fake())
    assert run(harness2.run_bash("rm -rf /")).output == "from plugin\n"


def test_user_bash_can_be_aborted_and_keeps_long_output_in_a_file(tmp_path):
    harness, *_ = make(tmp_path, [])
    started = Gate(tmp_path / "started")

    async def scenario():
        task = asyncio.create_task(harness.run_bash("echo started; " + started.tells("sleep 30")))
        await asyncio.to_thread(started.wait)
        harness.abort_bash()
        return await asyncio.wait_for(task, 5)

    message = run(scenario())
    assert message.cancelled and message.exit_code is None
    assert message.output == "started\n"  # what it printed before the abort is kept
    long = run(harness.run_bash("seq 1 5000"))
    # the bash tool's truncation rule: 2,000 lines, the empty one after the last newline counted
    assert long.truncated and long.output.endswith("5000\n") and len(long.output.split("\n")) == 2000
    with open(long.full_output_path) as full:
        assert full.read().startswith("1\n2\n")


def test_models_and_thinking_levels_cycle(tmp_path):
    harness, *_ = make(tmp_path, [])
    a, b = scripted_model("a", reasoning=True), scripted_model("b")
    harness.scoped_models = [(a, "high"), (b, None)]
    assert run(harness.cycle_model()) == (a, "high", True)
    assert run(harness.cycle_model())[0] == b
    harness.scoped_models = []
    assert run(harness.cycle_model()) is None  # only the current model is available
    # as pi 1.6: no level saved (a switch saves none), so the current one, "off" on b, goes on
    run(harness.set_model(a))
    assert harness.thinking_level == "off" and harness.ctx.settings.get("defaultThinkingLevel") is None
    levels = [run(harness.cycle_thinking_level()) for _ in range(3)]
    assert levels == ["minimal", "low", "medium"]
    run(harness.set_model(b))
    assert run(harness.cycle_thinking_level()) is None


def test_stats_count_messages_tokens_cost_and_context_use(tmp_path):
    from pi_core.protocol.messages import Cost, Usage

    usage = Usage(input=100, output=20, total_tokens=120, cost=Cost(total=0.5))
    harness, *_ = make(tmp_path, [Reply(text="calling", tool_calls=[("dump", {"n": 1})], usage=usage),
                                  Reply(text="done", usage=usage)])
    run(harness.prompt("go"))
    stats = harness.stats()
    assert (stats["userMessages"], stats["assistantMessages"], stats["toolCalls"], stats["toolResults"]) == (1, 2, 1, 1)
    assert stats["tokens"]["input"] == 200 and stats["cost"] == 1.0
    assert stats["contextUsage"]["tokens"] == 120 and stats["sessionFile"] == str(harness.session.file)


def test_commands_come_from_the_plugins(tmp_path):
    class Commands:
        @hookimpl
        def register_commands(self):
            return [Command("hello", "Say hello")]

    harness, *_ = make(tmp_path, [], Commands())
    assert [c.name for c in run(harness.commands())] == ["hello"]


def test_a_switch_to_a_model_with_its_own_thinking_level_starts_at_that_level(tmp_path):
    harness, *_ = make(tmp_path, [])
    a, b = scripted_model("a", reasoning=True), scripted_model("b", reasoning=True)
    harness.ctx.settings.set("modelThinkingLevels", {b.key: "minimal"})  # pi 1.6's per-model level
    run(harness.set_model(a))
    run(harness.set_thinking_level("high"))
    run(harness.set_model(b))
    assert harness.thinking_level == "minimal"
    run(harness.set_model(a))  # none set for a: the level goes on as it was
    assert harness.thinking_level == "minimal"
