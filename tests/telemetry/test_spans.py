"""The telemetry plugin against a local OTLP/HTTP receiver: the span tree of a run, its
attributes and metrics, what content it records, and one trace per piece of work."""

import asyncio

import pytest

from pi_plugins.sdk import create_harness
from pi_core.app.settings import Settings
from pi_core.session import Session
from pi_core.testing.otlp import OtlpReceiver
from pi_plugins import telemetry

from support.llm_server import Reply

pytest.importorskip("opentelemetry.sdk")

SECRET = "sk-test-telemetry-key-0001"


@pytest.fixture
def receiver(monkeypatch):
    with OtlpReceiver() as running:
        for name in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
                     "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "TRACEPARENT", "OTEL_SDK_DISABLED"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", running.endpoint)
        monkeypatch.setenv("OTEL_SERVICE_NAME", "pi-under-test")
        yield running
        telemetry.shutdown()  # while the receiver still listens


@pytest.fixture
def agent_home(tmp_path, monkeypatch):
    home = tmp_path / "agent"
    home.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(home))
    return home


def run_parent(tmp_path, server, prompt="PARENT"):
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "a.txt").write_text("alpha\n")
    (work / "b.txt").write_text("beta\n")
    model = server.model("openai-completions")

    async def scenario():
        harness = await create_harness(
            model=model, session=Session.in_memory(str(work)), cwd=str(work), builtins=True,
            settings=Settings({"subagents": {"enabled": True}}), active_tools=["read", "subagent"],
            get_api_key=lambda m: SECRET)
        await harness.prompt(prompt)
        await harness.close()
        return harness

    return asyncio.run(scenario())


def two_tools_and_a_subagent(server):
    server.push(Reply(tool_calls=[("read", {"path": "a.txt"}), ("read", {"path": "b.txt"})]),
                Reply(tool_calls=[("subagent", {"tasks": [{"task": "CHILD TASK"}]})]),
                Reply(text="child answer"),
                Reply(text="parent answer"))


def by_name(spans, name):
    return [s for s in spans if s.name == name]


def test_a_run_with_two_tool_calls_and_a_subagent_is_one_trace_whose_tree_follows_the_work(
        tmp_path, server, receiver, agent_home):
    two_tools_and_a_subagent(server)
    harness = run_parent(tmp_path, server)
    assert harness.messages[-1].text == "parent answer"

    spans = receiver.spans  # flushed when the run ended: no waiting
    assert len({s.trace_id for s in spans}) == 1
    [parent_run] = [s for s in by_name(spans, "invoke_agent") if s.parent_id == ""]
    [child_run] = [s for s in by_name(spans, "invoke_agent") if s.parent_id != ""]
    model_id = server.model("openai-completions").id
    chats = by_name(spans, f"chat {model_id}")
    reads = by_name(spans, "execute_tool read")
    [subagent] = by_name(spans, "execute_tool subagent")

    assert [c.parent_id for c in chats].count(parent_run.span_id) == 3
    assert [c.parent_id for c in chats].count(child_run.span_id) == 1
    assert len(reads) == 2 and all(r.parent_id == parent_run.span_id for r in reads)
    assert subagent.parent_id == parent_run.span_id
    assert child_run.parent_id == subagent.span_id  # the child's run hangs under the tool that ran it
    assert all(s.service == "pi-under-test" for s in spans)

    chat = chats[0]
    assert chat.kind == 3  # CLIENT
    assert chat.attributes["gen_ai.operation.name"] == "chat"
    assert chat.attributes["gen_ai.provider.name"] == server.model("openai-completions").provider
    assert chat.attributes["gen_ai.request.model"] == model_id
    assert chat.attributes["gen_ai.response.model"]
    first = next(m for m in harness.messages if m.role == "assistant")
    assert chat.attributes["gen_ai.usage.input_tokens"] == first.usage.input > 0
    assert chat.attributes["gen_ai.usage.output_tokens"] == first.usage.output > 0
    assert chat.attributes["gen_ai.response.model"] == first.model
    assert chat.attributes["gen_ai.response.finish_reasons"] == ["toolUse"]
    assert "pi.usage.cost_usd" in chat.attributes
    assert {r.attributes["gen_ai.tool.call.id"] for r in reads} == {
        c.id for c in next(m for m in harness.messages if m.role == "assistant").tool_calls}
    assert all(r.attributes["gen_ai.tool.name"] == "read" for r in reads)
    assert all(r.attributes["gen_ai.operation.name"] == "execute_tool" for r in reads)
    assert parent_run.attributes["gen_ai.operation.name"] == "invoke_agent"
    own = [m for m in harness.messages if m.role == "assistant"]
    assert len(own) == 3  # its own three requests, not the child's
    assert parent_run.attributes["gen_ai.usage.input_tokens"] == sum(m.usage.input for m in own)

    names = {name for name, _, _ in receiver.metrics}
    assert {"gen_ai.client.token.usage", "gen_ai.client.operation.duration"} <= names
    kinds = {a.get("gen_ai.token.type") for name, a, _ in receiver.metrics if name == "gen_ai.client.token.usage"}
    assert kinds == {"input", "output"}


