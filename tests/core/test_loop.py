"""The agent loop, specified by behaviour (scripted provider, real asyncio, no network)."""

import asyncio

import attrs
import pytest

from pi_core import AgentBusyError, ToolResult, hookimpl, tool
from pi_core.protocol.events import ToolCallDecision
from pi_core.protocol.messages import (
    AssistantMessage,
    BashExecutionMessage,
    TextContent,
    ToolResultMessage,
    UserMessage,
    text_of,
)
from pi_plugins import app_messages
from pi_core.testing import Reply

from support.agents import run

ECHO_SCHEMA = {"type": "object", "properties": {"label": {"type": "string"}}, "required": ["label"]}


def sleeper(name, delay, log, **kwargs):
    @tool(name=name, parameters=ECHO_SCHEMA, **kwargs)
    async def sleep_then_answer(args, run):
        log.append(("start", args["label"]))
        await asyncio.sleep(delay)
        log.append(("end", args["label"]))
        return f"{name}:{args['label']}"

    return sleep_then_answer


def user_texts(context):
    return [text_of(m.content) for m in context.messages if isinstance(m, UserMessage)]


def test_text_answer_produces_user_then_assistant_and_lifecycle_events(make_agent):
    agent, provider, events = make_agent([Reply(text="Hello there")])
    produced = run(agent.prompt("hi"))
    assert [m.role for m in produced] == ["user", "assistant"]
    assert produced[1].text == "Hello there" and produced[1].stop_reason == "stop"
    assert agent.messages == produced
    kinds = events.types()
    assert kinds[:4] == ["agent_start", "turn_start", "message_start", "message_end"]
    assert kinds[-2:] == ["turn_end", "agent_end"]
    assert "".join(e.assistant_message_event.delta for e in events.of("message_update")
                   if e.assistant_message_event.type == "text_delta") == "Hello there"


def test_turns_continue_while_tools_are_owed(make_agent):
    log = []
    agent, provider, events = make_agent(
        [Reply(tool_calls=[("echo", {"label": "a"})]), Reply(tool_calls=[("echo", {"label": "b"})]),
         Reply(text="done")],
        tools=[sleeper("echo", 0, log)],
    )
    produced = run(agent.prompt("go"))
    assert [m.role for m in produced] == [
        "user", "assistant", "toolResult", "assistant", "toolResult", "assistant"]
    assert len(provider.requests) == 3
    assert events.types("turn_start").count("turn_start") == 3
    assert [text_of(r.content) for r in events.of("turn_end")[0].tool_results] == ["echo:a"]


def test_parallel_tools_run_concurrently_and_results_keep_source_order(make_agent):
    log = []
    agent, provider, events = make_agent(
        [Reply(tool_calls=[("slow", {"label": "first"}), ("fast", {"label": "second"})]),
         Reply(text="ok")],
        tools=[sleeper("slow", 0.2, log), sleeper("fast", 0.01, log)],
    )
    produced = run(agent.prompt("go"))
    assert log == [("start", "first"), ("start", "second"), ("end", "second"), ("end", "first")]
    assert [e.tool_name for e in events.of("tool_execution_end")] == ["fast", "slow"]
    results = [m for m in produced if isinstance(m, ToolResultMessage)]
    assert [r.tool_name for r in results] == ["slow", "fast"]
    sent = provider.requests[1].messages
    assert [m.tool_name for m in sent if isinstance(m, ToolResultMessage)] == ["slow", "fast"]


def test_a_sequential_tool_makes_its_whole_batch_sequential(make_agent):
    log = []
    agent, provider, events = make_agent(
        [Reply(tool_calls=[("slow", {"label": "first"}), ("careful", {"label": "second"})]),
         Reply(text="ok")],
        tools=[sleeper("slow", 0.05, log), sleeper("careful", 0.0, log, execution_mode="sequential")],
    )
    run(agent.prompt("go"))
    assert log == [("start", "first"), ("end", "first"), ("start", "second"), ("end", "second")]


