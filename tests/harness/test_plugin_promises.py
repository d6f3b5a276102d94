"""The plugin API's documented promises, each as a plugin author would rely on it."""

import attrs

from pi_core import Plugins, hookimpl
from pi_core.protocol.events import CompactionDecision
from pi_core.protocol.messages import AssistantMessage, TextContent, UserMessage, text_of
from pi_core.testing import Reply

from support.agents import run
from support.harnesses import SUMMARY, lines, make


def _summaries(provider):
    return [r for r in provider.requests
            if r.messages and "<conversation>" in text_of(r.messages[-1].content)]


def test_a_small_context_model_does_not_compact_an_empty_conversation(tmp_path):
    # 8192 tokens is below the default reserveTokens (16384): pi's threshold goes negative
    harness, provider, events = make(tmp_path, [Reply(text="hello")], window=8192)
    run(harness.prompt("hi"))
    assert harness.messages[-1].text == "hello"
    assert _summaries(provider) == [] and "compaction_start" not in events.types()
    assert [l["type"] for l in lines(harness.session)].count("compaction") == 0


def test_a_small_context_model_compacts_once_past_its_window_less_a_quarter(tmp_path):
    big = "word " * 1200  # about 1500 tokens a message
    script = [Reply(text=big) for _ in range(5)] + [Reply(text="still here")]
    harness, provider, events = make(tmp_path, script, window=8192,
                                     settings={"compaction": {"keepRecentTokens": 1000}})
    for i in range(6):
        run(harness.prompt(f"talk {i}"))
    assert harness.messages[-1].text == "still here"
    assert len(_summaries(provider)) >= 1
    assert "compaction" in [l["type"] for l in lines(harness.session)]


def test_user_bash_takes_pis_dict_result_and_the_real_command_never_runs(tmp_path):
    marker = tmp_path / "ran"

    class Remote:
        @hookimpl
        def user_bash(self, event):
            return {"result": {"output": f"remote: {event.command}", "exitCode": 3}}

    harness, _, _ = make(tmp_path, [], Remote())
    message = run(harness.run_bash(f"touch {marker}"))
    assert not marker.exists()
    assert message.output == f"remote: touch {marker}" and message.exit_code == 3
    assert harness.messages[-1] is message


def test_user_bash_cancel_as_a_dict_stops_the_command(tmp_path):
    marker = tmp_path / "ran"

    class Veto:
        @hookimpl
        def user_bash(self):
            return {"cancel": True}

    harness, _, _ = make(tmp_path, [], Veto())
    assert run(harness.run_bash(f"touch {marker}")) is None
    assert not marker.exists()


def test_a_malformed_user_bash_result_is_reported_by_plugin_and_the_command_runs(tmp_path):
    class Confused:
        @hookimpl
        def user_bash(self):
            return {"output": "flat"}  # not pi's shape

    harness, _, _ = make(tmp_path, [], Confused(), )
    message = run(harness.run_bash("echo real"))
    assert message.output.strip() == "real"
    [error] = [e for e in harness.plugins.errors if e.hook == "user_bash"]
    assert error.plugin.startswith("Confused") or "Confused" in error.plugin
    assert "unknown key" in str(error)


def test_a_message_end_replacement_of_the_wrong_role_is_refused_and_the_answer_kept(tmp_path):
    class Wrong:
        @hookimpl
        def message_end(self, message):
            if message.role == "assistant":
                return UserMessage(content=[TextContent("hijacked")])
            return None

    harness, _, _ = make(tmp_path, [Reply(text="the real answer")], Wrong())
    run(harness.prompt("hi"))
    assert harness.messages[-1].text == "the real answer"
    written = lines(harness.session)
    assert written[-1]["message"]["role"] == "assistant"
    [error] = [e for e in harness.plugins.errors if e.hook == "message_end"]
    assert "Wrong" in error.plugin and "'assistant'" in str(error)


