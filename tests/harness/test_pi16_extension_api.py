"""pi 1.6's extension events and ctx members (issue 37), each as a plugin author relies on it:
``session_compact_failed``, ``agent_before_settle``, ``provider_stream_event``, ``input``'s
``streaming_behavior``, ``before_agent_start`` for a plugin's triggered message,
``ctx.is_project_trusted()``, ``ctx.scoped_models``, ``ctx.system_prompt_options()`` and
``ctx.has_pending_messages()``."""

import asyncio

import attrs

from pi_core import hookimpl
from pi_core.protocol.events import CompactionDecision
from pi_core.protocol.messages import CustomMessage, text_of
from pi_core.testing import Reply, scripted_model

from support.agents import run
from support.harnesses import lines, make


# ---------------------------------------------------------------- session_compact_failed


class CompactWatcher:
    def __init__(self, cancel=False):
        self.cancel = cancel
        self.failed = []
        self.ends = []

    @hookimpl
    def session_before_compact(self, event):
        return CompactionDecision(cancel=True) if self.cancel else None

    @hookimpl
    def compaction_end(self, event):
        self.ends.append(event)

    @hookimpl
    def session_compact_failed(self, event):
        assert self.ends, "session_compact_failed comes after compaction_end"
        self.failed.append(event)


def test_a_compaction_with_nothing_to_compact_tells_session_compact_failed_why(tmp_path):
    watcher = CompactWatcher()
    harness, _, _ = make(tmp_path, [], watcher)
    assert run(harness.compact()) is None
    [failed] = watcher.failed
    assert failed.reason == "manual" and not failed.aborted and not failed.will_retry
    assert failed.error_message == "Compaction failed: Nothing to compact (session too small)"


def test_a_compaction_a_plugin_cancels_is_a_failed_one_marked_aborted_without_an_error(tmp_path):
    watcher = CompactWatcher(cancel=True)
    harness, _, _ = make(tmp_path, [Reply(text="hello")], watcher)
    run(harness.prompt("hi"))
    run(harness.compact())
    [failed] = watcher.failed
    assert failed.aborted and failed.error_message is None


def test_a_compaction_that_writes_its_entry_is_not_reported_failed(tmp_path):
    watcher = CompactWatcher()
    harness, _, _ = make(tmp_path, [Reply(text="one"), Reply(text="two")], watcher)
    run(harness.prompt("first"))
    run(harness.prompt("second"))
    assert run(harness.compact()) is not None
    assert watcher.failed == []


# ---------------------------------------------------------------- agent_before_settle


class Reminder:
    """pi 1.6's doc example: one review reminder, then settle."""

    def __init__(self, entries=None):
        self.calls = 0
        self.entries = entries
        self.settled_after = None

    @hookimpl
    def agent_before_settle(self, event, ctx):
        self.calls += 1
        if self.calls > 1:
            return None
        drafts = self.entries if self.entries is not None else [
            {"type": "custom", "customType": "review-state", "data": {"asked": True}},
            {"type": "custom_message", "customType": "review-reminder",
             "content": "Review the final diff before replying.", "display": False}]
        return attrs.evolve(event, entries=[*event.entries, *drafts], continue_run=True)

    @hookimpl
    def agent_settled(self, event):
        self.settled_after = self.calls


def test_agent_before_settle_appends_its_entries_and_sends_one_more_request(tmp_path):
    plugin = Reminder()
    harness, provider, events = make(tmp_path, [Reply(text="done"), Reply(text="reviewed")], plugin)
    run(harness.prompt("fix it"))
    assert len(provider.requests) == 2
    last = provider.requests[1].messages[-1]
    assert text_of(last.content) == "Review the final diff before replying."
    assert harness.messages[-1].text == "reviewed"
    kinds = [(l["type"], l.get("customType")) for l in lines(harness.session)]
    assert kinds[-4:] == [("message", None), ("custom", "review-state"),
                          ("custom_message", "review-reminder"), ("message", None)]
    assert plugin.calls == 2 and plugin.settled_after == 2  # asked again after the continuation, then settled
    assert events.types().count("entry_appended") == 2


def test_agent_before_settle_with_a_bad_draft_appends_nothing_and_settles(tmp_path):
    plugin = Reminder(entries=[{"type": "custom", "customType": "ok"}, {"type": "label", "label": "x"}])
    harness, provider, _ = make(tmp_path, [Reply(text="done")], plugin)
    run(harness.prompt("fix it"))
    assert len(provider.requests) == 1
    assert "custom" not in [l["type"] for l in lines(harness.session)]
    [error] = harness.plugins.errors
    assert "the proposal was dropped" in str(error) and "'label'" in str(error)


