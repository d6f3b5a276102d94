"""The locks pi 1.6 takes on ``mcp-auth.json``, taken the same way, so pi 1.6 and
pi-harness (or two of either) never interleave a write or refresh one token twice.

Both are npm ``proper-lockfile`` locks: a directory made next to what it guards (``mkdir``
is atomic), whose holder touches it every half of its stale time; a lock older than that
was left by a process that died and is taken over.

- Every read and write of ``mcp-auth.json`` holds ``mcp-auth.json.lock`` (pi 1.6's
  ``lockSync``: stale after 10 s, 10 tries 20 ms apart).
- A refresh holds ``mcp-auth-refresh-<16 hex of sha256(server key)>.lock`` in the agent
  dir from reading the tokens to saving new ones (stale after 20 s, retried every 100 ms
  for 25 s), so when two processes find the same token expired, one refreshes and the
  other uses its tokens: servers that rotate refresh tokens would refuse a second refresh.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from pi_plugins.lock_dirs import try_lock, unlock, write_lock

WRITE_STALE_S = 10.0
WRITE_TRIES, WRITE_RETRY_S = 10, 0.02
REFRESH_STALE_S = 20.0
REFRESH_WAIT_S, REFRESH_RETRY_S = 25.0, 0.1


class RefreshLockBusy(Exception):
    """Another process held the refresh lock for the whole wait."""


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold ``<path>.lock`` (``path`` resolved, as proper-lockfile resolves it)."""
    with write_lock(Path(os.path.realpath(path)), stale=WRITE_STALE_S, tries=WRITE_TRIES, retry=WRITE_RETRY_S):
        yield


def refresh_lock_path(agent_dir: Path, key: str) -> Path:
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return Path(agent_dir) / f"mcp-auth-refresh-{digest}.lock"


class RefreshLock:
    """One server's refresh lock (``key`` as in ``mcp-auth.json``); :meth:`acquire` waits
    up to 25 s, then raises :class:`RefreshLockBusy`; :meth:`release` is idempotent."""

    def __init__(self, agent_dir: Path, key: str) -> None:
        self.path = refresh_lock_path(agent_dir, key)
        self._touch: asyncio.Task | None = None
        self.held = False

    async def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        deadline = time.monotonic() + REFRESH_WAIT_S
        while not try_lock(self.path, REFRESH_STALE_S):
            if time.monotonic() >= deadline:
                raise RefreshLockBusy(f"{self.path} is held by another pi process")
            await asyncio.sleep(REFRESH_RETRY_S)
        self.held = True
        self._touch = asyncio.ensure_future(self._keep_fresh())

    async def _keep_fresh(self) -> None:
        while True:
            await asyncio.sleep(REFRESH_STALE_S / 2)
            try:
                os.utime(self.path)
            except OSError:
                return

    def release(self) -> None:
        if self._touch is not None:
            self._touch.cancel()
            self._touch = None
        if self.held:
            self.held = False
            unlock(self.path)
