"""What telemetry costs a turn (issue 30): bench_loop's run of 20 calls to a trivial tool
(21 turns, all built-in plugins loaded, the scripted provider with no delay), with
telemetry off (no OTLP variable) and on (exporting spans and metrics to a local OTLP/HTTP
receiver in this process, flushed at the end of each run, which the time includes).
Budget: on costs at most 0.3 ms a turn more than off.

Run: python bench/bench_telemetry.py   (exits 1 when the budget is missed; needs the extra otel)
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_loop import per_turn_ms  # noqa: E402

from pi_core.testing.otlp import OtlpReceiver  # noqa: E402
from pi_plugins import telemetry  # noqa: E402


def measure(rounds: int = 25) -> tuple[float, float, int]:
    """Medians of ``rounds`` runs off, then on, then off again (switching rebuilds the
    exporter, so the two are measured in blocks, not interleaved)."""
    asyncio.run(per_turn_ms())  # warm-up: jsonschema
    off = [asyncio.run(per_turn_ms()) for _ in range(rounds)]
    with OtlpReceiver() as receiver:
        os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint
        asyncio.run(per_turn_ms())  # warm-up: the SDK, the exporter's connection
        on = [asyncio.run(per_turn_ms()) for _ in range(rounds)]
        telemetry.shutdown()
        del os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"]
        spans = len(receiver.spans)
    off += [asyncio.run(per_turn_ms()) for _ in range(rounds)]
    return statistics.median(off), statistics.median(on), spans


def main() -> int:
    for name in list(os.environ):
        if name.startswith("OTEL_") or name == "TRACEPARENT":
            del os.environ[name]
    off, on, spans = measure()
    extra = on - off
    print(f"per turn, telemetry off: {off:.3f} ms; on: {on:.3f} ms; "
          f"cost: {extra:.3f} ms a turn (budget <= 0.3 ms); {spans} spans received")
    ok = extra <= 0.3 and spans > 0
    print("within budget" if ok else "OVER BUDGET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
