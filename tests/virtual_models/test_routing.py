"""Virtual models (pi 1.6's ``docs/virtual-models.md``), in process against the scripted
server: a plugin declares ``router/auto``, which sends short prompts to ``local/small-model``
and long ones to ``local/big-model``. What is checked is what reaches the server and what
the session file keeps: the selection in ``model_change``, the physical model and level on
each answer, the router state in ``pi.virtual-model-state`` entries."""

from __future__ import annotations

import asyncio
import json

import pytest

from pi_core import Route, Session, VirtualModel, hookimpl
from pi_core.app.settings import Settings
from pi_plugins.sdk import create_harness
from support.llm_server import COMPLETIONS, Reply

LONG = "a prompt of more than twenty characters"


def prompt_text(request) -> str:
    last = next(m for m in reversed(request.messages) if m.role == "user")
    return last.content if isinstance(last.content, str) else "".join(getattr(c, "text", "") for c in last.content)


class Router:
    """``router/auto``: routes by the prompt's length and counts its routings in its state."""

    def __init__(self, server, route=None, **virtual):
        self.server, self.seen = server, []
        self.route = route or self.by_length
        self.virtual = {"thinking_levels": ["low", "high"], **virtual}

    def by_length(self, request, ctx):
        model_id = "big-model" if len(prompt_text(request)) > 20 else "small-model"
        count = (request.state or {}).get("count", 0) + 1
        return Route(model=ctx.model_registry.find("local", model_id), thinking_level="medium",
                     state={"count": count})

    def routed(self, request, ctx):
        self.seen.append(request)
        return self.route(request, ctx)

    @hookimpl
    def register_models(self, ctx):
        return [self.server.model(COMPLETIONS, id="small-model", provider="local", reasoning=True),
                self.server.model(COMPLETIONS, id="big-model", provider="local"),
                VirtualModel(provider="router", id="auto", name="Auto", route=self.routed, **self.virtual)]


@pytest.fixture
def agent_dir(tmp_path, monkeypatch):
    folder = tmp_path / "agent"
    folder.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(folder))
    return folder


def run(tmp_path, router, prompts, *, model="router/auto:high", settings=None, session=None):
    session = session or Session.create(tmp_path / "work", tmp_path / "sessions")

    async def scenario():
        harness = await create_harness(router, model=model, builtins=True, session=session,
                                       cwd=str(tmp_path), settings=Settings({"retry": {"baseDelayMs": 1, **(settings or {}).get("retry", {})}}))
        for text in prompts:
            await harness.prompt(text)
        await harness.close()
        return harness

    harness = asyncio.run(scenario())
    return harness, [json.loads(line) for line in session.file.read_text().splitlines()]


def answers(entries):
    return [e["message"] for e in entries if e["type"] == "message" and e["message"]["role"] == "assistant"]


def test_each_prompt_reaches_the_model_its_length_routes_to(tmp_path, server, agent_dir):
    server.push(Reply(text="short answer"), Reply(text="long answer"))
    router = Router(server)
    _, entries = run(tmp_path, router, ["hi", LONG])
    assert [r.model for r in server.requests] == ["small-model", "big-model"]
    assert [(a["provider"], a["model"], a["thinkingLevel"]) for a in answers(entries)] == [
        ("local", "small-model", "medium"), ("local", "big-model", "off")]  # clamped: big-model does not reason
    assert [(r.reason, r.thinking_level, r.state) for r in router.seen] == [
        ("user", "high", None), ("user", "high", {"count": 1})]
    assert router.seen[1].previous.model.key == "local/small-model"
    assert router.seen[1].previous.thinking_level == "medium"


def test_the_session_keeps_the_selection_and_the_router_state_as_pi16_writes_them(tmp_path, server, agent_dir):
    server.push(Reply(text="short answer"))
    _, entries = run(tmp_path, Router(server), ["hi"])
    kinds = [e["type"] if e["type"] != "message" else e["message"]["role"] for e in entries]
    assert kinds == ["session", "model_change", "thinking_level_change", "system", "user", "custom", "assistant"]
    assert {k: entries[1][k] for k in ("provider", "modelId")} == {"provider": "router", "modelId": "auto"}
    assert entries[2]["thinkingLevel"] == "high"  # the selection's level
    assert entries[5]["customType"] == "pi.virtual-model-state"
    assert entries[5]["data"] == {"provider": "router", "modelId": "auto", "state": {"count": 1}}


def test_a_tool_follow_up_is_a_continuation_routed_again(tmp_path, server, agent_dir):
    server.push(Reply(tool_calls=[("bash", {"command": "echo hi"})]), Reply(text="done"))

    def sticky(request, ctx):
        if request.reason != "user" and request.previous:
            return Route(model=request.previous.model, thinking_level=request.previous.thinking_level)
        return Route(model="local/small-model", thinking_level="low")

    router = Router(server, route=sticky)
    run(tmp_path, router, ["run it"])
    assert [r.reason for r in router.seen] == ["user", "continuation"]
    assert [r.model for r in server.requests] == ["small-model", "small-model"]


