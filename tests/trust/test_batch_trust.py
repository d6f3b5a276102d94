"""pi batch cannot ask either: a task folder's protected resources load with -a, or a
saved decision; without one they are skipped, and one line says so."""

import json
import subprocess
import sys

import pytest

from support.llm_server import Reply

pytestmark = pytest.mark.process


def _batch(project, tmp_path, *flags):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "t1", "prompt": "hi"}) + "\n")
    out = tmp_path / f"results{len(flags)}.jsonl"
    done = subprocess.run([sys.executable, "-m", "pi_plugins.cli", "batch", str(tasks), "--out", str(out),
                           "--model", "local/test-model", *flags], cwd=project.cwd, env=project.env,
                          capture_output=True, text=True, timeout=120)
    return done, [json.loads(line) for line in out.read_text().splitlines()]


def test_a_batch_skips_an_untrusted_project_and_loads_it_with_approve(project, server, tmp_path):
    server.push(Reply(text="one"), Reply(text="two"))
    done, [result] = _batch(project, tmp_path)
    assert done.returncode == 0, done.stderr
    assert result["text"] == "one" and not project.marker.exists()
    assert len([l for l in done.stderr.splitlines() if "--approve" in l]) == 1
    done, [result] = _batch(project, tmp_path, "--approve")
    assert done.returncode == 0, done.stderr
    assert project.marker.exists() and "--approve" not in done.stderr