def test_a_message_end_replacement_may_be_pis_json_dict(tmp_path):
    class Redact:
        @hookimpl
        def message_end(self, message):
            if message.role == "assistant":
                return {"role": "assistant", "content": [{"type": "text", "text": "[redacted]"}],
                        "api": message.api, "provider": message.provider, "model": message.model,
                        "stopReason": "stop", "timestamp": message.timestamp,
                        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                                  "totalTokens": 0, "cost": {"input": 0, "output": 0, "cacheRead": 0,
                                                             "cacheWrite": 0, "total": 0}}}
            return None

    harness, _, _ = make(tmp_path, [Reply(text="secret")], Redact())
    run(harness.prompt("hi"))
    assert isinstance(harness.messages[-1], AssistantMessage)
    assert harness.messages[-1].text == "[redacted]"
    assert lines(harness.session)[-1]["message"]["content"] == [{"type": "text", "text": "[redacted]"}]


def _long_session(tmp_path, *plugins):
    script = [Reply(text=f"answer {i} " + "word " * 200) for i in range(3)]
    harness, provider, events = make(tmp_path, script, *plugins,
                                     settings={"compaction": {"keepRecentTokens": 100}})
    for i in range(3):
        run(harness.prompt(f"question {i}"))
    return harness, provider, events


def test_a_compaction_summary_given_as_a_dict_is_used(tmp_path):
    seen = []

    class Notes:
        @hookimpl
        def session_before_compact(self, event):
            seen.append(event.preparation)
            return {"summary": f"notes on {len(event.preparation.messages_to_summarize)} messages"}

    harness, provider, _ = _long_session(tmp_path, Notes())
    result = run(harness.compact())
    plan = seen[0]
    assert result.summary == f"notes on {len(plan.messages_to_summarize)} messages"
    assert result.first_kept_entry_id == plan.first_kept_entry_id and plan.tokens_before > 0
    assert _summaries(provider) == []  # the built-in summariser never ran
    assert lines(harness.session)[-1]["type"] == "compaction"


def test_pis_compaction_dict_shape_is_read_too(tmp_path):
    class Notes:
        @hookimpl
        def session_before_compact(self, event):
            plan = event.preparation
            return {"compaction": {"summary": "pi shape", "firstKeptEntryId": plan.first_kept_entry_id,
                                   "tokensBefore": plan.tokens_before}}

    harness, _, _ = _long_session(tmp_path, Notes())
    assert run(harness.compact()).summary == "pi shape"


def test_a_malformed_compaction_result_falls_back_to_the_built_in_summariser(tmp_path):
    class Broken:
        @hookimpl
        def session_before_compact(self):
            return {"sumary": "typo"}

    harness, provider, _ = _long_session(tmp_path, Broken())
    result = run(harness.compact())
    assert result is not None and result.summary.startswith(SUMMARY)
    assert len(_summaries(provider)) >= 1
    [error] = [e for e in harness.plugins.errors if e.hook == "session_before_compact"]
    assert "Broken" in error.plugin and "'sumary'" in str(error)


def test_the_built_in_summariser_uses_exactly_the_events_plan(tmp_path):
    plans = []

    class Watch:
        @hookimpl
        def session_before_compact(self, event):
            plans.append(event.preparation)

    harness, provider, _ = _long_session(tmp_path, Watch())
    result = run(harness.compact())
    plan = plans[0]
    assert result.first_kept_entry_id == plan.first_kept_entry_id
    assert result.tokens_before == plan.tokens_before
    sent = text_of(_summaries(provider)[0].messages[-1].content)
    for message in plan.messages_to_summarize:
        assert text_of(message.content)[:40] in sent


def test_a_compaction_decision_object_with_a_dict_result_is_read(tmp_path):
    class Notes:
        @hookimpl
        def session_before_compact(self, event):
            return CompactionDecision(result={"summary": "from an object"})

    harness, _, _ = _long_session(tmp_path, Notes())
    assert run(harness.compact()).summary == "from an object"


