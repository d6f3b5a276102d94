"""``run_batch(executor="ray")`` on a real local Ray: the same results as a local run."""

import asyncio
import socket

import pytest

from pi_plugins.batch.runner import run_batch

from support.batches import comparable, lister, read_jsonl, tasks
from support.llm_server import Reply

pytestmark = pytest.mark.process


@pytest.fixture
def local_ray(home):
    """A local Ray of two CPUs, started after the agent dir is set (its workers inherit
    the environment), shut down after the test."""
    import ray

    assert ray.util.get_node_ip_address() == "127.0.0.1"  # tests/conftest.py's switch
    ray.init(_node_ip_address="127.0.0.1", num_cpus=2, include_dashboard=False, log_to_driver=False,
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
    def without_host(path):  # a local result names the machine, a Ray one the node
        return comparable([{k: v for k, v in r.items() if k != "host"} for r in read_jsonl(path)])

    assert without_host(tmp_path / "ray.jsonl") == without_host(tmp_path / "local.jsonl")
    results = {r["id"]: r for r in on_ray}
    assert "refuses" in results["task-0005"]["error"]
    assert results["task-0003"]["text"] == "task number 3 saw: data.csv"
    # the Ray node each ran on: hostname and the node id's first 8 characters
    nodes = {f"{socket.gethostname()}/{n['NodeID'][:8]}" for n in local_ray.nodes() if n["Alive"]}
    assert {r["host"] for r in on_ray} == nodes and len(nodes) == 1
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
            [sys.executable, "-m", "pi_plugins.cli", "batch", str(tmp_path / "tasks.jsonl"), "--out",
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


def test_a_local_ray_from_pi_batch_listens_on_loopback_only(tmp_path, server, home):
    """The Ray `pi batch --executor ray` starts for itself is this machine's alone: its
    node address is 127.0.0.1 and no process of it listens on another address."""
    import json
    import os
    import shutil
    import subprocess
    import sys
    import tempfile

    from support.batches import write_jsonl
    from support.gates import Gate
    from support.listening import descendants, is_loopback, listened_on

    started, held = Gate(tmp_path / "started"), Gate(tmp_path / "held")
    server.push(Reply(tool_calls=[("bash", {"command": started.tells(held.holds("echo done"))})]),
                Reply(text="finished"))
    write_jsonl(tmp_path / "tasks.jsonl", [{"id": "only", "prompt": "run it", "cwd": str(tmp_path / "project")}])
    ray_tmp = tempfile.mkdtemp(prefix="pr", dir="/tmp")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path / "home"),
           "PI_CODING_AGENT_DIR": str(home), "RAY_TMPDIR": ray_tmp}
    batch = subprocess.Popen(
        [sys.executable, "-m", "pi_plugins.cli", "batch", str(tmp_path / "tasks.jsonl"), "--out",
         str(tmp_path / "r.jsonl"), "--executor", "ray", "--concurrency", "1"],
        cwd=tmp_path / "project", env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        started.wait(timeout=180)  # the task's command runs: the whole Ray is up
        ray_pids = descendants(batch.pid) | {int(p) for p in os.listdir("/proc")
                                             if p.isdigit() and ray_tmp in _cmdline(p)}
        listening = listened_on(ray_pids)
        held.open()
        out, err = batch.communicate(timeout=120)
    finally:
        held.close()
        if batch.poll() is None:
            batch.kill()
            batch.wait()
        shutil.rmtree(ray_tmp, ignore_errors=True)
    assert batch.returncode == 0, err
    assert listening, "Ray listens somewhere (its GCS and raylet at least)"
    assert [l for l in listening if not is_loopback(l[1])] == []
    [result] = read_jsonl(tmp_path / "r.jsonl")
    host, _, node = result["host"].partition("/")
    assert host == socket.gethostname() and len(node) == 8 and int(node, 16) >= 0


def test_a_batch_on_ray_sums_the_spend_of_its_workers_against_the_total_cost(tmp_path, server, home, local_ray):
    import json

    priced = {"id": "test-model", "cost": {"input": 1000, "output": 2000, "cacheRead": 0, "cacheWrite": 0}}
    (home / "models.json").write_text(json.dumps(server.models_json("local", models=[priced])))
    server.default = lambda request: Reply(text="done")  # $0.02 a task
    batch = [dict(t, tools=[]) for t in tasks(20, tmp_path / "project")]
    started = []

    def on_event(event):
        if event["type"] == "task_start":
            started.append(event["id"])

    results = asyncio.run(run_batch(batch, out=tmp_path / "out.jsonl", concurrency=2, executor="ray",
                                    max_total_cost=0.09, on_event=on_event))
    assert len(results) == 20
    done = [r for r in results if "error" not in r]
    # both workers' spend counts: $0.08 after four tasks, so the fifth starts, and perhaps
    # a sixth on the other worker at the same moment; after that none (not ten a worker)
    assert 5 <= len(done) <= len(started) <= 6, [r.get("error") for r in results]
    assert len(server.requests) == len(done)  # one started with the fifth may stop unsent
    stopped = [r for r in results if "error" in r]
    assert all(r["stop_reason"] == "budget" and r["error"] == "budget reached" for r in stopped), stopped
