"""``pi batch`` in a real subprocess: results file, JSON events, exit status, resume."""

import json
import os
import subprocess
import sys

from support.batches import comparable, lister, read_jsonl, tasks, write_jsonl

import pytest

pytestmark = pytest.mark.process


def pi_batch(tmp_path, home, *args):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path / "home"),
           "PI_CODING_AGENT_DIR": str(home), "PYTHONUNBUFFERED": "1"}
    return subprocess.run([sys.executable, "-m", "pi_plugins.cli", "batch", *args], cwd=tmp_path / "project",
                          env=env, capture_output=True, text=True, timeout=120)


def test_pi_batch_of_two_hundred_tasks_at_concurrency_fifty_gives_the_results_of_a_serial_run(
        tmp_path, server, home):
    server.default = lister
    (tmp_path / "project" / "notes.txt").write_text("hello\n")
    batch = tasks(200, tmp_path / "project")
    write_jsonl(tmp_path / "tasks.jsonl", batch)
    serial = pi_batch(tmp_path, home, str(tmp_path / "tasks.jsonl"), "--out", str(tmp_path / "serial.jsonl"),
                      "--concurrency", "1")
    assert serial.returncode == 0, serial.stderr
    assert len(server.requests) == 400
    parallel = pi_batch(tmp_path, home, str(tmp_path / "tasks.jsonl"), "--out", str(tmp_path / "parallel.jsonl"),
                        "--concurrency", "50")
    assert parallel.returncode == 0, parallel.stderr
    assert len(server.requests) == 800
    serial_lines, parallel_lines = read_jsonl(tmp_path / "serial.jsonl"), read_jsonl(tmp_path / "parallel.jsonl")
    assert [r["id"] for r in serial_lines] == [t["id"] for t in batch]  # one at a time, in order
    assert [r["id"] for r in parallel_lines] != [t["id"] for t in batch]  # really interleaved
    # texts, tool calls and session contents (apart from ids and timestamps) are equal
    assert comparable(parallel_lines) == comparable(serial_lines)
    seventh = comparable(parallel_lines)["task-0007"]
    assert seventh["text"] == "task number 7 saw: notes.txt" and seventh["stop_reason"] == "stop"
    assert seventh["usage"]["input"] == 30 and seventh["usage"]["output"] == 6
    calls = [b for line in seventh["session"] if line["type"] == "message"
             for b in line["message"]["content"] if isinstance(b, dict) and b.get("type") == "toolCall"]
    assert [(c["name"], c["arguments"]) for c in calls] == [("ls", {"path": "."})]
    sessions = {r["session"] for r in serial_lines + parallel_lines}
    assert len(sessions) == 400 and all(s.startswith(str(home / "sessions")) for s in sessions)


def test_pi_batch_writes_results_prints_events_and_exits_one_when_a_task_failed(tmp_path, server, home):
    server.default = lister
    batch = tasks(5, tmp_path / "project")
    batch[3]["prompt"] = "fail now"
    write_jsonl(tmp_path / "tasks.jsonl", batch)
    out = tmp_path / "results.jsonl"
    done = pi_batch(tmp_path, home, str(tmp_path / "tasks.jsonl"), "--out", str(out),
                    "--concurrency", "3", "--mode", "json")
    assert done.returncode == 1, done.stderr
    assert "1 of 5 tasks failed: task-0003" in done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted(e["id"] for e in events if e["type"] == "task_start") == [t["id"] for t in batch]
    ends = {e["id"]: e for e in events if e["type"] == "task_end"}
    results = {r["id"]: r for r in read_jsonl(out)}
    assert set(ends) == set(results) == {t["id"] for t in batch}
    assert all({k: v for k, v in ends[i].items() if k != "type"} == results[i] for i in results)
    assert "refuses" in results["task-0003"]["error"]
    assert results["task-0000"]["text"] == "task number 0 saw: (empty directory)"
    assert os.path.exists(results["task-0000"]["session"])
    # fixed on the server's side: the rerun runs only the failed task, and then all succeeded
    server.default = lambda r: lister(r) if "fail" not in json.dumps(r.body) else lister_ok(r)
    again = pi_batch(tmp_path, home, str(tmp_path / "tasks.jsonl"), "--out", str(out), "--mode", "json")
    assert again.returncode == 0, again.stderr
    assert [json.loads(line)["id"] for line in again.stdout.splitlines()] == ["task-0003", "task-0003"]