def test_a_before_tool_call_dict_blocks_and_a_malformed_one_is_no_opinion(tmp_path):
    class Guard:
        @hookimpl
        def before_tool_call(self, event):
            if event.arguments.get("n") == 1:
                return {"block": True, "reason": "not one"}
            return {"blok": True}  # misspelled: reported, ignored

    script = [Reply(tool_calls=[("dump", {"n": 1})]), Reply(tool_calls=[("dump", {"n": 2})]),
              Reply(text="done")]
    harness, _, _ = make(tmp_path, script, Guard())
    run(harness.prompt("go"))
    results = [m for m in harness.messages if m.role == "toolResult"]
    assert results[0].is_error and text_of(results[0].content) == "not one"
    assert not results[1].is_error and "dump 2" in text_of(results[1].content)
    assert any(e.hook == "before_tool_call" and "'blok'" in str(e) for e in harness.plugins.errors)


def test_a_wrapper_hookimpl_is_reported_not_silently_listed():
    class Wrapping:
        @hookimpl(wrapper=True)
        def turn_start(self, event):
            return (yield)

        @hookimpl
        def turn_end(self, event):
            pass

    plugins = Plugins()
    assert plugins.register(Wrapping(), "wrapping") == "wrapping"
    assert plugins.hooks_of("wrapping") == ["turn_end"]
    [error] = plugins.errors
    assert error.plugin == "wrapping" and error.hook == "turn_start" and "wrapper" in str(error)


def test_dispatch_by_the_spec_returns_each_kinds_result():
    class One:
        @hookimpl
        def before_tool_call(self):
            return {"block": True, "reason": "r"}

        @hookimpl
        def input(self, event):
            return attrs.evolve(event, text=event.text + "!")

        @hookimpl
        def register_commands(self):
            from pi_core.protocol.commands import Command

            return [Command("a"), Command("b")]

        @hookimpl
        def turn_start(self):
            return "ignored"

    from pi_core.protocol.events import InputEvent

    plugins = Plugins()
    plugins.register(One(), "one")
    decision = run(plugins.call("before_tool_call", event=None, ctx=None))
    assert decision.block and decision.reason == "r"
    assert run(plugins.call("input", event=InputEvent("hi"), ctx=None)).text == "hi!"
    assert [c.name for c in run(plugins.call("register_commands", ctx=None))] == ["a", "b"]
    assert run(plugins.call("turn_start", event=None, ctx=None)) is None


def test_send_message_while_running_steers_and_display_false_is_kept(tmp_path):
    from pi_core.protocol.messages import CustomMessage

    class Nudge:
        @hookimpl
        def tool_execution_start(self, event, ctx):
            ctx.send_message(CustomMessage(custom_type="hint", content="mind the tests"),
                             deliver_as="steer", display=False)

    script = [Reply(tool_calls=[("dump", {"n": 1})]), Reply(text="done")]
    harness, provider, _ = make(tmp_path, script, Nudge())
    run(harness.prompt("go"))
    roles = [m.role for m in harness.messages]
    assert roles == ["user", "assistant", "toolResult", "custom", "assistant"]
    hint = harness.messages[3]
    assert hint.display is False and hint.content == "mind the tests"
    assert "mind the tests" in text_of(provider.requests[1].messages[-1].content)
    assert [l for l in lines(harness.session) if l["type"] == "custom_message"][0]["display"] is False


def test_a_plugin_message_while_idle_joins_the_conversation_without_a_run(tmp_path):
    from pi_core.protocol.messages import CustomMessage

    harness, provider, events = make(tmp_path, [Reply(text="hello")])
    run(harness.prompt("hi"))

    async def send_and_settle():
        harness.ctx.send_message(CustomMessage(custom_type="note", content="for later"))
        await harness.wait_for_idle()

    run(send_and_settle())
    assert harness.messages[-1].role == "custom" and len(provider.requests) == 1
    assert lines(harness.session)[-1]["type"] == "custom_message"


def test_ctx_is_the_documented_protocol():
    from pi_core import Ctx
    from pi_core.context import Context as HarnessContext

    harness_ctx_members = set(dir(HarnessContext))
    from pi_core.protocol.ctx import MEMBERS

    methods = [m for m in MEMBERS if callable(getattr(Ctx, m, None))]
    assert methods and all(m in harness_ctx_members for m in methods)


