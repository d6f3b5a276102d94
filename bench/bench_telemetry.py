"""What telemetry costs a turn (issue 30): bench_loop's run of 20 calls to a trivial tool
(21 turns, all built-in plugins loaded, the scripted provider with no delay), with
telemetry off (no OTLP variable) and on (exporting spans and metrics to a local OTLP/HTTP
receiver in this process, flushed at the end of each run, which the time includes).
Budget: on costs at most 0.3 ms a turn more than off.

Both wall time and the process's CPU time are measured; the budget is checked on CPU time,
which counts the SDK's export threads too but not other programs sharing the machine (wall
time on a busy 2-core machine swings by more than the budget between blocks).

Run: python bench/bench_telemetry.py   (exits 1 when the budget is missed; needs the extra otel)
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_loop import per_turn_ms  # noqa: E402

from pi_core.testing.otlp import OtlpReceiver  # noqa: E402
from pi_plugins import telemetry  # noqa: E402


def _runs(rounds: int) -> tuple[list[float], list[float]]:
    """``rounds`` runs' per-turn wall and CPU milliseconds."""
    wall, cpu = [], []
    for _ in range(rounds):
        wall.append(asyncio.run(per_turn_ms()))
        cpu.append(asyncio.run(per_turn_ms(time.process_time)))
    return wall, cpu


def measure(rounds: int = 25) -> tuple[tuple[float, float], tuple[float, float], int]:
    """Medians (wall, CPU) of ``rounds`` runs off, then on, then off again (switching
    rebuilds the exporter, so the two are measured in blocks, not interleaved)."""
    asyncio.run(per_turn_ms())  # warm-up: jsonschema
    off_wall, off_cpu = _runs(rounds)
    with OtlpReceiver() as receiver:
        os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint
        asyncio.run(per_turn_ms())  # warm-up: the SDK, the exporter's connection
        on_wall, on_cpu = _runs(rounds)
        telemetry.shutdown()
        del os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"]
        spans = len(receiver.spans)
    wall, cpu = _runs(rounds)
    off_wall += wall
    off_cpu += cpu
    median = statistics.median
    return (median(off_wall), median(off_cpu)), (median(on_wall), median(on_cpu)), spans


def main() -> int:
    for name in list(os.environ):
        if name.startswith("OTEL_") or name == "TRACEPARENT":
            del os.environ[name]
    off, on, spans = measure()
    print(f"wall time per turn, telemetry off: {off[0]:.3f} ms; on: {on[0]:.3f} ms; "
          f"cost: {on[0] - off[0]:.3f} ms a turn")
    extra = on[1] - off[1]
    print(f"CPU time per turn, telemetry off: {off[1]:.3f} ms; on: {on[1]:.3f} ms; "
          f"cost: {extra:.3f} ms a turn (budget <= 0.3 ms); {spans} spans received")
    ok = extra <= 0.3 and spans > 0
    print("within budget" if ok else "OVER BUDGET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