def test_steering_during_a_tool_batch_arrives_after_the_batch_before_the_next_request(make_agent):
    log = []

    @tool(name="steerer", parameters=ECHO_SCHEMA)
    async def steerer(args, run):
        run.ctx.send_user_message("change of plan", deliver_as="steer")
        return "steered"

    agent, provider, events = make_agent(
        [Reply(tool_calls=[("steerer", {"label": "x"}), ("slow", {"label": "y"})]),
         Reply(text="understood")],
        tools=[steerer, sleeper("slow", 0.05, log)],
    )
    produced = run(agent.prompt("go"))
    assert log == [("start", "y"), ("end", "y")]  # the rest of the batch still ran
    roles = [m.role for m in produced]
    assert roles == ["user", "assistant", "toolResult", "toolResult", "user", "assistant"]
    second = provider.requests[1].messages
    assert [m.role for m in second][-3:] == ["toolResult", "toolResult", "user"]
    assert user_texts(provider.requests[1])[-1] == "change of plan"
    kinds = events.types("turn_end", "turn_start", "message_start")
    first_turn_end = kinds.index("turn_end")
    assert kinds[first_turn_end + 1] == "turn_start"  # the steer opens the next turn


def test_follow_up_runs_after_the_natural_end_in_the_same_run(make_agent):
    agent, provider, events = make_agent([Reply(text="first answer"), Reply(text="second answer")])

    def queue_once(event):
        if event.type == "message_end" and getattr(event.message, "text", "") == "first answer":
            agent.follow_up("and then?")

    agent.subscribe(queue_once)
    produced = run(agent.prompt("start"))
    assert [m.role for m in produced] == ["user", "assistant", "user", "assistant"]
    assert user_texts(provider.requests[1]) == ["start", "and then?"]
    assert events.types("agent_start", "agent_end") == ["agent_start", "agent_end"]


@pytest.mark.parametrize("mode, deliveries", [
    ("one-at-a-time", [["one"], ["two"]]),
    ("all", [["one", "two"]]),
])
def test_steering_queue_mode_decides_how_many_messages_each_turn_takes(make_agent, mode, deliveries):
    agent, provider, events = make_agent(
        [Reply(text="a"), Reply(text="b"), Reply(text="c")], steering_mode=mode
    )

    def steer_twice_during_first_answer(event):
        if event.type == "message_start" and event.message.role == "assistant" and not provider.requests[1:]:
            agent.steer("one")
            agent.steer("two")

    agent.subscribe(steer_twice_during_first_answer)
    run(agent.prompt("start"))
    assert len(provider.requests) == 1 + len(deliveries)
    for request, delivered in zip(provider.requests[1:], deliveries):
        assert user_texts(request)[-len(delivered):] == delivered
        assert [m.role for m in request.messages][-len(delivered) - 1] == "assistant"


def test_abort_mid_stream_keeps_the_partial_message_and_loses_no_queued_message(make_agent):
    agent, provider, events = make_agent(
        [Reply(text="word " * 200, chunk=5, delay=0.002), Reply(text="resumed"), Reply(text="followed")]
    )

    def abort_after_some_text(event):
        if event.type == "message_update" and len(events.of("message_update")) == 5:
            agent.steer("steer me later")
            agent.follow_up("follow me later")
            agent.abort()

    agent.subscribe(abort_after_some_text)
    produced = run(agent.prompt("talk"))
    last = produced[-1]
    assert last.stop_reason == "aborted" and last.error_message
    assert last.text.startswith("word word") and len(last.text) < len("word " * 200)
    assert events.types()[-1] == "agent_end" and not agent.is_running
    assert len(agent.steering) == 1 and len(agent.follow_up_queue) == 1
    # Nothing was lost: continuing delivers the steering message, then the follow-up.
    run(agent.continue_())
    assert user_texts(provider.requests[1])[-1] == "steer me later"
    assert user_texts(provider.requests[2])[-1] == "follow me later"
    assert [m.text for m in agent.messages if m.role == "assistant"][-2:] == ["resumed", "followed"]


