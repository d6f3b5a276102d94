"""Codemode (issue 36): what a tool call from a script costs the harness.

A script makes 100 calls to a tool that does nothing; the same script with no calls is the
baseline, so the worker's start and the script's own run cancel out. Per call:
(time with 100 calls - time with none) / 100, for calls one after another (``await`` in a
loop: each is a full round trip between the sandbox worker and the harness, through
``ctx.execute_tool`` and the tool hooks of every built-in) and for all 100 under one
``Promise.all``. Budget: <= 1 ms a call, one after another (the worse case).

Run: python bench/bench_codemode.py [--calls 100] [--repeat 7] (exits 1 when over budget).
The best of ``--repeat`` runs counts: the machine is shared and a short run is easily disturbed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

import pi_plugins.codemode as codemode
from pi_core import AbortSignal, ToolRun, tool
from pi_core.testing.harness import HarnessMaker

PER_CALL_MS = 1.0


@tool(parameters={"type": "object", "properties": {"i": {"type": "integer"}}})
def noop(args, run):
    """Do nothing."""
    return "ok"


async def measure(calls: int, repeat: int) -> dict[str, float]:
    make = HarnessMaker(Path(tempfile.mkdtemp()))
    harness = await make(builtins=True, tools=[noop, codemode.TOOL])
    harness.agent.set_active_tools(["noop", "codemode"])
    scripts = {
        "none": f"let n = 0; for (let i = 0; i < {calls}; i++) n += i; return n",
        "sequential": f"for (let i = 0; i < {calls}; i++) await tools.noop({{i}}); return 'done'",
        "parallel": f"await Promise.all(Array.from({{length: {calls}}}, (_, i) => tools.noop({{i}}))); return 'done'",
    }
    best = {name: float("inf") for name in scripts}
    number = 0
    for _ in range(repeat):
        for name, code in scripts.items():
            number += 1
            run = ToolRun(tool_call_id=f"call_{number}", signal=AbortSignal(), ctx=harness.ctx)
            began = time.perf_counter()
            result = await codemode.TOOL.execute({"code": code}, run)
            took = time.perf_counter() - began
            assert not result.is_error, result.content[0].text
            best[name] = min(best[name], took)
    return {
        "sequential": (best["sequential"] - best["none"]) / calls * 1000,
        "parallel": (best["parallel"] - best["none"]) / calls * 1000,
        "script": best["none"] * 1000,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    figures = asyncio.run(measure(args.calls, args.repeat))
    print(f"a script with no calls: {figures['script']:.1f} ms (worker reused)")
    print(f"per call, one after another: {figures['sequential']:.3f} ms (budget {PER_CALL_MS} ms)")
    print(f"per call, {args.calls} under Promise.all: {figures['parallel']:.3f} ms")
    return 0 if figures["sequential"] <= PER_CALL_MS else 1


if __name__ == "__main__":
    sys.exit(main())