def test_without_the_capture_variable_no_content_is_recorded_and_a_key_never_is(
        tmp_path, server, receiver, agent_home):
    two_tools_and_a_subagent(server)
    run_parent(tmp_path, server)
    sent = b"".join(receiver.bodies)
    assert receiver.spans
    for content in (b"PARENT", b"CHILD TASK", b"a.txt", b"alpha", b"parent answer", b"child answer"):
        assert content not in sent
    assert SECRET.encode() not in sent


def test_with_the_capture_variable_prompts_answers_and_tool_arguments_are_recorded_but_not_the_key(
        tmp_path, server, receiver, agent_home, monkeypatch):
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    two_tools_and_a_subagent(server)
    run_parent(tmp_path, server)
    sent = b"".join(receiver.bodies)
    for content in (b"PARENT", b"CHILD TASK", b"a.txt", b"alpha", b"parent answer"):
        assert content in sent
    assert SECRET.encode() not in sent
    [read] = [s for s in by_name(receiver.spans, "execute_tool read")
              if "a.txt" in s.attributes["gen_ai.tool.call.arguments"]]
    assert "alpha" in read.attributes["gen_ai.tool.call.result"]


def test_a_traceparent_in_the_environment_makes_the_run_part_of_the_callers_trace(
        tmp_path, server, receiver, agent_home, monkeypatch):
    trace_id, caller = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    monkeypatch.setenv("TRACEPARENT", f"00-{trace_id}-{caller}-01")
    server.push(Reply(text="hello"))
    run_parent(tmp_path, server)
    [run] = by_name(receiver.spans, "invoke_agent")
    assert run.trace_id == trace_id and run.parent_id == caller
    assert {s.trace_id for s in receiver.spans} == {trace_id}


def test_a_retried_request_is_a_retry_span_under_the_failed_run_over_the_retried_one(tmp_path, server, receiver, agent_home):
    server.push(Reply(status=503, error="busy"), Reply(text="after the retry"))
    work = tmp_path / "work"
    work.mkdir()

    async def scenario():
        harness = await create_harness(
            model=server.model("openai-completions"), session=Session.in_memory(str(work)), cwd=str(work),
            builtins=True, settings=Settings({"retry": {"baseDelayMs": 1, "provider": {"maxRetries": 0}}}))
        await harness.prompt("hi")
        await harness.close()
        return harness

    harness = asyncio.run(scenario())
    assert harness.messages[-1].text == "after the retry"
    [retry] = by_name(receiver.spans, "retry")
    assert retry.attributes["pi.retry.success"] is True and retry.attributes["pi.retry.attempt"] == 1
    failed, retried = sorted(by_name(receiver.spans, "invoke_agent"), key=lambda s: s.start_ns)
    assert failed.status == 2  # ERROR
    assert retry.parent_id == failed.span_id and retried.parent_id == retry.span_id
    assert len({s.trace_id for s in receiver.spans}) == 1


def test_a_batch_is_one_trace_with_a_span_per_task_over_its_run(tmp_path, server, receiver, monkeypatch):
    import json

    from pi_plugins.batch.runner import run_batch
    from support.batches import lister, tasks

    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "models.json").write_text(json.dumps(server.models_json("local")))
    (tmp_path / "project").mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    server.default = lister
    batch = tasks(4, tmp_path / "project")
    results = asyncio.run(run_batch(batch, concurrency=2, cwd=str(tmp_path / "project")))
    assert len(results) == 4 and not any("error" in r for r in results)

    spans = receiver.spans
    assert len({s.trace_id for s in spans}) == 1
    [root] = by_name(spans, "pi batch")
    assert root.parent_id == "" and root.attributes["pi.batch.tasks"] == 4
    task_spans = by_name(spans, "batch_task")
    assert sorted(t.attributes["pi.batch.task.id"] for t in task_spans) == sorted(t["id"] for t in batch)
    assert all(t.parent_id == root.span_id for t in task_spans)
    runs = by_name(spans, "invoke_agent")
    assert sorted(r.parent_id for r in runs) == sorted(t.span_id for t in task_spans)
    assert len(by_name(spans, "execute_tool ls")) == 4


def test_an_unreachable_collector_never_breaks_a_run(tmp_path, server, agent_home, monkeypatch):
    import socket

    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{port}")
    try:
        two_tools_and_a_subagent(server)
        harness = run_parent(tmp_path, server)
    finally:
        telemetry.shutdown()
    assert harness.messages[-1].text == "parent answer"
    assert not any(m.role == "assistant" and m.stop_reason == "error" for m in harness.messages)


def test_a_compaction_is_a_span_with_its_reason_and_the_tokens_it_summarised(
        tmp_path, server, receiver, agent_home):
    server.push(Reply(text="first answer " * 20), Reply(text="second answer " * 20))
    server.default = lambda request: Reply(text="## Goal\nthe summary")
    work = tmp_path / "work"
    work.mkdir()

    async def scenario():
        harness = await create_harness(
            model=server.model("openai-completions"), session=Session.in_memory(str(work)), cwd=str(work),
            builtins=True, settings=Settings({"compaction": {"keepRecentTokens": 1}}))
        await harness.prompt("one")
        await harness.prompt("two")
        result = await harness.compact()
        await harness.close()
        return result

    result = asyncio.run(scenario())
    assert result is not None
    [compaction] = by_name(receiver.spans, "compaction")
    assert compaction.attributes["pi.compaction.reason"] == "manual"
    assert compaction.attributes["pi.compaction.tokens_before"] == result.tokens_before > 0
    assert compaction.attributes["pi.compaction.aborted"] is False
