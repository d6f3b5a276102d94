"""The cost of MCP servers to a ``pi -p`` that does not wait for them (issue 36).

Five stdio servers (tests/support/mcp_server.py) configured in ``mcp.json`` with
``codemode`` exposure, so none is ``direct``: the first prompt must not wait for them.
Times ``pi -p hi`` against a scripted server with that ``mcp.json`` and without one, in
turn, and takes the median of the pairwise ratios. Budget: with the servers at most 1.1x
the time without (``no slower``, allowing the noise of two half-second commands).

    python bench/bench_mcp_startup.py [--runs 9]

Exits 1 when over budget.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from bench_print import PRINT, setup, timed  # noqa: E402
from support.llm_server import LlmServer  # noqa: E402

BUDGET = 1.1
SERVERS = 5


def mcp_json(count: int) -> dict:
    server = str(ROOT / "tests" / "support" / "mcp_server.py")
    return {"mcpServers": {f"demo{n}": {"command": sys.executable, "args": [server],
                                         "exposure": "codemode"} for n in range(count)}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    pi = [str(Path(sys.executable).parent / "pi"), *PRINT]
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp, LlmServer() as server:
        plain_root, mcp_root = Path(tmp) / "plain", Path(tmp) / "mcp"
        plain, with_mcp = setup(plain_root, server), setup(mcp_root, server)
        (mcp_root / "agent" / "mcp.json").write_text(json.dumps(mcp_json(SERVERS)))
        print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; "
              f"median of {args.runs} runs, in turn; {SERVERS} servers, none direct")
        for env in (plain, with_mcp):  # warm-up
            timed(pi, env, tmp)
        a, b = [], []
        for _ in range(args.runs):
            a.append(timed(pi, with_mcp, tmp))
            b.append(timed(pi, plain, tmp))
    ratio = statistics.median(x / y for x, y in zip(a, b, strict=True))
    good = ratio <= BUDGET
    print(f"pi -p hi with {SERVERS} MCP servers: {statistics.median(a) * 1000:.0f} ms; "
          f"without: {statistics.median(b) * 1000:.0f} ms; ratio {ratio:.3f}x "
          f"(budget {BUDGET}x): {'ok' if good else 'OVER'}")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
