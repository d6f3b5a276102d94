"""Finding a test's processes in /proc by a marker in their environment: the escape tree
(a plain background job, one that leaves the session with ``setsid``, ``nohup``, a
double fork) and the scan that finds what is left of it."""

import os
import time

SLEEPS = 5  # sleep 301 … 305


def escape_tree(mark: str) -> str:
    return (f"export ESCAPE_MARK={mark}; sleep 301 & (setsid sleep 302 &); "
            "nohup sleep 303 >/dev/null 2>&1 & bash -c 'sleep 304 & wait' & echo started; sleep 305")


def marked_pids(mark: str) -> dict[int, str]:
    """The live processes carrying ``mark`` in their environment, with their command
    lines (a zombie has neither, and is not alive)."""
    found = {}
    entry = f"ESCAPE_MARK={mark}".encode()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                if entry not in f.read().split(b"\0"):
                    continue
            with open(f"/proc/{name}/cmdline", "rb") as f:
                found[int(name)] = f.read().replace(b"\0", b" ").decode().strip()
        except OSError:
            continue
    return found


def marked(mark: str) -> list[str]:
    return sorted(marked_pids(mark).values())


def wait_for(predicate, timeout=15.0, what="the condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def wait_for_tree(mark: str) -> None:
    wait_for(lambda: sum(c.startswith("sleep 30") for c in marked(mark)) == SLEEPS,
             what="every process of the escape tree to run")


def survivors(mark: str, grace: float = 2.0) -> list[str]:
    """The marked processes still alive ``grace`` seconds from now at the latest: a
    process killed just before pi exited may need a moment on a busy machine to be
    scheduled and die, while a real survivor (a sleep of minutes) is still there."""
    deadline = time.monotonic() + grace
    while (left := marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return left
