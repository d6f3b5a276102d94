"""Agent-loop budgets (design.md §11), against the scripted provider with no delay:

- harness overhead per turn, with all built-in plugins loaded: a run of 20 calls to a
  trivial in-memory tool (21 turns); budget < 2 ms per turn;
- streamed text deltas per second through the loop with one subscribed plugin (a
  ``message_update`` hook); budget >= 100,000/s. Measured on answers of 2,000 deltas
  (a long answer) and on one answer of 100,000 deltas.

Run: python bench/bench_loop.py   (exits 1 when a budget is missed)
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time

from pi_core import Agent, hookimpl, tool
from pi_core.app.discovery import load_plugins
from pi_core.testing import Reply, ScriptedProvider, scripted_model


@tool(parameters={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
def increment(args, run):
    """Add one."""
    return str(args["n"] + 1)


class DeltaCounter:
    def __init__(self):
        self.deltas = 0

    @hookimpl
    def message_update(self, event):
        if event.assistant_message_event.type == "text_delta":
            self.deltas += 1


def make_agent(script, *extra):
    plugins = load_plugins(discover=False)
    provider = ScriptedProvider(script)
    plugins.register(provider, "scripted")
    for plugin in extra:
        plugins.register(plugin)
    return Agent(model=scripted_model(), plugins=plugins, tools=[increment])


async def per_turn_ms(clock=time.perf_counter) -> float:
    """Milliseconds a turn, by ``clock`` (wall time by default)."""
    calls = 20
    script = [Reply(text="step", tool_calls=[("increment", {"n": i})]) for i in range(calls)]
    agent = make_agent(script + [Reply(text="done")])
    start = clock()
    await agent.prompt("count to twenty")
    elapsed = clock() - start
    assert sum(m.role == "toolResult" for m in agent.messages) == calls
    return elapsed * 1000 / (calls + 1)


async def deltas_per_second(answers: int, deltas_each: int) -> float:
    counter = DeltaCounter()
    script = [Reply(text="abcd" * deltas_each, chunk=4) for _ in range(answers)]
    agent = make_agent(script, counter)
    start = time.perf_counter()
    for _ in range(answers):
        await agent.prompt("talk")
    elapsed = time.perf_counter() - start
    assert counter.deltas == answers * deltas_each
    return counter.deltas / elapsed


def main() -> int:
    asyncio.run(per_turn_ms())  # warm-up: first tool call imports jsonschema
    turn = statistics.median(asyncio.run(per_turn_ms()) for _ in range(7))
    long_answers = statistics.median(asyncio.run(deltas_per_second(50, 2_000)) for _ in range(3))
    one_huge = asyncio.run(deltas_per_second(1, 100_000))
    print(f"harness overhead per turn: {turn:.3f} ms (budget < 2 ms)")
    print(f"text deltas/s, 50 answers x 2,000 deltas: {long_answers:,.0f} (budget >= 100,000)")
    print(f"text deltas/s, one answer of 100,000 deltas: {one_huge:,.0f} (budget >= 100,000)")
    ok = turn < 2 and long_answers >= 100_000 and one_huge >= 100_000
    print("within budget" if ok else "OVER BUDGET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
