"""The bash output collector: a bounded tail that is always the true end of the output,
and a temp file that holds every byte once the output outgrows the budget."""

import asyncio
import random
from pathlib import Path

from pi_plugins.tools.environment import LocalEnvironment
from pi_plugins.tools.output import OutputCollector
from pi_plugins.tools.truncation import truncate_tail


def collect(data: bytes, seed: int) -> OutputCollector:
    collector = OutputCollector(LocalEnvironment())
    rng = random.Random(seed)

    async def feed():
        at = 0
        while at < len(data):
            size = rng.choice([1, 7, 100, 4096, 65536, 300_000])
            await collector.add(data[at : at + size])
            at += size

    asyncio.run(feed())
    collector.close()
    return collector


def test_the_tail_matches_truncating_the_whole_output():
    data = "".join(f"line {i} {'é' * (i % 13)}\n" for i in range(60_000)).encode()
    for seed in range(3):
        collector = collect(data, seed)
        snapshot = collector.snapshot()
        expected = truncate_tail(data.decode())
        assert snapshot.content == expected.content
        assert (snapshot.total_lines, snapshot.total_bytes) == (expected.total_lines, len(data))
        assert Path(collector.full_output_path).read_bytes() == data
        Path(collector.full_output_path).unlink()


def test_small_output_stays_in_memory_and_needs_no_file():
    collector = collect(b"short\n", 0)
    assert collector.full_output_path is None and not collector.snapshot().truncated


def test_one_endless_line_keeps_its_end():
    data = b"ab" * 400_000 + b"END"
    collector = collect(data, 1)
    snapshot = collector.snapshot()
    assert snapshot.last_line_partial and snapshot.content.endswith("abEND")
    assert len(snapshot.content.encode()) <= 50 * 1024
    Path(collector.full_output_path).unlink()
