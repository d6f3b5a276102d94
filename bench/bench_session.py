"""Session budgets (design.md §11); exits non-zero when one is missed.

- open + build the context of a 20,000-entry, 50 MB session: under 1 s, peak memory
  under 3x the file size. Measured in a fresh process per run (time: best of five, with
  the median and the CPU time beside it; memory: the rise of the peak RSS over the
  process's RSS after its imports, and tracemalloc's peak in a separate run). Two shapes:
  one unbroken line of 20,000 entries with no compaction (the worst case: every message
  is in the context) and a long-lived session with compactions and branches.
- append: under 1 ms for 2 KB messages on that session (mean wall time, and the 99th
  percentile of CPU time: wall-time outliers are the scheduler when the machine is busy).
- list 1,000 sessions (about 115 MB of files) in under 0.5 s: the first listing reads
  the files (a few byte searches each, a handful of lines parsed) and writes the index;
  later ones read only what changed since.

The machine's load average is printed: other processes on these 2 cores stretch wall
times, so compare the CPU figures when it is high.

    python bench/bench_session.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

OPEN_BUDGET_S = 1.0
MEMORY_BUDGET_X = 3.0
APPEND_BUDGET_MS = 1.0
LIST_BUDGET_S = 0.5

WORDS = ("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor "
         "incididunt ut labore et dolore magna aliqua def return import self None").split()


# ---------------------------------------------------------------- data


class Writer:
    """Writes pi-shaped session lines fast (plain json, not through the session API)."""

    def __init__(self, rng: random.Random, cwd: str = "/home/me/app") -> None:
        self.rng = rng
        self.cwd = cwd
        self.ms = 1_796_011_487_000
        self.used: set[str] = set()
        self.call = 0

    def text(self, size: int) -> str:
        out, n = [], 0
        while n < size:
            word = self.rng.choice(WORDS)
            out.append(word)
            n += len(word) + 1
            if self.rng.random() < 0.06:
                out.append("\n")
        return " ".join(out)

    def stamp(self) -> str:
        self.ms += 1000
        t = time.gmtime(self.ms // 1000)
        return time.strftime("%Y-%m-%dT%H:%M:%S", t) + f".{self.ms % 1000:03d}Z"

    def header(self, session_id: str) -> str:
        return json.dumps({"type": "session", "version": 3, "id": session_id,
                           "timestamp": self.stamp(), "cwd": self.cwd}, separators=(",", ":"))

    def entry(self, kind: str, parent: str | None, size: int, **extra) -> tuple[str, str]:
        entry_id = f"{self.rng.getrandbits(32):08x}"
        while entry_id in self.used:
            entry_id = f"{self.rng.getrandbits(32):08x}"
        self.used.add(entry_id)
        base = {"type": kind, "id": entry_id, "parentId": parent, "timestamp": self.stamp()}
        if kind == "message":
            base["message"] = self.message(extra.pop("role"), size)
        base.update(extra)
        return entry_id, json.dumps(base, ensure_ascii=False, separators=(",", ":"))

    def message(self, role: str, size: int) -> dict:
        usage = {"input": 1384, "output": 11, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1395,
                 "cost": {"input": 0.001384, "output": 0.000011, "cacheRead": 0,
                          "cacheWrite": 0, "total": 0.001395}}
        if role == "user":
            return {"role": "user", "content": [{"type": "text", "text": self.text(size)}],
                    "timestamp": self.ms}
        if role == "call":
            self.call += 1
            return {"role": "assistant", "content": [
                {"type": "thinking", "thinking": self.text(size // 2), "thinkingSignature": "sig"},
                {"type": "text", "text": self.text(size // 2)},
                {"type": "toolCall", "id": f"call_{self.call}", "name": "bash",
                 "arguments": {"command": self.text(60)}}],
                "api": "openai-completions", "provider": "fake-openai", "model": "fake-model",
                "usage": usage, "stopReason": "toolUse", "timestamp": self.ms}
        if role == "toolResult":
            return {"role": "toolResult", "toolCallId": f"call_{self.call}", "toolName": "bash",
                    "content": [{"type": "text", "text": self.text(size)}], "isError": False,
                    "timestamp": self.ms}
        return {"role": "assistant", "content": [{"type": "text", "text": self.text(size)}],
                "api": "openai-completions", "provider": "fake-openai", "model": "fake-model",
                "usage": usage, "stopReason": "stop", "timestamp": self.ms}


def big_session(path: Path, entries: int, target_bytes: int, compactions: bool) -> None:
    """``entries`` entries of about ``target_bytes`` in all: turns of user, assistant with
    a tool call, tool result, answer. With ``compactions``: a compaction every 1,000
    entries and a branch (with summary) every 2,500."""
    rng = random.Random(42)
    w = Writer(rng)
    per = target_bytes / entries * 0.82  # the rest is the JSON around the text
    lines = [w.header("01a22aa0-0000-7000-8000-00000000b16e")]
    parent, model_id = w.entry("model_change", None, 0, provider="fake-openai",
                               modelId="fake-model")
    lines.append(model_id)
    path_ids = [parent]
    count = 1
    roles = [("user", 0.4), ("call", 1.0), ("toolResult", 2.1), ("answer", 0.5)]
    while count < entries:
        if compactions and count % 1000 == 0:
            keep = path_ids[-min(len(path_ids), 40)]
            parent, line = w.entry("compaction", parent, 0, summary=w.text(3000),
                                   firstKeptEntryId=keep, tokensBefore=150_000,
                                   details={"readFiles": [], "modifiedFiles": []}, fromHook=False)
        elif compactions and count % 2500 == 0:
            back = path_ids[-20]
            parent, line = w.entry("branch_summary", back, 0, fromId=path_ids[-1],
                                   summary=w.text(800))
        else:
            role, share = roles[count % 4]
            parent, line = w.entry("message", parent, int(per * share), role=role)
        lines.append(line)
        path_ids.append(parent)
        count += 1
    path.write_text("\n".join(lines) + "\n")


def many_sessions(directory: Path, count: int) -> int:
    """``count`` pi-shaped sessions of 4 to 160 entries; returns the bytes written."""
    rng = random.Random(7)
    directory.mkdir(parents=True, exist_ok=True)
    total = 0
    for n in range(count):
        w = Writer(rng, cwd="/home/me/app")
        session_id = f"01a22aa0-{n:04x}-7000-8000-{rng.getrandbits(48):012x}"
        lines = [w.header(session_id)]
        parent, line = w.entry("model_change", None, 0, provider="p", modelId="m")
        lines.append(line)
        roles = ["user", "call", "toolResult", "answer"]
        for i in range(rng.randint(4, 160)):
            parent, line = w.entry("message", parent, rng.randint(200, 1800), role=roles[i % 4])
            lines.append(line)
        if n % 10 == 0:
            lines.append(w.entry("session_info", parent, 0, name=f"session {n}")[1])
        data = "\n".join(lines) + "\n"
        (directory / f"{n:05d}_{session_id}.jsonl").write_text(data)
        total += len(data.encode())
    return total


# ---------------------------------------------------------------- measurements

OPEN_PROBE = textwrap.dedent("""
    import json, sys, time, tracemalloc
    from pi_core.session import Session
    path, traced = sys.argv[1], sys.argv[2] == "traced"
    def status_kb(key):  # VmHWM, not ru_maxrss: that one keeps the parent's peak
        for line in open("/proc/self/status"):
            if line.startswith(key + ":"):
                return int(line.split()[1])
    base_rss = status_kb("VmRSS")
    if traced:
        tracemalloc.start()
    start, cpu = time.perf_counter(), time.process_time()
    session = Session.open(path)
    context = session.build_context()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak_kb = status_kb("VmHWM")
    out = {"seconds": seconds, "cpu": cpu, "rss_rise": (peak_kb - base_rss) * 1024,
           "entries": len(session), "messages": len(context.messages),
           "problems": len(session.problems)}
    if traced:
        out["traced_peak"] = tracemalloc.get_traced_memory()[1]
    print(json.dumps(out))
