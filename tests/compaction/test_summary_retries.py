"""A compaction or branch summary whose summary request fails in a transient way is sent
again under ``retry.*``, with pi 1.6's ``summarization_retry_*`` events on the wire (the
JSON shapes ``pi --mode json`` and RPC print); a final failure is sent once."""

import asyncio

from support.llm_server import Reply

from pi_core.app.settings import Settings
from pi_core.session import Session
from pi_plugins.print_mode import event_json
from pi_plugins.sdk import create_harness

SUMMARY = "## Goal\na summary"
RETRY_EVENTS = ("summarization_retry_scheduled", "summarization_retry_attempt_start",
                "summarization_retry_finished")


def _run(tmp_path, server, monkeypatch, scenario, retry=None, then=()):
    """Two answered prompts, then the replies ``then`` queued and ``scenario(harness)``
    run; its result and the wire events it caused."""
    (tmp_path / "agent").mkdir(exist_ok=True)
    (tmp_path / "work").mkdir(exist_ok=True)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    settings = Settings({"compaction": {"keepRecentTokens": 1},
                         "retry": retry or {"maxRetries": 2, "baseDelayMs": 5}})

    async def go():
        harness = await create_harness(
            model=server.model("openai-completions"), session=Session.create(tmp_path / "work", tmp_path / "s"),
            cwd=str(tmp_path / "work"), builtins=True, active_tools=[], settings=settings)
        server.push(Reply(text="First answer."), Reply(text="Second answer."))
        await harness.prompt("one")
        await harness.prompt("two")
        server.push(*then)
        seen: list[dict] = []
        harness.subscribe(lambda event: seen.append(event_json(event)))
        result = await scenario(harness)
        await harness.close()
        return result, seen

    return asyncio.run(go())


def _retries(events):
    return [e for e in events if e["type"] in RETRY_EVENTS]


def test_a_compaction_summary_that_fails_once_is_retried_with_pi16s_events(tmp_path, server, monkeypatch):
    server.default = lambda request: Reply(text=SUMMARY)
    result, events = _run(tmp_path, server, monkeypatch, lambda h: h.compact(),
                          then=[Reply(status=503, error="overloaded")])
    assert result is not None and SUMMARY in result.summary
    scheduled, started, finished = _retries(events)
    assert set(scheduled) == {"type", "attempt", "maxAttempts", "delayMs", "errorMessage"}
    assert (scheduled["attempt"], scheduled["maxAttempts"], scheduled["delayMs"]) == (1, 2, 5)
    assert "overloaded" in scheduled["errorMessage"]
    assert started == {"type": "summarization_retry_attempt_start", "source": "compaction", "reason": "manual"}
    assert finished == {"type": "summarization_retry_finished"}
    types = [e["type"] for e in events]
    assert types.index("compaction_start") < types.index("summarization_retry_scheduled")
    assert types.index("summarization_retry_finished") < types.index("compaction_end")


def test_a_summary_that_keeps_failing_gets_max_retries_and_the_compaction_fails(tmp_path, server, monkeypatch):
    server.default = lambda request: Reply(status=500, error="overloaded")
    result, events = _run(tmp_path, server, monkeypatch, lambda h: h.compact())
    assert result is None
    assert len(server.requests) == 2 + 3  # the two prompts, then 1 + retry.maxRetries
    retries = _retries(events)
    assert [e["type"] for e in retries] == [*RETRY_EVENTS[:2]] * 2 + ["summarization_retry_finished"]
    assert [e["delayMs"] for e in retries if "delayMs" in e] == [5, 10]  # doubling from baseDelayMs
    end = next(e for e in events if e["type"] == "compaction_end")
    assert "overloaded" in end["errorMessage"] and "result" not in end


def test_a_refused_summary_request_is_not_retried(tmp_path, server, monkeypatch):
    server.default = lambda request: Reply(status=400, error="bad request")
    result, events = _run(tmp_path, server, monkeypatch, lambda h: h.compact())
    assert result is None and len(server.requests) == 3 and _retries(events) == []


def test_retry_enabled_false_leaves_summaries_unretried(tmp_path, server, monkeypatch):
    server.default = lambda request: Reply(status=503, error="overloaded")
    result, events = _run(tmp_path, server, monkeypatch, lambda h: h.compact(),
                          retry={"enabled": False, "maxRetries": 2, "baseDelayMs": 5})
    assert result is None and len(server.requests) == 3 and _retries(events) == []


def test_a_branch_summary_retry_names_its_source_and_no_reason(tmp_path, server, monkeypatch):
    async def leave_the_branch(harness):
        first_answer = next(e.id for e in harness.session.path()
                            if getattr(getattr(e, "message", None), "role", None) == "assistant")
        server.push(Reply(status=429, error="rate limited"))
        server.default = lambda request: Reply(text=SUMMARY)
        return await harness.navigate_tree(first_answer, summarize=True)

    moved, events = _run(tmp_path, server, monkeypatch, leave_the_branch)
    assert moved
    started = [e for e in events if e["type"] == "summarization_retry_attempt_start"]
    assert started == [{"type": "summarization_retry_attempt_start", "source": "branchSummary"}]
    assert [e["type"] for e in _retries(events)][-1] == "summarization_retry_finished"


def test_an_abort_during_the_wait_ends_the_retries_at_once(tmp_path, server, monkeypatch):
    server.default = lambda request: Reply(status=503, error="overloaded")

    async def compact_then_abort(harness):
        harness.subscribe(lambda e: harness.abort() if e.type == "summarization_retry_scheduled" else None)
        started = asyncio.get_running_loop().time()
        result = await harness.compact()
        return result, asyncio.get_running_loop().time() - started

    (result, elapsed), events = _run(tmp_path, server, monkeypatch, compact_then_abort,
                                     retry={"maxRetries": 3, "baseDelayMs": 30_000})
    assert result is None and elapsed < 10
    assert [e["type"] for e in _retries(events)] == ["summarization_retry_scheduled", "summarization_retry_finished"]
    assert len(server.requests) == 3
