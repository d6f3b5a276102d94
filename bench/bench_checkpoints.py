"""Benchmark: a checkpoint of a turn that changed 3 files in a 10,000-file repository.

Builds a git repository of 10,000 files (100 folders of 100, old timestamps as in a real
checkout), takes the first snapshot (hashes everything once, not timed against the
budget), then times rounds of: change 3 files, snapshot, list the changed paths. This is
what the checkpoints plugin does after a tool batch. Also times a snapshot with nothing
changed (what every prompt costs) and a restore of 3 files. Prints the median and the
worst, with the load average (the machine is shared: figures are noisy), and the CPU time
git used per checkpoint, which a busy machine hardly changes. Exits non-zero when the
median of the 3-file checkpoint is over the budget.

    python bench/bench_checkpoints.py [rounds]
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pi_plugins.checkpoints.store import GitStore

FILES = 10_000
BUDGET_MS = 50.0


def build(root: Path) -> None:
    for i in range(FILES):
        folder = root / f"pkg{i // 100:03d}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{i:05d}.py").write_text(f"# module {i}\n" + "value = 1\n" * 20)
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    old = time.time() - 3600
    for path in root.rglob("*"):
        os.utime(path, (old, old))
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@x", GIT_COMMITTER_NAME="b",
               GIT_COMMITTER_EMAIL="b@x")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True)


def children_cpu() -> float:
    """CPU seconds (user + system) of the finished git processes: unlike the wall clock,
    hardly changed by how busy the machine is."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def main() -> int:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        build(root)
        store = GitStore(root, Path(tmp) / "agent").open()
        began = time.perf_counter()
        previous = store.snapshot()
        first = time.perf_counter() - began
        time.sleep(1.1)  # past the index's second: no file is "racily clean"

        idle = []
        for _ in range(rounds):
            began = time.perf_counter()
            store.snapshot()
            idle.append(time.perf_counter() - began)

        turns, turn_cpu = [], []
        for n in range(rounds):
            for k in range(3):
                path = root / f"pkg{(n * 7 + k * 31) % 100:03d}" / f"mod{((n * 7 + k * 31) % 100) * 100 + k:05d}.py"
                with path.open("a") as handle:
                    handle.write(f"# edit {n}\n")
            began, cpu = time.perf_counter(), children_cpu()
            tree, changed = store.checkpoint(previous)
            turns.append(time.perf_counter() - began)
            turn_cpu.append(children_cpu() - cpu)
            assert len(changed) == 3, changed
            previous = tree

        began = time.perf_counter()
        restored = store.restore(previous, store.snapshot())  # nothing to do
        store.restore(previous, previous)
        target = tree
        for k in range(3):
            (root / f"pkg00{k}" / f"mod00{k}00.py").write_text("changed\n")
        now = store.snapshot()
        began = time.perf_counter()
        restored = store.restore(now, target)
        restore_time = time.perf_counter() - began
        assert len(restored.files) == 3, restored

    load = os.getloadavg()
    median = statistics.median(turns)
    print(f"repository: {FILES} files; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
          f"on {os.cpu_count()} cores")
    print(f"first snapshot (hashes every file, once per store): {ms(first)} ms")
    print(f"snapshot, nothing changed (each prompt): median {ms(statistics.median(idle))} ms, "
          f"worst {ms(max(idle))} ms")
    print(f"checkpoint of a turn that changed 3 files (snapshot + changed paths): "
          f"median {ms(median)} ms, worst {ms(max(turns))} ms, budget {BUDGET_MS} ms; "
          f"git's CPU time: median {ms(statistics.median(turn_cpu))} ms")
    print(f"restore of 3 files: {ms(restore_time)} ms")
    if ms(median) > BUDGET_MS:
        print("OVER BUDGET")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