""")


def run_probe(path: Path, traced: bool) -> dict:
    done = subprocess.run([sys.executable, "-c", OPEN_PROBE, str(path),
                           "traced" if traced else "plain"], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout)


def bench_open(path: Path, label: str) -> bool:
    size = path.stat().st_size
    runs = [run_probe(path, traced=False) for _ in range(5)]
    traced = run_probe(path, traced=True)
    times = sorted(r["seconds"] for r in runs)
    cpu = min(r["cpu"] for r in runs)
    rss = max(r["rss_rise"] for r in runs)
    ok_time = times[0] < OPEN_BUDGET_S
    ok_memory = rss < MEMORY_BUDGET_X * size and traced["traced_peak"] < MEMORY_BUDGET_X * size
    print(f"open + context [{label}]: {size / 1e6:.1f} MB, {runs[0]['entries']} entries, "
          f"{runs[0]['messages']} messages in the context")
    print(f"  time   best {times[0]:.3f} s, median {statistics.median(times):.3f} s, CPU "
          f"{cpu:.3f} s (budget {OPEN_BUDGET_S} s) {'ok' if ok_time else 'OVER'}")
    print(f"  memory peak RSS rise {rss / 1e6:.0f} MB = {rss / size:.2f}x, tracemalloc peak "
          f"{traced['traced_peak'] / 1e6:.0f} MB = {traced['traced_peak'] / size:.2f}x "
          f"(budget {MEMORY_BUDGET_X}x) {'ok' if ok_memory else 'OVER'}")
    return ok_time and ok_memory and runs[0]["problems"] == 0


def bench_append(path: Path) -> bool:
    from pi_core.protocol.messages import AssistantMessage, TextContent, UserMessage
    from pi_core.session import Session

    copy = path.with_name("append-" + path.name)
    shutil.copyfile(path, copy)
    w = Writer(random.Random(1))
    session = Session.open(copy)
    walls, cpus = [], []
    for i in range(2000):
        text = w.text(2000)
        message = (UserMessage(content=[TextContent(text)]) if i % 2 else
                   AssistantMessage(content=[TextContent(text)], provider="p", model="m"))
        start, cpu = time.perf_counter(), time.thread_time()
        session.append_message(message)
        walls.append(time.perf_counter() - start)
        cpus.append(time.thread_time() - cpu)
    session.close()
    copy.unlink()
    walls.sort()
    cpus.sort()
    mean, p99_cpu = statistics.mean(walls), cpus[int(len(cpus) * 0.99)]
    ok = mean * 1000 < APPEND_BUDGET_MS and p99_cpu * 1000 < APPEND_BUDGET_MS
    print(f"append (2 KB messages, on the 50 MB session): wall mean {mean * 1e6:.0f} µs, "
          f"median {statistics.median(walls) * 1e6:.0f} µs, p99 {walls[1980] * 1e6:.0f} µs; "
          f"CPU p99 {p99_cpu * 1e6:.0f} µs (budget {APPEND_BUDGET_MS} ms) {'ok' if ok else 'OVER'}")
    return ok


def bench_listing(directory: Path, total: int) -> bool:
    from pi_plugins.session_listing.listing import list_sessions
    from pi_plugins.session_listing.listing_index import listing_index_path

    def timed() -> tuple[float, float, int]:
        start, cpu = time.perf_counter(), time.process_time()
        count = len(list_sessions(directory))
        return time.perf_counter() - start, time.process_time() - cpu, count

    first = []
    for _ in range(3):
        index = listing_index_path(directory)
        if index is not None:
            index.unlink(missing_ok=True)
        first.append(timed())
    later = [timed() for _ in range(5)]
    ok = True
    for label, runs in (("first listing, no index", first), ("later listings", later)):
        best = min(r[0] for r in runs)
        cpu = min(r[1] for r in runs)
        good = best < LIST_BUDGET_S and all(r[2] == 1000 for r in runs)
        ok = ok and good
        print(f"list 1,000 sessions ({total / 1e6:.0f} MB), {label}: best {best:.3f} s, "
              f"CPU {cpu:.3f} s (budget {LIST_BUDGET_S} s) {'ok' if good else 'OVER'}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="build the data here and keep it")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-session-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        line = root / "one-line.jsonl"
        tree = root / "compacted.jsonl"
        if not line.exists():
            big_session(line, 20_000, 50_000_000, compactions=False)
        if not tree.exists():
            big_session(tree, 20_000, 50_000_000, compactions=True)
        listing = root / "listing"
        if not listing.exists():
            total = many_sessions(listing, 1000)
        else:
            total = sum(p.stat().st_size for p in listing.iterdir())
        print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
        results = [
            bench_open(line, "one line, no compaction"),
            bench_open(tree, "compactions and branches"),
            bench_append(tree),
            bench_listing(listing, total),
        ]
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    print("all budgets met" if all(results) else "BUDGET MISSED")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
