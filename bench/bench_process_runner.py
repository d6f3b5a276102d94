"""Benchmark: the one process runner (bash tool, ``!cmd``, ``ctx.exec``).

- the cost of running ``true`` through ``LocalEnvironment.run`` (spawn, the marker, the
  /proc sweep for leftovers at its end), median of 50, beside a bare ``subprocess.run``;
- one /proc sweep for a command's processes, with the number of processes on the machine;
- killing the escape tree (``setsid``, ``nohup``, a double fork) on a 0.5 s timeout: how
  long past the timeout the call returns, and that nothing survives;
- a command printing 100 MB through the runner (as ``!cmd`` now does; it used to buffer
  all of it): peak memory stays flat.

Figures are noisy on a shared machine: the load average is printed beside them.

    python bench/bench_process_runner.py
"""

from __future__ import annotations

import asyncio
import os
import resource
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
from support.survivors import escape_tree, marked  # noqa: E402

from pi_plugins.tools import processes  # noqa: E402
from pi_plugins.tools.environment import LocalEnvironment  # noqa: E402


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def runs(env: LocalEnvironment, n: int) -> list[float]:
    times = []
    for _ in range(n):
        began = time.perf_counter()
        await env.run(["true"])
        times.append(time.perf_counter() - began)
    return times


async def escape(env: LocalEnvironment) -> tuple[float, list[str]]:
    mark = uuid.uuid4().hex
    began = time.perf_counter()
    await env.run(escape_tree(mark), timeout=0.5)
    return time.perf_counter() - began - 0.5, marked(mark)


async def command_memory(megabytes: int) -> float:

    env = LocalEnvironment()
    base = peak_mb()
    result = await env.run(f"head -c {megabytes * 1024 * 1024} /dev/zero | tr '\\0' 'x' | fold -w 99")
    os.unlink(result.full_output_path)
    return peak_mb() - base


def main() -> int:
    env = LocalEnvironment()
    print(f"load average {os.getloadavg()[0]:.2f}, {len([p for p in os.listdir('/proc') if p.isdigit()])} processes")
    times = asyncio.run(runs(env, 50))
    bare = []
    for _ in range(50):
        began = time.perf_counter()
        subprocess.run(["true"])
        bare.append(time.perf_counter() - began)
    print(f"run(['true']): median {statistics.median(times) * 1000:.1f} ms "
          f"(bare subprocess.run: {statistics.median(bare) * 1000:.1f} ms)")
    sweeps = []
    for _ in range(50):
        began = time.perf_counter()
        processes.command_processes(None, uuid.uuid4().hex)
        sweeps.append(time.perf_counter() - began)
    print(f"one /proc sweep: median {statistics.median(sweeps) * 1000:.2f} ms")
    late, left = asyncio.run(escape(env))
    print(f"escape tree on a 0.5 s timeout: returned {late * 1000:.0f} ms after it, survivors {left}")
    growth = asyncio.run(command_memory(100))
    print(f"a command printing 100 MB: peak memory +{growth:.1f} MB")
    return 1 if left or growth > 32 else 0


if __name__ == "__main__":
    sys.exit(main())
