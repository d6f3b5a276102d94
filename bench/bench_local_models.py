"""Local-model discovery (issue 18): the probe of the four default kinds of server keeps
to its 0.3 s budget, and a ``pi -p`` that finds its model on a local server costs little
more than one configured in models.json.

Measured against stub servers on 127.0.0.1 (tests/support/local_servers.py): four live
servers, four ports where nothing listens, and ports that accept but never answer.
Medians of several runs; the machine is shared, so the load average is printed too.

Run: python bench/bench_local_models.py   (exits 1 when the budget is missed)
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
from support.llm_server import Reply  # noqa: E402
from support.local_servers import KINDS, LocalServer, SilentPort, free_port  # noqa: E402

from pi_plugins.providers.local import BUDGET_S, discover  # noqa: E402

RUNS = 7


def probe(endpoints: list[str]) -> tuple[float, int]:
    times, found = [], 0
    for _ in range(RUNS):
        start = time.perf_counter()
        found = len(asyncio.run(discover(endpoints)))
        times.append(time.perf_counter() - start)
    return statistics.median(times), found


def one_shot(agent: Path, cwd: str, args: list[str], server) -> float:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": cwd, "PI_CODING_AGENT_DIR": str(agent)}
    times = []
    for _ in range(RUNS):
        server.push(Reply(text="ok"))
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pi_plugins.cli", *args, "-p", "--no-session", "hi"],
                              env=env, cwd=cwd, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        assert done.stdout.strip() == "ok", done.stderr
    return statistics.median(times)


def main() -> int:
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    servers = [LocalServer(kind).start() for kind in KINDS]
    silent = [SilentPort() for _ in range(4)]
    try:
        rows = {
            "four live servers": probe([s.url for s in servers]),
            "nothing listens (4 ports)": probe([f"http://127.0.0.1:{free_port()}" for _ in range(4)]),
            "accept, never answer (4 ports)": probe([s.url for s in silent]),
        }
        for name, (seconds, found) in rows.items():
            print(f"probe, {name:32s} {seconds * 1000:6.1f} ms  ({found} models)")
        with tempfile.TemporaryDirectory() as tmp:
            agent = Path(tmp, "agent")
            agent.mkdir()
            ollama = servers[0]
            (agent / "settings.json").write_text(json.dumps({"localModels": {"endpoints": [ollama.url]}}))
            found = one_shot(agent, tmp, [], ollama)
            (agent / "models.json").write_text(json.dumps({"providers": {"ollama": {
                "baseUrl": ollama.url + "/v1", "api": "openai-completions",
                "models": [{"id": ollama.model_ids[0]}]}}}))
            configured = one_shot(agent, tmp, ["--model", f"ollama/{ollama.model_ids[0]}"], ollama)
        print(f"pi -p, model found on the server   {found * 1000:6.0f} ms")
        print(f"pi -p, model in models.json        {configured * 1000:6.0f} ms")
    finally:
        for server in servers:
            server.stop()
        for port in silent:
            port.close()
    slowest = max(seconds for seconds, _ in rows.values())
    return 0 if slowest < BUDGET_S + 0.05 else 1


if __name__ == "__main__":
    sys.exit(main())
