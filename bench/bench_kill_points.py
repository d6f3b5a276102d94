"""Benchmark (issue 41's figure): SIGKILL of pi (``pi -p``, ``pi serve`` or the chat, by
``--mode``) at random points of a run whose
bash command forks, setsids, ``env -i setsid``s, double forks and sleeps; how many
processes of the session are left afterwards (pi's warden included).

Each kill point is a random moment within 0.3 s of the command's first process
appearing, so some fall while the escape forms are still starting and most while they
all run. With
``--fallback`` pi runs as on a machine where no cgroup can be made (parent-death signal,
process groups and environment markers only): there ``env -i setsid`` is expected to
escape, and the figure shows how often.

    python bench/bench_kill_points.py [--points 100] [--seed 0] [--mode print|serve|chat]
                                      [--fallback]
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
from support import escapes  # noqa: E402
from support.cli import PiRunner  # noqa: E402
from support.llm_server import LlmServer  # noqa: E402

from pi_plugins.tools import cgroups  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mode", choices=sorted(escapes.STARTS), default="print",
                        help="which pi to kill: pi -p, pi serve or the chat")
    parser.add_argument("--fallback", action="store_true", help="as without writable cgroups (pi -p only)")
    args = parser.parse_args()
    if args.fallback:
        original = escapes.start_print_mode

        def start(pi, server, mark, command=None):
            return original(pi, server, mark, command or escapes.fallback_command(pi, "-p", "run it"))

        escapes.start_print_mode = start  # type: ignore[assignment]
    mode = "fallback (no cgroups)" if args.fallback or cgroups.own_folder() is None else "cgroups"
    began = time.monotonic()
    with LlmServer() as server, tempfile.TemporaryDirectory() as home:
        points = escapes.kill_points(PiRunner(Path(home), server), server, args.points, seed=args.seed,
                                     mode=args.mode)
    elapsed = time.monotonic() - began
    mid = sum(p["sleeps_at_kill"] == escapes.SLEEPS for p in points)
    left = collections.Counter(line.split(" ")[0] + (" (env -i setsid)" if line.endswith("3") else "")
                               for p in points for line in p["left"])
    print(f"pi {args.mode}, {mode}; {len(points)} kill points in {elapsed:.0f} s "
          f"(all during the command: {mid} with every escape form running, "
          f"{len(points) - mid} while they were starting)")
    print(f"points leaving processes behind: {sum(bool(p['left']) for p in points)}; "
          f"processes left in all: {sum(left.values())} {dict(left) if left else ''}")


if __name__ == "__main__":
    main()
