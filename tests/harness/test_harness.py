"""The harness: a long scripted conversation through sessions, retries, compaction and
the tree, written to real session files."""

import json

from pi_core import hookimpl
from pi_core.protocol.events import CompactionDecision, CompactionResult, TreeDecision
from pi_core.protocol.messages import Failure, ToolResultMessage, text_of
from pi_core.session import Session
from pi_core.testing import Reply

from support.agents import run
from support.fixtures import SESSION_FIXTURES
from support.harnesses import SUMMARY, Lifecycle, lines, make


def test_a_new_session_file_appears_with_the_first_answer_in_the_fixtures_shape(tmp_path):
    lifecycle = Lifecycle()
    harness, provider, events = make(tmp_path, [Reply(text="hello")], lifecycle)
    run(harness.start())
    assert not harness.session.file.exists()
    run(harness.prompt("hi"))
    written = lines(harness.session)
    assert [l["type"] for l in written] == ["session", "model_change", "thinking_level_change", "message", "message"]
    assert written[0]["version"] == 3 and written[0]["cwd"].endswith("work")
    assert written[3]["message"] == {"role": "user", "content": [{"type": "text", "text": "hi"}],
                                     "timestamp": written[3]["message"]["timestamp"]}
    assert written[4]["message"]["role"] == "assistant" and written[4]["parentId"] == written[3]["id"]
    assert [e.type for e in lifecycle.seen] == ["session_start"] and lifecycle.seen[0].reason == "startup"
    assert "session_start" not in events.types()  # lifecycle events stay out of the stream


def test_threshold_compaction_mid_tool_run_then_the_run_goes_on(tmp_path):
    script = [Reply(text=f"step {i}", tool_calls=[("dump", {"n": i})]) for i in range(6)] + [Reply(text="all done")]
    harness, provider, events = make(
        tmp_path, script, window=2500,
        settings={"compaction": {"reserveTokens": 500, "keepRecentTokens": 600}})
    run(harness.prompt("dump six times"))
    assert harness.messages[-1].text == "all done"
    assert events.types("compaction_start", "compaction_end")[:2] == ["compaction_start", "compaction_end"]
    assert events.of("compaction_start")[0].reason == "threshold"
    end = events.of("compaction_end")[0]
    assert end.result is not None and not end.aborted
    # One long turn: its first part is summarised as a split turn.
    assert "**Turn Context (split turn):**\n\n" + SUMMARY in end.result.summary
    assert "agent_end" not in events.types()[: events.types().index("compaction_end")]  # mid-run
    kinds = [l["type"] for l in lines(harness.session)]
    assert "compaction" in kinds and kinds[-1] == "message"
    # The request after the compaction starts with the summary, not the first prompt.
    after = provider.requests[-1].messages
    assert "condensed into the summary below" in text_of(after[0].content)
    assert all(text_of(m.content) != "dump six times" for m in after if m.role == "user")
    assert sum(isinstance(m, ToolResultMessage) for m in harness.messages) < 6


def test_a_429_is_retried_and_the_failure_stays_in_the_file_not_the_context(tmp_path):
    script = [Reply(error="429 rate limited", failure=Failure("retryable", 429, retry_after_ms=10)),
              Reply(text="worked the second time")]
    harness, provider, events = make(tmp_path, script)
    run(harness.prompt("hi"))
    assert harness.messages[-1].text == "worked the second time"
    assert [m.role for m in harness.messages] == ["user", "assistant"]
    start = events.of("auto_retry_start")[0]
    assert (start.attempt, start.max_attempts, start.delay_ms) == (1, 3, 10)
    assert events.of("auto_retry_end")[0].success
    stored = [l["message"] for l in lines(harness.session) if l["type"] == "message"]
    assert [m.get("stopReason") for m in stored] == [None, "error", "stop"]


def test_a_retry_after_beyond_max_retry_delay_ends_the_run_at_once_naming_the_wait(tmp_path):
    script = [Reply(error="429 rate limited", failure=Failure("retryable", 429, retry_after_ms=3_600_000)),
              Reply(text="unused")]
    harness, provider, events = make(tmp_path, script)
    run(harness.prompt("hi"))
    assert len(provider.requests) == 1 and not events.of("auto_retry_start")
    error = harness.messages[-1].error_message
    assert error.startswith("429 rate limited (429: the server asked to wait 3600 s")
    assert "retry.provider.maxRetryDelayMs (60 s)" in error


