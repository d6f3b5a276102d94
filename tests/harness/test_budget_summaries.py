"""Under a budget, compactions and branch summaries count: their summary requests' cost
and tokens are recorded on the path (the entry's ``usage``, where pi 1.6 writes it) and
survive a reopen. Every reply uses 10 + 5 tokens."""

import asyncio
import json

from support.llm_server import Reply

from pi_plugins.sdk import create_harness
from pi_core.app.settings import Settings
from pi_core.protocol.model import ModelCost
from pi_core.session import Session
from pi_plugins import budget as budgets


async def _harness(tmp_path, server, settings, session=None):
    (tmp_path / "work").mkdir(exist_ok=True)
    model = server.model("openai-completions", cost=ModelCost(input=1000, output=2000))
    return await create_harness(
        model=model, session=session or Session.create(tmp_path / "work", tmp_path / "sessions"),
        cwd=str(tmp_path / "work"), builtins=True, active_tools=[],
        settings=Settings({"compaction": {"keepRecentTokens": 1}, **settings}))


def _scenario(tmp_path, server, settings, monkeypatch):
    (tmp_path / "agent").mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    server.push(*[Reply(text=f"answer {n}") for n in range(3)])
    server.default = lambda request: Reply(text="a summary")  # however many a summary takes

    async def go():
        harness = await _harness(tmp_path, server, settings)
        for n in range(3):
            await harness.prompt(f"question {n}")
        first_answer = next(e.id for e in harness.session.path()
                            if getattr(getattr(e, "message", None), "role", None) == "assistant")
        assert await harness.compact() is not None
        after_compaction, compaction_requests = budgets.spent(harness.ctx), len(server.requests) - 3
        before_tree = len(server.requests)
        assert await harness.navigate_tree(first_answer, summarize=True)
        after_tree, tree_requests = budgets.spent(harness.ctx), len(server.requests) - before_tree
        file = harness.session.file
        await harness.close()
        reopened = await _harness(tmp_path, server, settings, Session.open(file))
        again = budgets.spent(reopened.ctx)
        await reopened.close()
        return after_compaction, compaction_requests, (after_tree, tree_requests), again, file

    return asyncio.run(go())


def test_a_compaction_and_a_branch_summary_count_toward_the_budget(tmp_path, server, monkeypatch):
    budget = {"budget": {"maxTokens": 10_000}}
    after_compaction, compaction_requests, after_tree, again, file = _scenario(tmp_path, server, budget, monkeypatch)
    requests = 3 + compaction_requests
    assert compaction_requests >= 1 and len(server.requests) > requests  # the tree's summary
    assert after_compaction.tokens == 15 * requests and after_compaction.turns == 3  # a summary is no turn
    assert abs(after_compaction.cost - 0.02 * requests) < 1e-9
    # the path now: the first answer, then the summary of the branch left (whose own
    # spend is no longer on the path)
    after_tree, tree_requests = after_tree
    assert tree_requests >= 1
    assert after_tree.tokens == 15 * (1 + tree_requests) and after_tree.turns == 1
    lines = [json.loads(line) for line in open(file)]
    summaries = [line for line in lines if line["type"] in ("compaction", "branch_summary")]
    assert [s["usage"]["input"] + s["usage"]["output"] for s in summaries] == [
        15 * compaction_requests, 15 * tree_requests]
    assert again == after_tree  # reopened, the session has spent the same


def test_summaries_carry_their_usage_without_a_budget_too_as_pi_writes_them(
        tmp_path, server, monkeypatch):
    _scenario(tmp_path, server, {}, monkeypatch)
    [file] = (tmp_path / "sessions").iterdir()
    lines = [json.loads(line) for line in open(file)]
    assert "summary_usage" not in file.read_text()
    assert all(line["usage"]["totalTokens"] > 0 for line in lines
               if line["type"] in ("compaction", "branch_summary"))