def test_abort_mid_tool_cancels_the_tool_and_every_call_still_gets_a_result(make_agent):
    started, cancelled = asyncio.Event(), []

    @tool(name="wait", parameters=ECHO_SCHEMA)
    async def wait_forever(args, run):
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(args["label"])
            raise
        return "never"

    agent, provider, events = make_agent(
        [Reply(tool_calls=[("wait", {"label": "a"}), ("wait", {"label": "b"})]), Reply(text="unused")],
        tools=[wait_forever],
    )

    async def scenario():
        task = asyncio.create_task(agent.prompt("wait"))
        await started.wait()
        agent.follow_up("queued while busy")
        agent.abort()
        return await asyncio.wait_for(task, 5)

    produced = run(scenario())
    assert sorted(cancelled) == ["a", "b"]
    results = [m for m in produced if isinstance(m, ToolResultMessage)]
    assert [r.is_error for r in results] == [True, True]
    assert "aborted" in text_of(results[0].content)
    assert len(provider.requests) == 1  # the run stopped; no new request
    assert len(agent.follow_up_queue) == 1
    assert events.types()[-2:] == ["turn_end", "agent_end"]


def test_before_tool_call_can_block_with_a_reason_the_model_reads(make_agent):
    ran = []

    @tool(name="bash", parameters={"type": "object", "properties": {"command": {"type": "string"}}})
    def bash(args, run):
        ran.append(args["command"])
        return "ran"

    class Guard:
        @hookimpl
        def before_tool_call(self, event):
            if "rm -rf" in event.arguments.get("command", ""):
                return ToolCallDecision(block=True, reason="rm -rf is not allowed")

    agent, provider, events = make_agent(
        [Reply(tool_calls=[("bash", {"command": "rm -rf /"})]), Reply(text="ok")], Guard(), tools=[bash]
    )
    produced = run(agent.prompt("clean up"))
    result = next(m for m in produced if isinstance(m, ToolResultMessage))
    assert ran == [] and result.is_error and text_of(result.content) == "rm -rf is not allowed"
    assert provider.requests[1].messages[-1].is_error


def test_before_tool_call_can_change_the_arguments(make_agent):
    seen = []

    @tool(name="echo", parameters=ECHO_SCHEMA)
    def echo(args, run):
        seen.append(args["label"])
        return args["label"]

    class Rewriter:
        @hookimpl
        def before_tool_call(self, event):
            return ToolCallDecision(arguments={"label": event.arguments["label"].upper()})

    class InPlace:
        @hookimpl
        def before_tool_call(self, event):
            event.arguments["label"] += "!"

    agent, *_ = make_agent([Reply(tool_calls=[("echo", {"label": "hi"})]), Reply(text="ok")],
                           Rewriter(), tools=[echo])
    run(agent.prompt("x"))
    agent2, *_ = make_agent([Reply(tool_calls=[("echo", {"label": "hi"})]), Reply(text="ok")],
                            InPlace(), tools=[echo])
    run(agent2.prompt("x"))
    assert seen == ["HI", "hi!"]


def test_after_tool_call_patches_content_details_and_error_flag(make_agent):
    @tool(name="secret", parameters=ECHO_SCHEMA)
    def secret(args, run):
        return ToolResult.text("password=hunter2", details={"raw": True})

    class Redactor:
        @hookimpl
        def after_tool_call(self, result, event):
            text = text_of(result.content).replace("hunter2", "[redacted]")
            return attrs.evolve(result, content=[TextContent(text)], details={"redacted": True},
                                is_error=True)

    agent, provider, _ = make_agent([Reply(tool_calls=[("secret", {"label": "x"})]), Reply(text="ok")],
                                    Redactor(), tools=[secret])
    produced = run(agent.prompt("x"))
    result = next(m for m in produced if isinstance(m, ToolResultMessage))
    assert text_of(result.content) == "password=[redacted]"
    assert result.details == {"redacted": True} and result.is_error