def test_max_retry_delay_zero_lifts_the_cap_on_the_servers_wait(tmp_path):
    script = [Reply(error="429 rate limited", failure=Failure("retryable", 429, retry_after_ms=20)),
              Reply(text="waited as asked")]
    capped, provider, _ = make(tmp_path / "capped", list(script),
                               settings={"retry": {"provider": {"maxRetryDelayMs": 10}}})
    run(capped.prompt("hi"))
    assert len(provider.requests) == 1 and "wait 0.02 s" in capped.messages[-1].error_message
    lifted, provider, events = make(tmp_path / "lifted", list(script),
                                    settings={"retry": {"provider": {"maxRetryDelayMs": 0}}})
    run(lifted.prompt("hi"))
    assert lifted.messages[-1].text == "waited as asked"
    assert events.of("auto_retry_start")[0].delay_ms == 20


def test_a_500_that_outlasts_the_retries_ends_with_the_error(tmp_path):
    fails = [Reply(error=f"500 internal error (request {n})", failure=Failure("retryable", 500)) for n in range(4)]
    harness, provider, events = make(tmp_path, [*fails, Reply(text="unused")])
    run(harness.prompt("hi"))
    assert harness.messages[-1].stop_reason == "error"
    assert [e.attempt for e in events.of("auto_retry_start")] == [1, 2, 3]
    assert [e.delay_ms for e in events.of("auto_retry_start")] == [5, 10, 20]  # exponential
    end = events.of("auto_retry_end")[0]
    assert not end.success and end.final_error == "500 internal error (request 3)"
    assert len(provider.requests) == 4


def test_the_backoff_never_grows_past_max_agent_delay(tmp_path):
    fails = [Reply(error=f"500 internal error (request {n})", failure=Failure("retryable", 500)) for n in range(3)]
    harness, provider, events = make(tmp_path, [*fails, Reply(text="back")],
                                     settings={"retry": {"baseDelayMs": 5, "maxAgentDelayMs": 8}})
    run(harness.prompt("hi"))
    assert harness.messages[-1].text == "back"
    assert [e.delay_ms for e in events.of("auto_retry_start")] == [5, 8, 8]  # retry.maxAgentDelayMs, pi 1.6


def test_a_configured_provider_gets_every_retry_even_for_the_same_answer(tmp_path):
    fail = Reply(error="openai/m: 500 Internal Server Error: overloaded", failure=Failure("retryable", 500))
    harness, provider, events = make(tmp_path, [fail, fail, fail, fail, Reply(text="unused")])
    run(harness.prompt("hi"))
    assert len(provider.requests) == 4  # 1 + retry.maxRetries, as pi
    assert harness.messages[-1].error_message == "openai/m: 500 Internal Server Error: overloaded"
    assert [e.attempt for e in events.of("auto_retry_start")] == [1, 2, 3]


def test_a_discovered_server_giving_the_same_error_answer_twice_is_not_retried_again(tmp_path):
    fail = Reply(error="local/m: 500 Internal Server Error: chat template failed", failure=Failure("retryable", 500))
    harness, provider, events = make(tmp_path, [fail, fail, fail, fail, Reply(text="unused")], discovered=True)
    run(harness.prompt("hi"))
    assert len(provider.requests) == 2
    last = harness.messages[-1]
    assert last.stop_reason == "error"
    assert last.error_message == ("local/m: 500 Internal Server Error: chat template failed"
                                  " (the same answer twice: not retried again)")
    assert [e.attempt for e in events.of("auto_retry_start")] == [1]
    assert not events.of("auto_retry_end")[0].success


def test_the_same_rate_limit_answer_from_a_discovered_server_is_still_retried(tmp_path):
    fail = Reply(error="429 rate limited", failure=Failure("retryable", 429))
    harness, provider, events = make(tmp_path, [fail, fail, fail, Reply(text="finally")], discovered=True)
    run(harness.prompt("hi"))
    assert harness.messages[-1].text == "finally" and len(provider.requests) == 4


def test_the_same_lost_connection_twice_from_a_discovered_server_is_still_retried(tmp_path):
    fail = Reply(error="Connection lost: the stream ended early", failure=Failure("retryable"))
    harness, provider, events = make(tmp_path, [fail, fail, Reply(text="back")], discovered=True)
    run(harness.prompt("hi"))
    assert harness.messages[-1].text == "back" and len(provider.requests) == 3


