"""CLI budgets (design.md §11): ``pi --help`` under 0.3 s and a ``pi -p`` one-shot
against the scripted LLM server on 127.0.0.1 under 0.8 s (median of several runs; the
real pi takes 1.0 s and 1.2 s on this machine).

Also prints how long this machine's python takes to start doing nothing, for scale.

Run: python bench/bench_cli.py   (exits 1 when a budget is missed)
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
from support.llm_server import LlmServer, Reply  # noqa: E402

RUNS = 9


def timed(command: list[str], env: dict, cwd: str) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{command} failed: {done.stderr}")
    return elapsed


def median(command: list[str], env: dict, cwd: str) -> float:
    timed(command, env, cwd)  # warm the file cache
    return statistics.median(timed(command, env, cwd) for _ in range(RUNS))


def main() -> int:
    pi = str(Path(sys.executable).parent / "pi")
    with tempfile.TemporaryDirectory() as tmp, LlmServer() as server:
        agent_dir = Path(tmp) / "agent"
        agent_dir.mkdir()
        (agent_dir / "models.json").write_text(json.dumps(server.models_json("local")))
        env = {"PATH": os.environ["PATH"], "HOME": tmp, "PI_CODING_AGENT_DIR": str(agent_dir)}
        server.default = Reply(text="Hello from the benchmark.")
        bare = median([sys.executable, "-c", "pass"], env, tmp)
        help_time = median([pi, "--help"], env, tmp)
        print_time = median([pi, "--model", "local/test-model", "--no-session", "-p", "hi"], env, tmp)
    print(f"python doing nothing: {bare * 1000:.0f} ms (for scale)")
    print(f"pi --help: {help_time * 1000:.0f} ms (budget < 300 ms)")
    print(f"pi -p against the local server: {print_time * 1000:.0f} ms (budget < 800 ms)")
    ok = help_time < 0.3 and print_time < 0.8
    print("within budget" if ok else "OVER BUDGET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