def test_request_hooks_run_in_order_and_shape_what_is_sent(make_agent):
    order = []

    class Shaper:
        @hookimpl
        def prepare_request(self, request):
            order.append("prepare_request")
            return attrs.evolve(request, system_prompt="You are terse.")

        @hookimpl
        def context(self, messages):
            order.append("context")
            return messages + [UserMessage(content=[TextContent("injected")])]

        @hookimpl
        def convert_to_llm(self, messages):
            order.append("convert_to_llm")

        @hookimpl
        def before_provider_request(self, payload, model):
            order.append("before_provider_request")
            return {**payload, "seen_model": model.id}

    agent, provider, _ = make_agent([Reply(text="ok")], Shaper())
    run(agent.prompt("hello"))
    assert order == ["prepare_request", "context", "convert_to_llm", "before_provider_request"]
    assert provider.requests[0].system_prompt == "You are terse."
    assert user_texts(provider.requests[0]) == ["hello", "injected"]
    assert provider.payloads[0]["seen_model"] == "scripted-model"
    assert len(agent.messages) == 2  # the injection was for that request only


def test_every_agent_event_reaches_the_notify_hooks(make_agent):
    seen = []

    def record(self, event):
        seen.append(event.type)

    notify_hooks = ("agent_start", "agent_end", "turn_start", "turn_end", "message_start",
                    "message_update", "tool_execution_start", "tool_execution_update",
                    "tool_execution_end")
    Everything = type("Everything", (), {name: hookimpl(record) for name in notify_hooks})

    @tool(name="progress", parameters=ECHO_SCHEMA)
    def progress(args, run):
        run.update("half way")
        return "done"

    agent, provider, events = make_agent(
        [Reply(text="calling", tool_calls=[("progress", {"label": "x"})]), Reply(text="ok")],
        Everything(), tools=[progress],
    )
    run(agent.prompt("go"))
    expected = [t for t in events.types() if t != "message_end"]
    assert seen == expected
    assert {"tool_execution_update", "message_update", "turn_end"} <= set(seen)


def test_message_end_may_replace_a_message_before_it_is_kept(make_agent):
    class Shout:
        @hookimpl
        def message_end(self, message):
            if isinstance(message, AssistantMessage):
                return attrs.evolve(message, content=[TextContent(message.text.upper())])

    agent, _, events = make_agent([Reply(text="quiet")], Shout())
    produced = run(agent.prompt("x"))
    assert produced[-1].text == "QUIET" and agent.messages[-1].text == "QUIET"
    assert events.of("message_end")[-1].message.text == "QUIET"


def test_invalid_arguments_give_an_error_result_the_model_can_read(make_agent):
    called = []
    add = tool(name="add", parameters={
        "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"]})(lambda args, run: called.append(args) or "sum")
    agent, provider, _ = make_agent(
        [Reply(tool_calls=[("add", {"a": "one"})]), Reply(tool_calls=[("add", {"a": "1", "b": 2})]),
         Reply(text="ok")],
        tools=[add],
    )
    produced = run(agent.prompt("add"))
    first = [m for m in produced if isinstance(m, ToolResultMessage)][0]
    text = text_of(first.content)
    assert first.is_error and text.startswith('Validation failed for tool "add"')
    assert "'b' is a required property" in text and "'one' is not of type 'integer'" in text
    assert called == [{"a": 1, "b": 2}]  # the corrected call ran, "1" coerced to 1


def test_unknown_tools_and_raising_tools_become_error_results(make_agent):
    def broken(args, run):
        raise ValueError("path must be absolute; try /work/file.txt")

    agent, _, _ = make_agent(
        [Reply(tool_calls=[("nope", {}), ("broken", {})]), Reply(text="ok")],
        tools=[tool(name="broken")(broken)],
    )
    produced = run(agent.prompt("x"))
    texts = [text_of(m.content) for m in produced if isinstance(m, ToolResultMessage)]
    assert texts == ["Tool nope not found", "path must be absolute; try /work/file.txt"]


