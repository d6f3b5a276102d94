"""One writer per file at a time.

Tools run in parallel by default, so two edits of one file in the same batch could
each read the old text and the second write would undo the first. ``edit`` and
``write`` take this per-path lock around their read-modify-write; different files still
proceed side by side.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

_locks: dict[str, tuple[asyncio.Lock, int]] = {}


@asynccontextmanager
async def file_lock(path: str) -> AsyncIterator[None]:
    lock, users = _locks.get(path, (None, 0))
    if lock is None:
        lock = asyncio.Lock()
    _locks[path] = (lock, users + 1)
    try:
        async with lock:
            yield
    finally:
        lock, users = _locks[path]
        if users <= 1:
            del _locks[path]
        else:
            _locks[path] = (lock, users - 1)
