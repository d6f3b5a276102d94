"""``run_batch(executor="ray")`` on a real local Ray: the same results as a local run."""

import asyncio
import socket

import pytest

from pi_plugins.batch.runner import run_batch

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


def test_pi_batch_on_ray_starts_a_local_ray_and_leaves_nothing_running(tmp_path, server, home):
    import json
    import os
    import shutil
    import subprocess
    import sys
    import tempfile

    from support.batches import write_jsonl

    server.default = lister
    write_jsonl(tmp_path / "tasks.jsonl", tasks(3, tmp_path / "project"))
    ray_tmp = tempfile.mkdtemp(prefix="pr", dir="/tmp")  # short: Ray's socket paths live in it
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path / "home"),
           "PI_CODING_AGENT_DIR": str(home), "RAY_TMPDIR": ray_tmp}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pi_core.app.cli", "batch", str(tmp_path / "tasks.jsonl"), "--out",
             str(tmp_path / "r.jsonl"), "--executor", "ray", "--concurrency", "2", "--mode", "json"],
            cwd=tmp_path / "project", env=env, capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stderr
        events = [json.loads(line) for line in done.stdout.splitlines()]  # nothing but events
        assert sorted(e["type"] for e in events) == ["task_end"] * 3 + ["task_start"] * 3
        results = read_jsonl(tmp_path / "r.jsonl")
        assert sorted(r["text"] for r in results) == [f"task number {n} saw: (empty directory)" for n in range(3)]
        left = [pid for pid in os.listdir("/proc") if pid.isdigit() and _cmdline(pid).find(ray_tmp) >= 0]
        assert left == []
    finally:
        shutil.rmtree(ray_tmp, ignore_errors=True)


def _cmdline(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""