def test_fork_takes_only_before_or_at(tmp_path):
    import pytest

    harness, _, _ = make(tmp_path, [Reply(text="hello")])
    run(harness.prompt("hi"))
    first = harness.session.path()[0].id
    with pytest.raises(ValueError, match="before' or 'at"):
        run(harness.fork(first, position="after"))


class SteersFromATool:
    """Steers while the agent runs (from a tool's start) and watches the ``input`` hook."""

    def __init__(self):
        self.inputs = []

    @hookimpl
    def tool_execution_start(self, event, ctx):
        ctx.send_user_message("check the logs too", deliver_as="steer")

    @hookimpl
    def input(self, event, ctx):
        self.inputs.append((event.text, event.source))
        if event.source == "extension":
            return attrs.evolve(event, text=event.text + " (seen by input)")
        return None


def test_a_plugins_steer_during_a_run_goes_through_the_input_hooks_as_an_extension_source(tmp_path):
    plugin = SteersFromATool()
    harness, provider, _ = make(tmp_path, [Reply(tool_calls=[("dump", {"n": 1})]), Reply(text="done")], plugin)
    run(harness.prompt("dump one"))
    run(harness.wait_for_idle())
    assert plugin.inputs == [("dump one", "interactive"), ("check the logs too", "extension")]
    assert len(provider.requests) == 2
    steered = provider.requests[1].messages[-1]
    assert steered.role == "user" and text_of(steered.content) == "check the logs too (seen by input)"
    assert harness.messages[-1].text == "done"


def test_a_plugins_steer_that_its_input_hook_handles_never_reaches_the_model(tmp_path):
    class Swallows(SteersFromATool):
        @hookimpl
        def input(self, event, ctx):
            self.inputs.append((event.text, event.source))
            return attrs.evolve(event, handled=True) if event.source == "extension" else None

    plugin = Swallows()
    harness, provider, _ = make(tmp_path, [Reply(tool_calls=[("dump", {"n": 1})]), Reply(text="done")], plugin)
    run(harness.prompt("dump one"))
    run(harness.wait_for_idle())
    assert ("check the logs too", "extension") in plugin.inputs
    assert not any("check the logs" in text_of(m.content) for r in provider.requests for m in r.messages
                   if m.role == "user")


def test_ctx_signal_is_the_runs_abort_signal_and_none_when_idle(tmp_path):
    """pi 1.6's ``ctx.signal``: a plugin waiting on its own work sees the run's abort."""
    import asyncio

    seen = {}
    started = asyncio.Event()

    class Watcher:
        @hookimpl
        def agent_start(self, ctx):
            seen["signal"] = ctx.signal
            seen["aborted at start"] = ctx.signal.aborted
            started.set()

    harness, _, _ = make(tmp_path, [Reply(text="slow", delay=5)], Watcher())
    assert harness.ctx.signal is None  # idle

    async def scenario():
        task = asyncio.create_task(harness.prompt("hi"))
        await started.wait()
        harness.abort()
        await asyncio.wait_for(task, 5)

    run(scenario())
    assert seen["aborted at start"] is False and seen["signal"].aborted
    assert harness.ctx.signal is None


def test_an_unsubscribed_listener_and_bus_handler_hear_nothing_more(tmp_path):
    """pi 1.6's ``pi.on`` returns an unsubscribe: here ``harness.subscribe`` and
    ``ctx.events.on`` do; each call removes only its own registration."""
    harness, _, _ = make(tmp_path, [Reply(text="one"), Reply(text="two")])
    first, second = [], []
    stop_first = harness.subscribe(lambda event: first.append(event.type))
    harness.subscribe(lambda event: second.append(event.type))
    run(harness.prompt("a"))
    stop_first()
    heard = len(first)
    run(harness.prompt("b"))
    assert heard and len(first) == heard and second.count("agent_end") == 2

    got = []
    stop = harness.ctx.events.on("notes", got.append)
    harness.ctx.events.on("notes", lambda data: got.append(("again", data)))
    run(harness.ctx.events.emit("notes", 1))
    stop()
    run(harness.ctx.events.emit("notes", 2))
    assert got == [1, ("again", 1), ("again", 2)]