def lister_ok(request):
    from support.llm_server import Reply

    return Reply(text="fixed")


def test_pi_batch_refuses_a_bad_tasks_file_with_its_line(tmp_path, server, home):
    (tmp_path / "tasks.jsonl").write_text('{"id": "a", "prompt": "x"}\n{"id": "b"}\n')
    done = pi_batch(tmp_path, home, str(tmp_path / "tasks.jsonl"), "--out", str(tmp_path / "r.jsonl"))
    assert done.returncode == 2
    assert "tasks.jsonl:2: 'prompt' must be a non-empty string" in done.stderr
    assert not (tmp_path / "r.jsonl").exists() and server.requests == []


def test_pi_batch_applies_model_to_tasks_without_one_and_prints_nothing_without_json(tmp_path, server, home):
    server.default = lister
    write_jsonl(tmp_path / "tasks.jsonl", [{"id": "only", "prompt": "hello", "tools": ["ls"]}])
    done = pi_batch(tmp_path, home, str(tmp_path / "tasks.jsonl"), "--out", str(tmp_path / "r.jsonl"),
                    "--model", "local/test-model")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and done.stderr == ""  # stderr is not a terminal: no progress bar
    assert read_jsonl(tmp_path / "r.jsonl")[0]["text"] == "hello saw: (empty directory)"
    assert server.requests[0].body["model"] == "test-model"


def test_pi_batch_draws_a_progress_bar_on_a_terminal_stderr(tmp_path, server, home):
    import pty

    server.default = lister
    write_jsonl(tmp_path / "tasks.jsonl", tasks(3, tmp_path / "project"))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path / "home"),
           "PI_CODING_AGENT_DIR": str(home)}
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "pi_plugins.cli", "batch", str(tmp_path / "tasks.jsonl"), "--out",
         str(tmp_path / "r.jsonl")], cwd=tmp_path / "project", env=env, stdout=subprocess.PIPE,
        stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the terminal closed: the process ended
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    assert process.wait(timeout=60) == 0
    assert process.stdout.read() == b""
    text = seen.decode()
    assert "\r[" in text and "] 0/3" in text
    assert "[" + "#" * 30 + "] 3/3" in text


def test_interrupting_pi_batch_keeps_finished_results_and_a_rerun_does_the_rest(tmp_path, server, home):
    import signal
    import threading
    import time

    from support.llm_server import Reply

    release = threading.Event()

    def route(request):
        if "slow" in json.dumps(request.body):
            release.wait(timeout=30)
            return Reply(text="late")
        return lister(request)

    server.default = route
    batch = tasks(4, tmp_path / "project")
    batch[2]["prompt"] = batch[3]["prompt"] = "slow one"
    write_jsonl(tmp_path / "tasks.jsonl", batch)
    out = tmp_path / "results.jsonl"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path / "home"),
           "PI_CODING_AGENT_DIR": str(home)}
    process = subprocess.Popen(
        [sys.executable, "-m", "pi_plugins.cli", "batch", str(tmp_path / "tasks.jsonl"), "--out", str(out),
         "--concurrency", "4"], cwd=tmp_path / "project", env=env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (
                out.exists() and len(out.read_text().splitlines()) == 2
                and sum("slow" in json.dumps(r.body) for r in server.requests) == 2):
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    finally:
        release.set()
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert sorted(r["id"] for r in read_jsonl(out)) == ["task-0000", "task-0001"]
    again = pi_batch(tmp_path, home, str(tmp_path / "tasks.jsonl"), "--out", str(out))
    assert again.returncode == 0, again.stderr
    assert sorted(r["id"] for r in read_jsonl(out)) == [t["id"] for t in batch]