def test_retry_can_be_turned_off(tmp_path):
    fail = Reply(error="overloaded", failure=Failure("retryable", 529))
    harness, provider, events = make(tmp_path, [fail, Reply(text="x")], settings={"retry": {"enabled": False}})
    run(harness.prompt("hi"))
    assert harness.messages[-1].stop_reason == "error" and not events.of("auto_retry_start")


def test_an_overflow_compacts_and_retries_once(tmp_path):
    script = [Reply(text="first answer " * 50), Reply(text="second answer " * 50),
              Reply(error="prompt is too long", failure=Failure("overflow", 400)),
              Reply(text="fits now")]
    harness, provider, events = make(tmp_path, script, settings={"compaction": {"keepRecentTokens": 10}})
    run(harness.prompt("one"))
    run(harness.prompt("two"))
    run(harness.prompt("three"))
    assert harness.messages[-1].text == "fits now"
    end = events.of("compaction_end")[0]
    assert end.reason == "overflow" and end.will_retry and end.result is not None
    assert "condensed into the summary below" in text_of(provider.requests[-1].messages[0].content)


def test_manual_compaction_passes_the_instructions_to_the_summary(tmp_path):
    seen = []

    def router(context):
        text = text_of(context.messages[-1].content)
        if "<conversation>" in text:
            seen.append(text)
            return Reply(text=SUMMARY)
        return None

    harness, provider, events = make(tmp_path, [Reply(text="a"), Reply(text="b")], router=router,
                                     settings={"compaction": {"keepRecentTokens": 1}})
    run(harness.prompt("first"))
    run(harness.prompt("second"))
    result = run(harness.compact("focus on the file names"))
    assert result.summary.startswith(SUMMARY)
    assert "Pay particular attention to: focus on the file names" in seen[0]
    entry = [l for l in lines(harness.session) if l["type"] == "compaction"][0]
    assert entry["fromHook"] is False and entry["firstKeptEntryId"] and entry["tokensBefore"] > 0
    assert events.of("compaction_start")[0].reason == "manual"


def test_a_plugin_can_supply_its_own_summary_or_cancel(tmp_path):
    class OwnSummary:
        @hookimpl
        def session_before_compact(self, event):
            kept = event.entries[-1].id
            return CompactionDecision(result=CompactionResult("my own notes", kept, 42, {"by": "plugin"}))

    harness, provider, _ = make(tmp_path / "a", [Reply(text="a")], OwnSummary(), router=None)
    run(harness.prompt("x"))
    result = run(harness.compact())
    assert result.summary == "my own notes" and len(provider.requests) == 1  # no LLM summary call
    entry = [l for l in lines(harness.session) if l["type"] == "compaction"][0]
    assert entry["fromHook"] is True and entry["details"] == {"by": "plugin"}

    class Veto:
        @hookimpl
        def session_before_compact(self, event):
            return {"cancel": True}

    harness, provider, events = make(tmp_path / "b", [Reply(text="a")], Veto(), router=None)
    run(harness.prompt("x"))
    assert run(harness.compact()) is None
    assert events.of("compaction_end")[0].aborted
    assert "compaction" not in [l["type"] for l in lines(harness.session)]


def test_tree_navigation_with_and_without_a_summary(tmp_path):
    lifecycle = Lifecycle()
    harness, provider, events = make(tmp_path, [Reply(text="answer one"), Reply(text="approach A done"),
                                                Reply(text="approach B done"), Reply(text="C")], lifecycle)
    run(harness.prompt("question one"))
    fork_point = harness.session.leaf_id
    run(harness.prompt("try approach A"))
    a_leaf = harness.session.leaf_id
    assert run(harness.navigate_tree(fork_point, summarize=True))
    summary = [l for l in lines(harness.session) if l["type"] == "branch_summary"][0]
    assert summary["parentId"] == fork_point and summary["fromId"] == a_leaf != fork_point
    assert summary["summary"].startswith("The user explored a different conversation branch")
    assert [text_of(m.content) if m.role == "user" else m.role for m in harness.messages][-1] == "branchSummary"
    run(harness.prompt("try approach B"))
    sent = provider.requests[-1].messages
    assert any("this summarises that branch" in text_of(m.content) for m in sent if m.role == "user")
    assert not any("try approach A" == text_of(m.content) for m in sent if m.role == "user")
    # Back to A without a summary: the leaf moves, nothing is appended.
    count = len(lines(harness.session))
    assert run(harness.navigate_tree(a_leaf))
    assert len(lines(harness.session)) == count
    assert [m.text for m in harness.messages if m.role == "assistant"] == ["answer one", "approach A done"]
    assert lifecycle.seen[-1].type == "session_tree" and lifecycle.seen[-1].new_leaf_id == a_leaf


