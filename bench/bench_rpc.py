"""RPC mode figures: start-up to the first response, the round trip of a short prompt,
and a 2,000-delta answer streamed with pi's full ``message_update`` snapshots against
the lean ones (bytes written and time), against the scripted LLM server on 127.0.0.1.

Budget (ours; design.md sets none for RPC): the round trip of a short prompt in a
running process under 25 ms (median), so RPC adds little to the harness's own cost,
and the full-snapshot answer under 2 s.

Run: python bench/bench_rpc.py   (exits 1 when a budget is missed)
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
from support.cli import PiRunner  # noqa: E402
from support.llm_server import LlmServer, Reply  # noqa: E402
from support.rpc import RpcClient  # noqa: E402

ROUND_TRIPS = 20
ANSWER = "word " * 2000  # 10,000 characters


def stream(pi: PiRunner, server: LlmServer, events: str) -> tuple[float, int]:
    client = RpcClient(pi.popen("--mode", "rpc", "--no-session", "--events", events), timeout=60)
    client.ok("get_state")
    server.push(Reply(text=ANSWER, delta_size=5))
    start = time.perf_counter()
    client.ok("prompt", message="talk")
    client.event("agent_end")
    elapsed = time.perf_counter() - start
    client.close()
    return elapsed, client.bytes_read


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp, LlmServer() as server:
        pi = PiRunner(Path(tmp), server)
        server.default = Reply(text="Hello from the benchmark.")
        started = time.perf_counter()
        client = RpcClient(pi.popen("--mode", "rpc", "--no-session"), timeout=60)
        client.ok("get_state")
        startup = time.perf_counter() - started
        trips = []
        for _ in range(ROUND_TRIPS + 1):
            mark = client.mark()
            start = time.perf_counter()
            client.ok("prompt", message="hi")
            client.event("agent_end", after=mark)
            trips.append(time.perf_counter() - start)
            client.ok("new_session")  # keep the context short and equal
        client.close()
        round_trip = statistics.median(trips[1:])
        server.default = None
        full_time, full_size = stream(pi, server, "full")
        lean_time, lean_size = stream(pi, server, "lean")
    print(f"start-up to the first response: {startup * 1000:.0f} ms")
    print(f"prompt round trip (response, events, agent_end): {round_trip * 1000:.1f} ms median "
          f"(budget < 25 ms)")
    print(f"2,000-delta answer, full snapshots: {full_time:.2f} s, {full_size / 1e6:.1f} MB written "
          f"(budget < 2 s)")
    print(f"2,000-delta answer, --events lean: {lean_time:.2f} s, {lean_size / 1e6:.2f} MB written")
    ok = round_trip < 0.025 and full_time < 2
    print("within budget" if ok else "OVER BUDGET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
