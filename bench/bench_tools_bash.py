"""Benchmark: `bash` streaming 100 MB of output keeps memory flat.

Runs a command printing 10 MB and one printing 100 MB through the bash tool (with an
update listener, as in the UI) and compares the growth of peak memory: it must not
grow with the output. Checks that the model sees at most the 50 KB budget and that the
temp file holds every byte. Exits non-zero when peak memory grows by more than 32 MB
or an output check fails.

    python bench/bench_tools_bash.py
"""

from __future__ import annotations

import asyncio
import os
import resource
import sys
import time

from pi_core.protocol.signal import AbortSignal
from pi_core.protocol.tools import ToolRun
from pi_plugins.tools.bash import bash_tool

GROWTH_BUDGET_MB = 32


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def stream(megabytes: int) -> tuple[float, int, int, int]:
    updates = []
    run = ToolRun("bench", AbortSignal(), on_update=lambda r: updates.append(len(r.content)))
    command = f"head -c {megabytes * 1024 * 1024} /dev/zero | tr '\\0' 'x' | fold -w 99"
    began = time.perf_counter()
    result = await bash_tool.execute({"command": command}, run)
    elapsed = time.perf_counter() - began
    path = result.details["fullOutputPath"]
    saved = os.path.getsize(path)
    os.unlink(path)
    return elapsed, len(result.content[0].text.encode()), saved, len(updates)


def main() -> int:
    failures = 0
    base = peak_mb()
    for megabytes in (10, 100):
        elapsed, shown, saved, updates = asyncio.run(stream(megabytes))
        expected = megabytes * 1024 * 1024 + megabytes * 1024 * 1024 // 99  # fold adds newlines
        ok_output = shown <= 50 * 1024 + 512 and abs(saved - expected) <= 1
        failures += not ok_output
        growth = peak_mb() - base
        print(
            f"{megabytes:4d} MB: {elapsed:6.2f} s ({megabytes / elapsed:6.1f} MB/s), model sees "
            f"{shown / 1024:5.1f} KB, temp file {saved / 1e6:6.1f} MB, {updates} updates, "
            f"peak memory +{growth:5.1f} MB {'ok' if ok_output else 'OUTPUT WRONG'}"
        )
    growth = peak_mb() - base
    if growth > GROWTH_BUDGET_MB:
        print(f"peak memory grew {growth:.1f} MB, over the {GROWTH_BUDGET_MB} MB budget")
        failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
