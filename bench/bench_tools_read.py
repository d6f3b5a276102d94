"""Benchmark: `read` on a 50 MB file stays within the output budget and returns quickly.

Prints the time and output size of reading from the start, from an offset near the
end, and of a file that is one 50 MB line. Exits non-zero when a read is over 1 s or
its text over the 50 KB budget (plus the notice).

    python bench/bench_tools_read.py
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time

from pi_core.protocol.signal import AbortSignal
from pi_core.protocol.tools import ToolRun
from pi_plugins.tools.read import read_tool

SIZE = 50 * 1024 * 1024
BUDGET_SECONDS = 1.0
BUDGET_BYTES = 50 * 1024 + 512  # the output budget plus the closing notice


async def read(path: str, **args) -> tuple[float, int, str]:
    run = ToolRun("bench", AbortSignal())
    began = time.perf_counter()
    result = await read_tool.execute({"path": path, **args}, run)
    elapsed = time.perf_counter() - began
    text = result.content[0].text
    return elapsed, len(text.encode()), text[-120:].replace("\n", " ")


def main() -> int:
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        lines = os.path.join(tmp, "lines.log")
        with open(lines, "wb") as f:
            row = b"2024-01-01T00:00:00Z INFO something happened in the service, id=%08d\n"
            n = 0
            while f.tell() < SIZE:
                f.write(b"".join(row % i for i in range(n, n + 10000)))
                n += 10000
        one_line = os.path.join(tmp, "one-line.min.js")
        with open(one_line, "wb") as f:
            f.write(b"x" * SIZE)
        cases = [
            ("start of a 50 MB log", lines, {}),
            ("offset near the end", lines, {"offset": n - 100}),
            ("one 50 MB line", one_line, {}),
        ]
        for name, path, args in cases:
            elapsed, size, tail = asyncio.run(read(path, **args))
            over = elapsed > BUDGET_SECONDS or size > BUDGET_BYTES
            failures += over
            print(f"{name:24s} {elapsed * 1000:7.1f} ms  {size / 1024:6.1f} KB out  {'OVER BUDGET' if over else 'ok'}")
            print(f"{'':24s} ...{tail}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
