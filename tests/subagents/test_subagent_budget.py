"""A subagent's spend counts toward its parent's budget, and the child stops at its
parent's limit. Every scripted reply uses 10 input and 5 output tokens; at $1000 / $2000
per million each request costs $0.02."""

import asyncio

from support.llm_server import Reply

from pi_plugins.sdk import create_harness
from pi_core.app.settings import Settings
from pi_core.protocol.model import ModelCost
from pi_core.session import Session
from pi_plugins import budget as budgets


async def _parent(tmp_path, server, max_cost):
    (tmp_path / "work").mkdir(exist_ok=True)
    model = server.model("openai-completions", cost=ModelCost(input=1000, output=2000))
    harness = await create_harness(
        model=model, session=Session.create(tmp_path / "work", tmp_path / "sessions"),
        cwd=str(tmp_path / "work"), builtins=True, active_tools=["ls", "subagent"],
        settings=Settings({"budget": {"maxCostUsd": max_cost}}))
    events = []
    harness.subscribe(events.append)
    return harness, events


def _script(server):
    server.push(Reply(text="Delegating.", tool_calls=[("subagent", {"task": "dig"})]),
                Reply(text="child 1", tool_calls=[("ls", {"path": "."})]),
                Reply(text="child 2", tool_calls=[("ls", {"path": "."})]),
                Reply(text="child done"), Reply(text="parent done"))


def test_a_child_stops_at_its_parents_limit_and_its_spend_stops_the_parent(tmp_path, server, agent_home):
    _script(server)

    async def scenario():
        harness, events = await _parent(tmp_path, server, 0.05)
        await harness.prompt("PARENT")
        await harness.close()
        return harness, events

    harness, events = asyncio.run(scenario())
    # parent $0.02, child $0.02 + $0.02: the child's third request would start at $0.06
    assert len(server.requests) == 3
    result = next(m for m in harness.messages if m.role == "toolResult")
    [child] = result.details["results"]
    assert child["status"] == "failed" and child["stopReason"] == "budget"
    assert child["error"].startswith("budget reached: cost")
    # the parent's next request would start past the limit too: the run ends there
    assert budgets.stop_of(harness.ctx) is not None and budgets.stop_of(harness.ctx).limit == "cost"
    assert abs(budgets.stop_of(harness.ctx).spent - 0.06) < 1e-9
    assert [e.type for e in events][-3:] == ["budget_exceeded", "agent_end", "agent_settled"]


def test_a_finished_childs_spend_counts_toward_the_parent_and_a_reopened_parent(tmp_path, server, agent_home):
    _script(server)

    async def scenario():
        harness, _ = await _parent(tmp_path, server, 0.07)
        await harness.prompt("PARENT")
        await harness.close()
        reopened = await create_harness(
            model=harness.model, session=Session.open(harness.session.file), cwd=str(tmp_path / "work"),
            builtins=True, settings=Settings({}))
        spent = budgets.spent(reopened.ctx)
        await reopened.close()
        return harness, spent

    harness, spent = asyncio.run(scenario())
    assert len(server.requests) == 4  # the child finished its answer at $0.08 in all
    result = next(m for m in harness.messages if m.role == "toolResult")
    assert result.details["results"][0]["status"] == "done"
    spent_by_child = result.details["spent"]
    assert spent_by_child["tokens"] == 45 and spent_by_child["turns"] == 3
    assert abs(spent_by_child["cost"] - 0.06) < 1e-9
    assert budgets.stop_of(harness.ctx) is not None and abs(budgets.stop_of(harness.ctx).spent - 0.08) < 1e-9
    assert spent.turns == 4 and spent.tokens == 60 and abs(spent.cost - 0.08) < 1e-9
