"""What the answer journal (``pi_plugins/answer_journal``) costs a streaming answer:
the harness with every built-in, a real session file, the scripted provider with no
delay (the worst case: deltas as fast as the loop takes them), with the journal and
with ``-builtin:answer_journal``.

- text deltas per second, one answer of 100,000 deltas and 20 answers of 5,000;
- the cost per delta in microseconds (the difference);
- the journal's writes: how many, and the longest (the event loop's longest wait on it).

Each figure is the best of its runs (the machine's other work only slows a run down).
Budget: at most 3 µs more per delta (a model streams at most ~1,000 deltas/s: 0.3% of a
core), and no write longer than 10 ms (the event loop's longest wait on the journal).

Run: python bench/bench_journal.py   (exits 1 when the budget is missed)
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pi_core import Harness, load_plugins
from pi_core.app.settings import Settings
from pi_core.session import Session
from pi_core.testing import Reply, ScriptedProvider, scripted_model
from pi_plugins.answer_journal import journal

WRITES: list[float] = []


def timed_flush(original):
    def flush(self):
        start = time.perf_counter()
        original(self)
        WRITES.append(time.perf_counter() - start)
    return flush


async def deltas_per_second(folder: Path, answers: int, deltas_each: int, *, on: bool) -> float:
    settings = Settings({} if on else {"extensions": ["-builtin:answer_journal"]})
    plugins = load_plugins(cwd=folder, agent_dir=folder / "agent", discover=False, settings=settings)
    plugins.register(ScriptedProvider([Reply(text="abcd" * deltas_each, chunk=4) for _ in range(answers)]),
                     "scripted")
    session = Session.create(folder / "work", folder / "sessions")
    harness = Harness(plugins=plugins, session=session, model=scripted_model(), cwd=str(folder),
                      settings=settings)
    start = time.perf_counter()
    for _ in range(answers):
        await harness.prompt("talk")
    elapsed = time.perf_counter() - start
    session.close()
    return answers * deltas_each / elapsed


def measure(answers: int, deltas_each: int, runs: int) -> tuple[float, float]:
    rates = {True: [], False: []}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        for run in range(runs):
            for on in (False, True):
                folder = Path(tmp) / f"{on}-{run}"
                rates[on].append(asyncio.run(deltas_per_second(folder, answers, deltas_each, on=on)))
    return max(rates[False]), max(rates[True])


def main() -> int:
    journal.JournalWriter.flush = timed_flush(journal.JournalWriter.flush)  # type: ignore[method-assign]
    measure(2, 1_000, 1)  # warm-up
    WRITES.clear()
    worst = 0.0
    for answers, each, runs in ((1, 100_000, 5), (20, 5_000, 5)):
        off, on = measure(answers, each, runs)
        per_delta = (1 / on - 1 / off) * 1e6
        worst = max(worst, per_delta)
        print(f"{answers} x {each:,} deltas: {off:,.0f}/s without the journal, {on:,.0f}/s with it "
              f"({per_delta:+.2f} µs a delta)")
    longest = max(WRITES) * 1000 if WRITES else 0.0
    print(f"journal writes: {len(WRITES)}, median {statistics.median(WRITES) * 1e6:.0f} µs, "
          f"longest {longest:.2f} ms")
    ok = worst <= 3.0 and longest <= 10
    print("within budget" if ok else "OVER BUDGET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