def test_agent_before_settle_is_skipped_after_an_abort(tmp_path):
    plugin = Reminder()
    harness, provider, _ = make(tmp_path, [Reply(text="a long answer", chunk=1, delay=0.01)], plugin)

    async def scenario():
        answer = asyncio.ensure_future(harness.prompt("fix it"))
        while not harness.agent.is_running:
            await asyncio.sleep(0.001)
        await asyncio.sleep(0.03)
        harness.abort()
        await answer

    run(scenario())
    assert harness.messages[-1].stop_reason == "aborted"
    assert plugin.calls == 0 and plugin.settled_after == 0 and len(provider.requests) == 1


# ---------------------------------------------------------------- provider_stream_event


def test_provider_stream_event_hears_each_wire_event_in_order_with_the_model(tmp_path):
    heard = []

    class Wire:
        @hookimpl
        async def provider_stream_event(self, data, model):
            heard.append((data["type"], data["delta"], model.provider, model.api, model.id))

    harness, _, _ = make(tmp_path, [Reply(text="abcdef", chunk=3)], Wire())
    run(harness.prompt("hi"))
    model = scripted_model()
    assert heard == [("text_delta", "abc", model.provider, model.api, model.id),
                     ("text_delta", "def", model.provider, model.api, model.id)]


def test_a_provider_stream_event_handler_that_raises_changes_nothing_in_the_answer(tmp_path):
    class Broken:
        @hookimpl
        def provider_stream_event(self, data):
            raise RuntimeError("boom")

    harness, _, _ = make(tmp_path, [Reply(text="hello", chunk=2)], Broken())
    run(harness.prompt("hi"))
    assert harness.messages[-1].text == "hello"
    assert harness.plugins.errors and "boom" in str(harness.plugins.errors[0])


def test_the_http_providers_report_each_server_sent_event_as_parsed_json_and_not_the_end_marker():
    from pi_core import StreamOptions
    from pi_plugins.providers.http import report_stream_event
    from pi_plugins.providers.sse import SseDecoder

    heard = []

    async def hear(data):
        heard.append(data)

    decoded = SseDecoder().feed(b'data: {"choices": [{"delta": {"content": "hi"}}]}\n\n'
                                b'data: not json\n\ndata: [DONE]\n\n')
    options = StreamOptions(on_stream_event=hear)
    for event in decoded:
        run(report_stream_event(options, event))
    assert heard == [{"choices": [{"delta": {"content": "hi"}}]}, "not json"]


# ---------------------------------------------------------------- input's streaming_behavior


class InputWatcher:
    def __init__(self):
        self.seen = []

    @hookimpl
    def input(self, event):
        self.seen.append((event.text, event.streaming_behavior))


def test_input_says_steer_or_follow_up_while_a_run_is_under_way_and_none_when_idle(tmp_path):
    watcher = InputWatcher()
    harness, _, _ = make(tmp_path, [Reply(text="slow answer", chunk=1, delay=0.01), Reply(text="a"),
                                    Reply(text="b")], watcher)

    async def scenario():
        first = asyncio.ensure_future(harness.prompt("start"))
        while not harness.agent.is_running:
            await asyncio.sleep(0.001)
        await harness.prompt("now", streaming_behavior="steer")
        await harness.prompt("later", streaming_behavior="followUp")
        await first

    run(scenario())
    assert watcher.seen == [("start", None), ("now", "steer"), ("later", "follow_up")]


def test_input_sees_the_behaviour_of_a_queued_message(tmp_path):
    watcher = InputWatcher()
    harness, _, _ = make(tmp_path, [], watcher)
    assert run(harness.queue("queued", behavior="followUp")) == "queued"
    assert run(harness.queue("steered")) == "queued"
    assert watcher.seen == [("queued", "follow_up"), ("steered", "steer")]


# ---------------------------------------------------------------- before_agent_start for a triggered message