def test_a_retry_is_routed_with_the_failed_request(tmp_path, server, agent_dir):
    server.push(Reply(status=500, error="boom"), Reply(text="after retry"))

    def away_on_failure(request, ctx):
        return Route(model="local/big-model" if request.reason == "retry" else "local/small-model")

    router = Router(server, route=away_on_failure)
    # the harness's retry (the provider's own would send the same request again, unrouted)
    _, entries = run(tmp_path, router, ["hi"], settings={"retry": {"provider": {"maxRetries": 0}}})
    assert [r.reason for r in router.seen] == ["user", "retry"]
    failed = router.seen[1].failed
    assert failed.model.key == "local/small-model" and failed.message.stop_reason == "error"
    assert "boom" in failed.message.error_message
    assert [r.model for r in server.requests] == ["small-model", "big-model"]
    assert answers(entries)[-1]["model"] == "big-model"


def test_state_returned_unchanged_is_not_stored_again(tmp_path, server, agent_dir):
    server.push(Reply(text="one"), Reply(text="two"))

    def keeps(request, ctx):
        return Route(model="local/small-model", state=request.state if request.state else {"phase": "plan"})

    _, entries = run(tmp_path, Router(server, route=keeps), ["a", "b"])
    stored = [e["data"]["state"] for e in entries if e["type"] == "custom"]
    assert stored == [{"phase": "plan"}]


@pytest.mark.parametrize(("route", "error"), [
    (lambda request, ctx: Route(model="local/no-such-model"),
     "Virtual model router/auto routed to local/no-such-model, which is not a known model."),
    (lambda request, ctx: {"model": None},
     "Virtual model router/auto routed to no model."),
    (lambda request, ctx: Route(model="router/auto"),
     "Virtual model router/auto routed to router/auto, which is not a physical model."),
    (lambda request, ctx: 1 / 0,
     "Virtual model router/auto failed to route: ZeroDivisionError: division by zero"),
], ids=["unknown", "none", "virtual", "raises"])
def test_a_routing_that_fails_ends_the_request_with_an_error_that_says_why(tmp_path, server, agent_dir,
                                                                           route, error):
    harness, entries = run(tmp_path, Router(server, route=route), ["hi"])
    assert server.requests == []  # nothing was sent
    [answer] = answers(entries)
    assert answer["stopReason"] == "error"
    assert answer["errorMessage"].startswith(error)
    assert (answer["provider"], answer["model"]) == ("router", "auto")
    assert harness.model.key == "router/auto"  # the selection stays


def test_a_resumed_session_restores_the_virtual_selection(tmp_path, server, agent_dir):
    server.push(Reply(text="one"), Reply(text="two"))
    router = Router(server)
    run(tmp_path, router, ["hi"])
    [path] = (tmp_path / "sessions").glob("*.jsonl")
    harness, entries = run(tmp_path, router, [LONG], model=None, session=Session.open(path))
    assert harness.model.key == "router/auto"
    assert [e["type"] for e in entries].count("model_change") == 1  # nothing new to record
    assert router.seen[-1].state == {"count": 1}  # the branch's state came back
    assert server.requests[-1].model == "big-model"


def test_a_summary_request_is_routed_as_direct(tmp_path, server, agent_dir):
    server.push(Reply(text="one"), Reply(text="the summary"))
    router = Router(server)

    async def scenario():
        harness = await create_harness(router, model="router/auto", builtins=True, cwd=str(tmp_path),
                                       settings=Settings({}))
        await harness.prompt("hi")
        summary = await harness.ctx.summarize("Summarise.", LONG, 100)
        await harness.close()
        return summary

    assert asyncio.run(scenario()) == "the summary"
    assert router.seen[-1].reason == "direct" and router.seen[-1].state is None
    assert server.requests[-1].model == "big-model"


def test_a_resumed_session_whose_virtual_model_is_gone_takes_the_model_that_answered_last(
        tmp_path, server, agent_dir):
    server.push(Reply(text="one"), Reply(text="two"))
    run(tmp_path, Router(server), ["hi"])
    [path] = (tmp_path / "sessions").glob("*.jsonl")

    class PhysicalOnly:
        @hookimpl
        def register_models(self, ctx):
            return [server.model(COMPLETIONS, id="small-model", provider="local", reasoning=True)]

    harness, entries = run(tmp_path, PhysicalOnly(), ["again"], model=None, session=Session.open(path))
    assert harness.model.key == "local/small-model"
    # as pi 1.6: the fallback is not recorded as a model change
    assert [(e["provider"], e["modelId"]) for e in entries if e["type"] == "model_change"] == [("router", "auto")]
    assert server.requests[-1].model == "small-model"


def test_compaction_budgets_use_the_window_of_the_model_that_answered_last(tmp_path, server, agent_dir):
    """pi 1.6: a virtual model that declares no limits is measured by the physical model
    of the latest answer, so its budgets are not cut to nothing by a window of 0."""
    budgets = []

    class Recorder:
        @hookimpl
        def session_before_compact(self, event):
            budgets.append((event.reserve_tokens, event.keep_recent_tokens))

    router = Router(server)
    server.push(Reply(text="short answer"), Reply(text="Summary of the conversation."))
    session = Session.create(tmp_path / "work", tmp_path / "sessions")

    async def scenario():
        harness = await create_harness(router, Recorder(), model="router/auto", builtins=True, session=session,
                                       cwd=str(tmp_path), settings=Settings({}))
        await harness.prompt("hi")
        await harness.compact()
        window = harness.model_registry.find("local", "small-model").context_window
        await harness.close()
        return window

    window = asyncio.run(scenario())
    assert window > 4 * 20000  # the settings' budgets fit whole: none is cut by the window
    assert budgets == [(16384, 20000)]  # with the virtual model's own window (0): (1, 1)
