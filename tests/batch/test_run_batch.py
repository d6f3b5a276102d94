"""The batch runner in the SDK: many agents in one event loop, results as each ends."""

import asyncio
import json

from pi_plugins.batch.runner import BatchError, read_tasks, run_batch

import pytest

from support.batches import lister, read_jsonl, tasks, write_jsonl

RESULT_KEYS = ["id", "session", "text", "stop_reason", "usage", "host"]


def test_a_failing_task_records_its_error_and_the_others_go_on(tmp_path, server, home):
    server.default = lister
    batch = tasks(3, tmp_path / "project")
    batch[1]["prompt"] = "please fail"
    batch.append({"id": "no-model", "prompt": "hi", "model": "nowhere/none"})
    batch.append({"id": "no-tool", "prompt": "hi", "tools": ["teleport"]})
    batch.append({"id": "no-cwd", "prompt": "hi", "cwd": str(tmp_path / "missing")})
    results = {r["id"]: r for r in asyncio.run(run_batch(batch, out=tmp_path / "out.jsonl", concurrency=4))}
    assert "missing is not a folder" in results["no-cwd"]["error"] and results["no-cwd"]["session"] is None
    assert "400" in results["task-0001"]["error"] and "refuses" in results["task-0001"]["error"]
    assert results["task-0001"]["stop_reason"] == "error" and results["task-0001"]["session"]
    assert "nowhere/none" in results["no-model"]["error"]
    assert "teleport" in results["no-tool"]["error"]
    for n in (0, 2):
        ok = results[f"task-000{n}"]
        assert "error" not in ok and ok["text"].startswith(f"task number {n} saw:")
    lines = read_jsonl(tmp_path / "out.jsonl")
    assert [list(line)[:6] for line in lines] == [RESULT_KEYS] * 6
    assert all(list(line)[6:] in ([], ["error"]) for line in lines)


def test_a_rerun_skips_finished_ids_and_runs_the_failed_ones_again(tmp_path, server, home):
    server.default = lister
    batch = tasks(4, tmp_path / "project")
    out = tmp_path / "out.jsonl"
    batch[2]["prompt"] = "fail this time"
    asyncio.run(run_batch(batch, out=out, concurrency=2))
    assert len(server.requests) == 3 * 2 + 1
    batch[2]["prompt"] = "task number 2"  # the server would now answer it
    again = asyncio.run(run_batch(batch, out=out, concurrency=2))
    assert [r["id"] for r in again] == ["task-0002"] and "error" not in again[0]
    assert len(server.requests) == 7 + 2
    lines = read_jsonl(out)
    assert [line["id"] for line in lines].count("task-0002") == 2  # the failure stays, the new line wins
    assert asyncio.run(run_batch(batch, out=out, concurrency=2)) == []
    assert len(server.requests) == 9


def test_a_torn_last_line_in_the_results_file_is_kept_and_rerun(tmp_path, server, home):
    server.default = lister
    batch = tasks(2, tmp_path / "project")
    out = tmp_path / "out.jsonl"
    asyncio.run(run_batch(batch[:1], out=out))
    out.write_text(out.read_text() + '{"id": "task-0001", "sess')
    asyncio.run(run_batch(batch, out=out))
    text = out.read_text()
    assert '{"id": "task-0001", "sess\n' in text
    assert [r["id"] for r in read_jsonl_lenient(out)] == ["task-0000", "task-0001"]


def read_jsonl_lenient(path):
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except ValueError:
            pass
    return rows


@pytest.mark.parametrize("line, problem", [
    ('{"id": "a"}', "'prompt' must be a non-empty string"),
    ('{"id": "a", "prompt": "x", "colour": 1}', "unknown key(s) colour"),
    ('{"id": "a", "prompt": "x", "tools": "ls"}', "'tools' must be a list"),
    ('not json', "not JSON"),
    ('{"id": "x", "prompt": "y"}', "the id 'x' is used twice"),
])
def test_a_bad_tasks_file_is_refused_before_anything_runs(tmp_path, line, problem):
    path = write_jsonl(tmp_path / "tasks.jsonl", [{"id": "x", "prompt": "fine"}])
    path.write_text(path.read_text() + "\n" + line + "\n")
    with pytest.raises(BatchError, match=problem.replace("(", r"\(").replace(")", r"\)")) as info:
        read_tasks(path)
    assert str(path) in str(info.value) or "task" in str(info.value)