def test_a_plugins_message_that_triggers_a_turn_goes_through_before_agent_start(tmp_path):
    starts = []

    class Starter:
        @hookimpl
        def before_agent_start(self, event):
            starts.append((event.prompt, event.message))
            return attrs.evolve(event, system_prompt="from before_agent_start")

    harness, provider, _ = make(tmp_path, [Reply(text="noted")], Starter())

    async def scenario():
        await harness.start()
        harness.ctx.send_message(CustomMessage(custom_type="ping", content="build finished"), trigger_turn=True)
        await harness.wait_for_idle()

    run(scenario())
    [(prompt, message)] = starts
    assert prompt == "" and message.custom_type == "ping"
    [request] = provider.requests
    assert request.system_prompt == "from before_agent_start"
    assert text_of(request.messages[-1].content) == "build finished"
    assert harness.messages[-1].text == "noted"
    assert [l.get("customType") for l in lines(harness.session) if l["type"] == "custom_message"] == ["ping"]


# ---------------------------------------------------------------- ctx members


def test_ctx_is_project_trusted_is_the_runs_trust_decision(tmp_path):
    from pi_core.app.settings import Settings

    harness, _, _ = make(tmp_path, [])
    assert harness.ctx.is_project_trusted() is True
    harness.ctx.settings = Settings({}, project_trusted=False)
    assert harness.ctx.is_project_trusted() is False


def test_ctx_scoped_models_are_the_sessions_models_with_their_pinned_levels(tmp_path):
    harness, _, _ = make(tmp_path, [])
    assert harness.ctx.scoped_models == []
    small, large = scripted_model("small"), scripted_model("large", reasoning=True)
    harness.scoped_models = [(small, None), (large, "high")]
    assert harness.ctx.scoped_models == [(small, None), (large, "high")]
    harness.ctx.scoped_models.clear()  # a copy: the session's list stays
    assert len(harness.scoped_models) == 2


def test_ctx_has_pending_messages_while_steering_or_follow_ups_are_queued(tmp_path):
    harness, _, _ = make(tmp_path, [])
    assert harness.ctx.has_pending_messages() is False
    harness.follow_up("later")
    assert harness.ctx.has_pending_messages() is True
    harness.clear_queues()
    assert harness.ctx.has_pending_messages() is False


def test_ctx_system_prompt_options_are_what_the_built_in_prompt_is_built_from(tmp_path):
    import pi_plugins.context_files
    import pi_plugins.system_prompt

    work = tmp_path / "project"
    work.mkdir()
    (work / "AGENTS.md").write_text("Use tabs.\n")
    harness, _, _ = make(tmp_path, [], pi_plugins.system_prompt, pi_plugins.context_files)
    harness.ctx.cwd = str(work)
    run(harness.start())
    options = run(harness.ctx.system_prompt_options())
    assert options.cwd == str(work) and options.custom_prompt is None
    assert options.selected_tools == ["dump"] and options.tool_snippets == {"dump": "Print a lot."}
    assert options.prompt_guidelines[-1].startswith("Keep answers short")
    assert [(f.path.name, f.content) for f in options.context_files] == [("AGENTS.md", "Use tabs.\n")]
    assert options.skills == []


def test_ctx_system_prompt_options_is_none_without_a_system_prompt_plugin(tmp_path):
    harness, _, _ = make(tmp_path, [])
    assert run(harness.ctx.system_prompt_options()) is None


def test_a_message_an_agent_settled_handler_sends_with_trigger_turn_starts_a_run_after_it(tmp_path):
    """pi 1.6: work asked for from ``agent_settled`` waits until its handlers are done,
    then runs (through ``before_agent_start``), rather than sitting in a queue."""
    starts, order = [], []

    class Pinger:
        sent = False

        @hookimpl
        def agent_settled(self, ctx):
            order.append("settled")
            if not Pinger.sent:
                Pinger.sent = True
                ctx.send_message(CustomMessage(custom_type="ping", content="again"), trigger_turn=True)
                order.append("sent")

        @hookimpl
        def before_agent_start(self, event):
            starts.append(event.message.custom_type if event.message else event.prompt)
            order.append("start")

    harness, provider, _ = make(tmp_path, [Reply(text="one"), Reply(text="two")], Pinger())

    async def scenario():
        await harness.prompt("hi")
        await harness.wait_for_idle()

    run(scenario())
    assert starts == ["hi", "ping"] and len(provider.requests) == 2
    assert order == ["start", "settled", "sent", "start", "settled"]
    assert harness.ctx.has_pending_messages() is False
    assert [m.role for m in harness.messages] == ["user", "assistant", "custom", "assistant"]