def test_a_plugin_can_cancel_tree_navigation(tmp_path):
    class Stay:
        @hookimpl
        def session_before_tree(self, event):
            return TreeDecision(cancel=True)

    harness, *_ = make(tmp_path, [Reply(text="a"), Reply(text="b")], Stay())
    run(harness.prompt("one"))
    first = harness.session.leaf_id
    run(harness.prompt("two"))
    leaf = harness.session.leaf_id
    assert not run(harness.navigate_tree(first))
    assert harness.session.leaf_id == leaf


def test_resuming_a_session_restores_context_model_and_thinking_level(tmp_path):
    harness, *_ = make(tmp_path, [Reply(text="remember 42")], reasoning=True)
    run(harness.set_thinking_level("high"))
    run(harness.prompt("the number is 42"))
    path = harness.session.file
    run(harness.close())
    resumed, provider, _ = make(tmp_path, [Reply(text="it was 42")], session=Session.open(path),
                                reasoning=True)
    run(resumed.prompt("what was it?"))
    assert resumed.thinking_level == "high"
    assert [text_of(m.content) for m in provider.requests[0].messages if m.role == "user"] == [
        "the number is 42", "what was it?"]


def shape(line):
    """The keys of a line (and of its message), in order: what pi reads."""
    keys = list(line)
    if line["type"] == "message":
        keys += [f"message.{k}" for k in line["message"]]
    return keys


OPTIONAL_16 = ("message.rawStopReason", "message.responseId")


def test_every_line_kind_written_has_the_shape_of_the_same_kind_in_the_fixtures(tmp_path):
    fixture_shapes = {}  # pi 0.73.1's, and pi 1.6's (summaries with their usage)
    for path in [*SESSION_FIXTURES.glob("*.jsonl"), *SESSION_FIXTURES.parent.glob("sessions-pi16/*.jsonl")]:
        for text in path.read_text().splitlines():
            line = json.loads(text)
            kind = (line["type"], line.get("message", {}).get("role"))
            fixture_shapes.setdefault(kind, set()).add(tuple(shape(line)))
            # pi 1.6's optional keys we may not write: the provider's raw stop reason (not
            # recorded yet), the response id (a provider without one), a tool's usage (a
            # tool that did no model work)
            for left_out in (OPTIONAL_16[:1], OPTIONAL_16, ("message.usage",) if kind[1] == "toolResult" else ()):
                fixture_shapes[kind].add(tuple(k for k in shape(line) if k not in left_out))
    script = [Reply(text="looking", tool_calls=[("dump", {"n": 1})]), Reply(text="done"), Reply(text="more")]
    harness, *_ = make(tmp_path, script, settings={"compaction": {"keepRecentTokens": 1}})
    run(harness.prompt("go"))
    fork_point = harness.session.leaf_id
    harness.ctx.set_session_name("demo")
    harness.ctx.set_label(fork_point, "here")
    run(harness.compact())
    run(harness.prompt("again"))
    run(harness.navigate_tree(fork_point, summarize=True))
    checked = set()
    for line in lines(harness.session):
        kind = (line["type"], line.get("message", {}).get("role"))
        if kind in fixture_shapes:
            assert tuple(shape(line)) in fixture_shapes[kind], f"{kind} {shape(line)}"
            checked.add(kind)
    assert {("session", None), ("model_change", None), ("thinking_level_change", None), ("message", "user"),
            ("message", "assistant"), ("message", "toolResult"), ("compaction", None), ("branch_summary", None),
            ("label", None), ("session_info", None)} <= checked


def test_a_server_that_went_away_keeps_the_first_failure_in_the_final_error(tmp_path):
    lost = Reply(error="local/m: Connection lost: the stream ended (POST http://127.0.0.1:8080/v1/chat/completions)",
                 failure=Failure("retryable"))
    gone = Reply(error="local/m: Connection error: All connection attempts failed", failure=Failure("retryable"))
    harness, provider, events = make(tmp_path, [lost, gone, gone, gone, Reply(text="unused")])
    run(harness.prompt("hi"))
    assert len(provider.requests) == 4
    assert harness.messages[-1].error_message == (
        "local/m: Connection error: All connection attempts failed; the first attempt ended: "
        "local/m: Connection lost: the stream ended (POST http://127.0.0.1:8080/v1/chat/completions)")
    assert events.of("auto_retry_end")[0].final_error == harness.messages[-1].error_message


