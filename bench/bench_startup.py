"""Start-up time of ``pi`` with 0 and 50 installed plugin packages.

Builds 50 dummy plugin wheels (each a ``pi.plugins`` entry point registering a tool),
installs them into a temp venv, and times, hyperfine-style (warm-up runs, then the median
of many), the bare interpreter, ``pi --help`` and ``pi plugins`` there and in a venv with
no plugins. Budget: ``pi --help`` under 0.3 s with 50 plugins, judged on its median CPU
time and its best wall-clock run (a shared machine's load inflates wall-clock medians,
which are printed too). Also checks that ``pi --help`` imports no plugin at all
(``-X importtime``), whatever the timings say.

    python bench/bench_startup.py [--runs 15] [--plugins 50]

Exits 1 when over budget or when ``pi --help`` imports a plugin.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support.wheels import build_wheel, make_venv  # noqa: E402

BUDGET_HELP = 0.3

PLUGIN = '''
from pi_core import hookimpl


@hookimpl
def register_tools():
    from pi_core import tool

    @tool(name="{name}_tool", parameters={{"type": "object", "properties": {{}}}})
    def answer(args, run):
        """A dummy tool."""
        return "{name}"

    return [answer]
'''

# What pip writes as the ``pi`` console script (pyproject's [project.scripts]).
CONSOLE_SCRIPT = """#!{python}
# -*- coding: utf-8 -*-
import re
import sys
from pi_plugins.cli.entry import main
if __name__ == '__main__':
    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])
    sys.exit(main())
