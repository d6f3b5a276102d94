"""``run_batch(executor="ray")`` on a real local Ray: the same results as a local run."""

import asyncio
import socket

import pytest

from pi_core.batch import run_batch

from support.batches import comparable, lister, read_jsonl, tasks

pytestmark = pytest.mark.process


@pytest.fixture
def local_ray(home):
    """A local Ray of two CPUs, started after the agent dir is set (its workers inherit
    the environment), shut down after the test."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             object_store_memory=80 * 1024 * 1024)
    try:
        yield ray
    finally:
        ray.shutdown()


def test_a_batch_on_a_local_ray_gives_the_results_of_a_local_run(tmp_path, server, home, local_ray):
    server.default = lister
    (tmp_path / "project" / "data.csv").write_text("x\n")
    batch = tasks(12, tmp_path / "project")
    batch[5]["prompt"] = "fail on purpose"
    local = asyncio.run(run_batch(batch, out=tmp_path / "local.jsonl", concurrency=4))
    on_ray = asyncio.run(run_batch(batch, out=tmp_path / "ray.jsonl", concurrency=4, executor="ray"))
    assert len(local) == len(on_ray) == 12
    assert comparable(read_jsonl(tmp_path / "ray.jsonl")) == comparable(read_jsonl(tmp_path / "local.jsonl"))
    results = {r["id"]: r for r in on_ray}
    assert "refuses" in results["task-0005"]["error"]
    assert results["task-0003"]["text"] == "task number 3 saw: data.csv"
    assert {r["host"] for r in on_ray} == {socket.gethostname()}
    assert all(r["session"].startswith(str(home / "sessions")) for r in on_ray)
    # the resume rule is the local one: only the failed task runs again
    before = len(server.requests)
    again = asyncio.run(run_batch(batch, out=tmp_path / "ray.jsonl", concurrency=4, executor="ray"))
    assert [r["id"] for r in again] == ["task-0005"] and len(server.requests) == before + 1
