"""``pi -p hi`` side by side with the real pi 0.73.1, on one scripted server on 127.0.0.1.

Issue 35's floor: our ``pi -p`` at most 0.2x the real pi's wall time, and ``pi --version``
as fast as ``pi --help``. The two pis run in turn (ours, theirs, ours, theirs …) against
the same server with the same models.json, so a machine that slows down mid-run slows
both; the ratio is taken pair by pair and its median quoted. Also shown: ``pi --help``
and ``pi --version`` beside the real pi's.

    python bench/bench_print.py [--runs 9]
    python bench/bench_print.py --serve DIR   # keep the server up; DIR/env holds the
                                              # environment for timing by hand

Needs node and the real pi (``PI_PACKAGE``, default /tmp/pi/node_modules/@mariozechner/
pi-coding-agent); without them only our own times are shown. Exits 1 when a budget is
missed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support.llm_server import LlmServer, Reply  # noqa: E402

REAL_PI = Path(os.environ.get("PI_PACKAGE", "/tmp/pi/node_modules/@mariozechner/pi-coding-agent"))
PRINT = ["--model", "fake-openai/fake-model", "--no-session", "-p", "hi"]
BUDGET = 0.2


def timed(command: list[str], env: dict, cwd: str) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[:4])} failed ({done.returncode}): {done.stderr[-2000:]}")
    return elapsed


def side_by_side(ours: list[str], theirs: list[str] | None, runs: int, env: dict,
                 cwd: str) -> tuple[float, float | None, float | None]:
    """(our median s, their median s, median of the pairwise ratios) after one warm-up each."""
    timed(ours, env, cwd)
    if theirs:
        timed(theirs, env, cwd)
    a, b = [], []
    for _ in range(runs):
        a.append(timed(ours, env, cwd))
        if theirs:
            b.append(timed(theirs, env, cwd))
    if not theirs:
        return statistics.median(a), None, None
    return (statistics.median(a), statistics.median(b),
            statistics.median(x / y for x, y in zip(a, b, strict=True)))


def setup(root: Path, server: LlmServer) -> dict:
    """The environment both pis run in: a fresh HOME and agent folder whose models.json
    points at ``server``."""
    agent = root / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "models.json").write_text(json.dumps(server.models_json(
        "fake-openai", models=["fake-model"], apiKey="unused")))
    server.default = Reply(text="Hello from the benchmark.")
    return {"PATH": os.environ["PATH"], "HOME": str(root), "PI_CODING_AGENT_DIR": str(agent)}


def serve(root: Path) -> int:
    """Keep the server up until interrupted; write the environment to ``root/env``."""
    root.mkdir(parents=True, exist_ok=True)
    with LlmServer() as server:
        env = setup(root, server)
        (root / "env").write_text("".join(f"export {k}={v}\n" for k, v in env.items()))
        print(f"serving at {server.url}; environment in {root / 'env'}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--serve", type=Path, metavar="DIR")
    args = parser.parse_args()
    if args.serve:
        return serve(args.serve)
    ours_pi = [str(Path(sys.executable).parent / "pi")]
    real = shutil.which("node") is not None and (REAL_PI / "dist" / "cli.js").exists()
    theirs_pi = ["node", str(REAL_PI / "dist" / "cli.js")] if real else None
    ok = True
    with tempfile.TemporaryDirectory(prefix="bench-print-") as tmp, LlmServer() as server:
        env = setup(Path(tmp), server)
        print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; "
              f"median of {args.runs} runs, in turn")
        for label, argv in (("pi -p hi", PRINT), ("pi --help", ["--help"]),
                            ("pi --version", ["--version"])):
            theirs = [*theirs_pi, *argv] if theirs_pi else None
            mine, their, ratio = side_by_side([*ours_pi, *argv], theirs, args.runs, env, tmp)
            line = f"{label}: ours {mine * 1000:.0f} ms"
            if their is not None and ratio is not None:
                line += f", real pi {their * 1000:.0f} ms, ratio {ratio:.3f}x"
            print(line)
            if label == "pi -p hi" and ratio is not None:
                good = ratio <= BUDGET
                print(f"  budget {BUDGET}x: {'ok' if good else 'OVER'}")
                ok &= good
        version, help_, ratio = side_by_side([*ours_pi, "--version"], [*ours_pi, "--help"],
                                             args.runs, env, tmp)
        good = ratio is not None and ratio <= 1.1
        print(f"pi --version / pi --help, ours in turn: {ratio:.2f}x (as fast: at most 1.1x, "
              f"for the noise of two ~30 ms commands): {'ok' if good else 'OVER'}")
        ok &= good
    if not real:
        print("not run beside the real pi: the ratio budget was not checked")
    print("all budgets met" if ok else "BUDGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