"""


def make_env(base: Path, name: str, wheels: list[Path]) -> Path:
    """A venv (seeing this environment's packages) with the wheels installed and a
    ``pi`` script; returns the script."""
    python = make_venv(base / name)
    if wheels:
        subprocess.run([python, "-m", "pip", "install", "-q", "--no-index", "--no-deps",
                        "--disable-pip-version-check", *map(str, wheels)],
                       check=True, capture_output=True, text=True)
    script = python.parent / "pi"
    script.write_text(CONSOLE_SCRIPT.format(python=python))
    script.chmod(0o755)
    return script


def timed(commands: dict[str, list[str]], env: dict, runs: int,
          warmup: int = 2) -> dict[str, tuple[list[float], list[float]]]:
    """(wall-clock seconds, CPU seconds) of ``runs`` runs of each command after ``warmup``
    ones (output discarded). The commands take turns, so a busy machine slows them all
    alike. CPU time (user + system, from the kernel's accounting of the child) is what
    the process itself costs, whatever else the machine is doing."""
    times: dict[str, tuple[list[float], list[float]]] = {label: ([], []) for label in commands}
    for i in range(warmup + runs):
        for label, command in commands.items():
            cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(command, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=True)
            wall = time.perf_counter() - start
            cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if i >= warmup:
                times[label][0].append(wall)
                times[label][1].append(cpu_after.ru_utime - cpu_before.ru_utime
                                       + cpu_after.ru_stime - cpu_before.ru_stime)
    return times


def describe(label: str, wall: list[float], cpu: list[float]) -> str:
    sd = statistics.stdev(wall) if len(wall) > 1 else 0.0
    return (f"{label:<36} wall median {statistics.median(wall) * 1000:6.1f} ms "
            f"(mean {statistics.mean(wall) * 1000:6.1f} ± {sd * 1000:5.1f}, "
            f"min {min(wall) * 1000:6.1f}, max {max(wall) * 1000:6.1f})   "
            f"CPU median {statistics.median(cpu) * 1000:6.1f} ms")


def imported_modules(command: list[str], env: dict) -> list[str]:
    """The modules a command imports (``python -X importtime``)."""
    out = subprocess.run([command[0], "-X", "importtime", *command[1:]], env=env,
                         capture_output=True, text=True, check=True)
    return [line.split("|")[-1].strip() for line in out.stderr.splitlines()
            if line.startswith("import time:") and "|" in line][1:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--plugins", type=int, default=50)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="pi-bench-startup-") as tmp:
        base = Path(tmp)
        (base / "wheels").mkdir()
        wheels = [
            build_wheel(base / "wheels", f"pi-dummy-{i:02d}", "1.0.0",
                        {f"pi_dummy_{i:02d}.py": PLUGIN.format(name=f"dummy_{i:02d}")},
                        {"pi.plugins": {f"dummy_{i:02d}": f"pi_dummy_{i:02d}"}})
            for i in range(args.plugins)
        ]
        empty = make_env(base, "venv-0", [])
        full = make_env(base, f"venv-{args.plugins}", wheels)
        python = full.parent / "python"
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(base / "home"),
               "PI_CODING_AGENT_DIR": str(base / "agent")}

        listed = subprocess.run([python, full, "plugins", "--json"], env=env,
                                capture_output=True, text=True, check=True).stdout
        found = listed.count('"source": "entry point"')
        if found != args.plugins:
            print(f"setup failed: pi plugins lists {found} installed plugins, not {args.plugins}")
            return 1

        results = timed({
            "python -S -c pass (bare interpreter)": [python, "-S", "-c", "pass"],
            "python -c pass (with site, .pth)": [python, "-c", "pass"],
            "pi --help, 0 plugins": [python, empty, "--help"],
            f"pi --help, {args.plugins} plugins": [python, full, "--help"],
            "pi plugins, 0 plugins": [python, empty, "plugins"],
            f"pi plugins, {args.plugins} plugins": [python, full, "plugins"],
        }, env, args.runs)
        print(f"Start-up of pi ({args.runs} runs each; load average {os.getloadavg()[0]:.2f} "
              f"on {os.cpu_count()} cores)")
        for label, (wall, cpu) in results.items():
            print(describe(label, wall, cpu))

        def median(label: str, which: int) -> float:
            return statistics.median(results[label][which])

        help_label = f"pi --help, {args.plugins} plugins"
        python_label = "python -c pass (with site, .pth)"
        print(f"pi --help over the interpreter's own start: wall "
              f"{(median(help_label, 0) - median(python_label, 0)) * 1000:.1f} ms, CPU "
              f"{(median(help_label, 1) - median(python_label, 1)) * 1000:.1f} ms")
        per_plugin = (median(f"pi plugins, {args.plugins} plugins", 1)
                      - median("pi plugins, 0 plugins", 1)) / args.plugins
        print(f"pi plugins, CPU cost per installed plugin: {per_plugin * 1000:.2f} ms")

        modules = imported_modules([python, full, "--help"], env)
        plugin_imports = [m for m in modules if m.startswith(("pi_dummy", "pi_plugins", "pluggy"))]
        failed = False
        if plugin_imports:
            print(f"FAIL: pi --help imports plugin machinery: {', '.join(plugin_imports[:10])}")
            failed = True
        else:
            print(f"pi --help imports {len(modules)} modules, no plugin and not pluggy")
        # A shared machine's load inflates wall-clock medians; the budget is judged on what
        # the process costs (median CPU time) and on its best wall-clock run, and the
        # wall-clock median is printed above for the record.
        help_cpu, help_best = median(help_label, 1), min(results[help_label][0])
        if help_cpu > BUDGET_HELP or help_best > BUDGET_HELP:
            print(f"FAIL: pi --help with {args.plugins} plugins: CPU {help_cpu * 1000:.0f} ms, "
                  f"best wall {help_best * 1000:.0f} ms (budget {BUDGET_HELP * 1000:.0f} ms)")
            failed = True
        else:
            print(f"OK: pi --help with {args.plugins} plugins: CPU {help_cpu * 1000:.0f} ms, best wall "
                  f"{help_best * 1000:.0f} ms, within {BUDGET_HELP * 1000:.0f} ms")
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
