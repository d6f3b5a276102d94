"""pi's file locks, taken as npm's proper-lockfile takes them: a directory made beside
what it guards (``mkdir`` is atomic), touched by its holder; one older than its stale time
was left by a process that died and is taken over. ``auth.json`` and ``mcp-auth.json`` are
locked this way, as pi locks them, so pi and pi-harness never interleave a write."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path


def try_lock(lock: Path, stale: float) -> bool:
    """Take the lock directory; one older than ``stale`` seconds is taken over."""
    try:
        os.mkdir(lock)
        return True
    except FileExistsError:
        pass
    try:
        if os.stat(lock).st_mtime >= time.time() - stale:
            return False
        os.rmdir(lock)
        os.mkdir(lock)
        return True
    except OSError:  # gone meanwhile, or taken by another: try again later
        return False


def unlock(lock: Path) -> None:
    with contextlib.suppress(OSError):
        os.rmdir(lock)


@contextlib.contextmanager
def write_lock(path: Path, *, stale: float = 10.0, tries: int = 10, retry: float = 0.02) -> Iterator[None]:
    """Hold ``<path>.lock`` for a plain write: pi's ``lockSync`` (stale after 10 s, 10
    tries 20 ms apart), then a clear error."""
    lock = path.with_name(path.name + ".lock")
    for attempt in range(tries):
        if try_lock(lock, stale):
            break
        if attempt == tries - 1:
            raise TimeoutError(f"{lock} is held by another pi process; try again")
        time.sleep(retry)
    try:
        yield
    finally:
        unlock(lock)