def test_a_tool_result_with_terminate_ends_the_run_after_its_batch(make_agent):
    stop = tool(name="stop")(lambda args, run: ToolResult(content=[TextContent("bye")], terminate=True))
    agent, provider, _ = make_agent([Reply(tool_calls=[("stop", {})]), Reply(text="unused")], tools=[stop])
    produced = run(agent.prompt("x"))
    assert produced[-1].role == "toolResult" and len(provider.requests) == 1


def test_a_provider_that_raises_ends_the_run_with_an_error_message(make_agent):
    class Broken:
        api = "scripted"

        async def stream(self, model, context, options):
            from pi_plugins.providers.kit import MessageBuilder

            builder = MessageBuilder(api="scripted", provider="x", model=model.id)
            yield builder.start()
            yield builder.text_start()
            yield builder.text_delta("partial ")
            raise ConnectionError("socket closed")

    agent, _, events = make_agent([], providers=[Broken()])
    produced = run(agent.prompt("x"))
    assert produced[-1].stop_reason == "error"
    assert produced[-1].error_message == "ConnectionError: socket closed"
    assert produced[-1].text == "partial "
    assert events.types()[-1] == "agent_end"


def test_a_model_without_a_provider_gets_an_error_message_not_an_exception(make_agent):
    agent, _, _ = make_agent([], providers=[])
    produced = run(agent.prompt("x"))
    assert produced[-1].stop_reason == "error" and "no provider for api 'scripted'" in produced[-1].error_message


def test_a_raising_plugin_is_reported_and_the_run_goes_on(make_agent):
    class Faulty:
        @hookimpl
        def turn_start(self, event):
            raise RuntimeError("boom")

    agent, _, events = make_agent([Reply(text="fine")], Faulty())
    produced = run(agent.prompt("x"))
    assert produced[-1].text == "fine"
    error = agent.plugins.errors[-1]
    assert error.plugin == "Faulty" and error.hook == "turn_start" and "boom" in str(error)


def test_prompting_while_running_is_refused_with_advice(make_agent):
    agent, _, _ = make_agent([Reply(text="slow " * 50, delay=0.001), Reply(text="x")])

    async def scenario():
        task = asyncio.create_task(agent.prompt("one"))
        await asyncio.sleep(0.01)
        with pytest.raises(AgentBusyError, match="steer"):
            await agent.prompt("two")
        await task

    run(scenario())


def test_app_messages_reach_the_model_as_user_text_and_excluded_ones_do_not(make_agent):
    agent, provider, _ = make_agent([Reply(text="ok")], app_messages)
    agent.messages += [
        BashExecutionMessage(command="echo hi", output="hi\n", exit_code=0),
        BashExecutionMessage(command="cat secret", output="s3cret\n", exit_code=0, exclude_from_context=True),
    ]
    run(agent.prompt("what did I run?"))
    sent = user_texts(provider.requests[0])
    assert any("echo hi" in t and "hi" in t for t in sent)
    assert not any("s3cret" in t for t in sent)
    assert all(isinstance(m, (UserMessage, AssistantMessage, ToolResultMessage))
               for m in provider.requests[0].messages)


def test_the_model_is_offered_default_tools_unless_an_allow_list_says_otherwise(make_agent):
    on = tool(name="on")(lambda args, run: "x")
    off = tool(name="off", default_active=False)(lambda args, run: "x")
    agent, provider, _ = make_agent([Reply(text="a"), Reply(text="b"), Reply(text="c")], tools=[on, off])
    run(agent.prompt("1"))
    agent.set_active_tools(["off"])
    run(agent.prompt("2"))
    agent.set_active_tools([])
    run(agent.prompt("3"))
    assert [[t.name for t in r.tools] for r in provider.requests] == [["on"], ["off"], []]
