"""What MCP costs a ``pi -p`` at its end (issue 36): the time from the answer printed to
the process gone, with one stdio server (tests/support/mcp_server.py, ``direct``) whose
tool the model calls once, beside the same ``pi -p`` with no MCP, and beside pi 1.6 (on
Node 22) with the same ``mcp.json`` and the same script, where it is installed.

    python bench/bench_mcp_exit.py [--runs 7] [--bare]

``--bare``: tests/support/mcp_bare_server.py instead, which ends the moment its stdin
closes, so what is left is the client's own doing.

Prints the median and the spread of each; no budget (the load of the machine decides
most of it), the figures go into the closing note.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support.llm_server import LlmServer, Reply  # noqa: E402
from support.programs import NODE22, PI16  # noqa: E402

SERVERS = {False: str(ROOT / "tests" / "support" / "mcp_server.py"),
           True: str(ROOT / "tests" / "support" / "mcp_bare_server.py")}


def run_once(command: list[str], env: dict, cwd: str, server: LlmServer, uses_mcp: bool) -> tuple[float, float]:
    """(whole run, answer printed → process gone), in seconds."""
    if uses_mcp:
        server.push(Reply(tool_calls=[("mcp__demo__add", {"a": 2, "b": 3})]), Reply(text="five"))
    else:
        server.push(Reply(text="five"))
    began = time.monotonic()
    with subprocess.Popen([*command, "--model", "local/test-model", "--no-session", "-p", "add"], cwd=cwd,
                          env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as process:
        assert process.stdout is not None and process.stderr is not None
        answer = process.stdout.readline().strip()
        printed = time.monotonic()
        process.wait(timeout=60)
        ended = time.monotonic()
        if answer != "five" or process.returncode != 0:
            raise SystemExit(f"{command[-1]} said {answer!r} ({process.returncode}): {process.stderr.read()[-2000:]}")
    return ended - began, ended - printed


def home(root: Path, server: LlmServer, with_mcp: bool, bare: bool) -> dict:
    agent = root / "agent"
    agent.mkdir(parents=True)
    (root / "project").mkdir()
    (agent / "models.json").write_text(json.dumps(server.models_json("local", apiKey="unused")))
    if with_mcp:
        (agent / "mcp.json").write_text(json.dumps({"mcpServers": {"demo": {
            "command": sys.executable, "args": [SERVERS[bare]], "exposure": "direct"}}}))
    return {**os.environ, "HOME": str(root), "PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--bare", action="store_true", help="a server with no SDK that ends at once")
    args = parser.parse_args()
    ours = [sys.executable, "-m", "pi_plugins.cli"]
    kinds = [("ours, no MCP", ours, False), ("ours, one MCP server used", ours, True)]
    if NODE22.exists() and (PI16 / "dist" / "cli.js").exists():
        kinds.append(("pi 1.6, one MCP server used", [str(NODE22), str(PI16 / "dist" / "cli.js")], True))
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; {args.runs} runs each, in turn")
    with tempfile.TemporaryDirectory(prefix="bench-mcp-exit-") as tmp, LlmServer() as server:
        envs = [home(Path(tmp) / str(n), server, uses, args.bare) for n, (_, _, uses) in enumerate(kinds)]
        found: dict[str, list[tuple[float, float]]] = {name: [] for name, _, _ in kinds}
        for _ in range(args.runs + 1):  # the first round warms up and is not counted
            for (name, command, uses), env in zip(kinds, envs, strict=True):
                found[name].append(run_once(command, env, str(Path(env["HOME"]) / "project"), server, uses))
    for name, runs in found.items():
        whole, exit_ = [r[0] for r in runs[1:]], [r[1] for r in runs[1:]]
        print(f"{name:30} whole {statistics.median(whole) * 1000:6.0f} ms   exit {statistics.median(exit_) * 1000:5.0f} ms"
              f" (min {min(exit_) * 1000:.0f}, max {max(exit_) * 1000:.0f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