class LateSteer:
    """Queues a steering message while the run is ending (after the loop stopped, before
    the prompt returned): what a user typing at that moment does in the chat."""

    def __init__(self):
        self.sent = False

    @hookimpl
    def after_agent_run(self, event, ctx):
        if not self.sent:
            self.sent = True
            ctx.send_user_message("one more thing", deliver_as="steer")


def test_a_message_queued_while_the_run_ends_is_delivered_not_left_in_the_queue(tmp_path):
    harness, provider, _ = make(tmp_path, [Reply(text="first"), Reply(text="second")], LateSteer())
    run(harness.prompt("hi"))
    assert [text_of(m.content) for m in harness.messages if m.role == "user"] == ["hi", "one more thing"]
    assert harness.messages[-1].text == "second" and len(provider.requests) == 2
    assert not harness.agent.steering.messages


def test_before_agent_start_places_before_prompt_messages_ahead_of_the_prompt_and_messages_after_it(tmp_path):
    from pi_core.protocol.messages import CustomMessage, UnknownMessage

    class Sections:
        @hookimpl
        def before_agent_start(self, event):
            event.before_prompt = [UnknownMessage({"role": "system", "content": "", "sections": {"notes": "x"}}),
                                   CustomMessage(custom_type="note", content="before", display=False)]
            event.messages = [CustomMessage(custom_type="note", content="after", display=False)]
            return event

    harness, provider, _ = make(tmp_path, [Reply(text="ok")], Sections())
    run(harness.prompt("hello"))
    assert [text_of(m.content) for m in provider.requests[0].messages] == ["before", "hello", "after"]
    entries = [(l["type"], l.get("message", {}).get("role")) for l in lines(harness.session)][3:]
    assert entries == [("message", "system"), ("custom_message", None), ("message", "user"),
                       ("custom_message", None), ("message", "assistant")]
    assert lines(harness.session)[3]["message"]["sections"] == {"notes": "x"}  # pi 1.6's system entry, as written


def test_a_models_own_compaction_budgets_win_over_the_ordinary_ones(tmp_path):
    """pi 1.6's ``compaction.modelOverrides``, keyed by ``provider/id``: each budget of
    the model's entry wins on its own, the others stay the ordinary settings', and
    another model's entry changes nothing."""
    from pi_core.testing import scripted_model

    class Budgets:
        seen: list = []

        @hookimpl
        def session_before_compact(self, event):
            self.seen.append((event.reserve_tokens, event.keep_recent_tokens))

    key = scripted_model().key
    ordinary = {"reserveTokens": 3000, "keepRecentTokens": 4000}
    for name, overrides in (("own", {key: {"reserveTokens": 1000}}), ("other", {"x/y": {"reserveTokens": 1000}})):
        budgets = Budgets()
        harness, *_ = make(tmp_path / name, [Reply(text="a"), Reply(text="b")], budgets,
                           settings={"compaction": {**ordinary, "modelOverrides": overrides}})
        run(harness.prompt("one"))
        run(harness.prompt("two"))
        run(harness.compact())
    assert Budgets.seen == [(1000, 4000), (3000, 4000)]


def test_a_message_queued_while_the_prompt_settles_runs_on_instead_of_waiting_in_the_queue(tmp_path):
    """A user's steer that lands while ``agent_settled``'s handlers run (the chat still
    shows the agent working, so it queues) starts another turn and settles again."""

    class SettleSteer:
        settled = 0

        @hookimpl
        async def agent_settled(self, event, ctx):
            self.settled += 1
            if self.settled == 1:
                await harness.queue("two", behavior="steer")

    watcher = SettleSteer()
    harness, provider, _ = make(tmp_path, [Reply(text="First."), Reply(text="Second.")], watcher)
    run(harness.prompt("one"))
    assert [text_of(m.content) for m in harness.messages if m.role == "user"] == ["one", "two"]
    assert harness.messages[-1].text == "Second." and len(provider.requests) == 2
    assert watcher.settled == 2 and not harness.agent.steering.messages
