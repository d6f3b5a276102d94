"""Budgets in a batch: per-task limits and ``max_total_cost`` for the whole batch. The
test model costs $1000 / $2000 per million tokens: a plain answer (10 in, 5 out) costs
$0.02; the lister's two requests cost $0.014 and $0.028."""

import asyncio
import io
import json

import pytest

from pi_plugins.batch.cli import run_batch_command
from pi_plugins.batch.runner import BatchError, run_batch

from support.batches import lister, read_jsonl, tasks, write_jsonl
from support.llm_server import Reply

PRICED = {"id": "test-model", "cost": {"input": 1000, "output": 2000, "cacheRead": 0, "cacheWrite": 0}}


@pytest.fixture
def priced(home, server):
    (home / "models.json").write_text(json.dumps(server.models_json("local", models=[PRICED])))
    return home


def _answer(request):
    return Reply(text="done")


def _plain(count, tmp_path):
    return [dict(t, tools=[]) for t in tasks(count, tmp_path / "project")]


def test_a_twenty_task_batch_starts_no_task_past_its_total_cost_and_marks_the_rest_budget(
        tmp_path, server, priced):
    server.default = _answer
    out = tmp_path / "out.jsonl"
    events = []
    results = asyncio.run(run_batch(_plain(20, tmp_path), out=out, concurrency=1,
                                    max_total_cost=0.09, on_event=events.append))
    # $0.08 after four tasks: the fifth starts, and then $0.10 is past the limit
    assert len(server.requests) == 5
    assert [e["id"] for e in events if e["type"] == "task_start"] == [f"task-{n:04d}" for n in range(5)]
    lines = {r["id"]: r for r in read_jsonl(out)}
    assert len(lines) == len(results) == 20
    for n in range(20):
        line = lines[f"task-{n:04d}"]
        if n < 5:
            assert "error" not in line and line["text"] == "done"
        else:
            assert line["stop_reason"] == "budget" and line["error"] == "budget reached"
            assert line["session"] is None


def test_a_rerun_with_a_higher_total_takes_up_the_budget_stopped_tasks(tmp_path, server, priced):
    server.default = _answer
    out = tmp_path / "out.jsonl"
    batch = _plain(20, tmp_path)
    asyncio.run(run_batch(batch, out=out, concurrency=1, max_total_cost=0.09))
    # the first run's $0.10 counts: up to $0.19 five more tasks start
    again = asyncio.run(run_batch(batch, out=out, concurrency=1, max_total_cost=0.19))
    assert len(server.requests) == 10
    assert [r["id"] for r in again if "error" not in r] == [f"task-{n:04d}" for n in range(5, 10)]
    assert all(r["stop_reason"] == "budget" for r in again if "error" in r) and len(again) == 15


def test_running_tasks_end_at_their_next_request_once_the_total_is_reached(tmp_path, server, priced):
    server.default = lister
    finished_cost, started_under = [0.0], []

    def on_event(event):
        if event["type"] == "task_start":
            started_under.append(finished_cost[0])
        else:
            finished_cost[0] += event["usage"]["cost"]["total"]

    results = asyncio.run(run_batch(tasks(20, tmp_path / "project"), concurrency=4,
                                    max_total_cost=0.05, on_event=on_event))
    assert len(results) == 20
    assert all(cost < 0.05 for cost in started_under)  # no task started past the limit
    spent = sum(r["usage"]["cost"]["total"] for r in results)
    assert spent < 0.05 + 4 * 0.028  # at most one request of each running task past it
    stopped = [r for r in results if "error" in r]
    assert stopped and all(r["stop_reason"] == "budget" and r["error"] == "budget reached" for r in stopped)


def test_a_per_task_limit_stops_each_task(tmp_path, server, priced):
    server.default = lister
    results = asyncio.run(run_batch(tasks(3, tmp_path / "project"), concurrency=3, budget={"turns": "1"}))
    assert len(server.requests) == 3
    assert all(r["stop_reason"] == "budget" and r["error"] == "budget reached" for r in results)


def test_pi_batch_exits_three_and_says_budget_reached(tmp_path, server, priced, monkeypatch):
    server.default = _answer
    monkeypatch.chdir(tmp_path / "project")
    write_jsonl(tmp_path / "tasks.jsonl", _plain(4, tmp_path))
    stdout, stderr = io.StringIO(), io.StringIO()
    code = asyncio.run(run_batch_command(
        str(tmp_path / "tasks.jsonl"), str(tmp_path / "out.jsonl"), concurrency=1, mode="text", model=None,
        executor="local", ray_address=None, session_dir=None, extensions=[], no_extensions=True,
        stdout=stdout, stderr=stderr, max_total_cost="0.03"))
    assert code == 3 and len(server.requests) == 2
    assert stderr.getvalue().startswith("budget reached: 2 of 4 tasks not finished")


@pytest.mark.parametrize("limits", [{"max_total_cost": "-1"}, {"budget": {"tokens": "many"}}])
def test_a_bad_batch_limit_is_an_error_before_any_task_runs(tmp_path, server, priced, limits):
    with pytest.raises(BatchError, match="must be a number|not a number"):
        asyncio.run(run_batch(_plain(2, tmp_path), **limits))
    assert not server.requests


def test_a_task_stopped_before_its_first_request_is_marked_budget(tmp_path, server, priced):
    server.default = _answer
    results = asyncio.run(run_batch(_plain(2, tmp_path), concurrency=1, budget={"turns": "0"}))
    assert not server.requests
    assert all(r["stop_reason"] == "budget" and r["error"] == "budget reached" and r["session"]
               for r in results)
