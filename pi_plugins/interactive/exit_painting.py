"""The fullscreen exit's transcript painted on every core: quitting right after resuming
a long session finds most of it unpainted (the idle painting has not run), and painting
1 MB of Markdown with rich takes seconds a core, with no single hot spot to cut.

The pieces left are cut into contiguous runs of about equal size; each run but the first
is painted in a forked child (a copy of the chat at the moment of exit, so nothing is
sent to it) which hands its lines back through a pipe; the chat paints the first run
itself meanwhile. A child that fails, or says nothing in time, costs only time: its run
is painted here instead. Where ``os.fork`` is missing, or little is left, all is
painted here.
"""

from __future__ import annotations

import logging
import os
import pickle
import select
import signal
import time
from collections.abc import Callable, Generator, Sequence

log = logging.getLogger(__name__)

#: Below this much source left (characters), a fork costs more than it saves.
PARALLEL_FROM_CHARS = 40_000
#: How long a child may take beyond twice the chat's own share before its run is
#: painted here (a child stuck, say, on a lock another thread held at the fork).
CHILD_GRACE_SECONDS = 10.0
MAX_WORKERS = 4

PaintOne = Callable[[int], list[str]]


def workers() -> int:
    try:
        cores = len(os.sched_getaffinity(0))  # type: ignore[attr-defined,unused-ignore]
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cores))


def runs(sizes: Sequence[int], count: int) -> list[range]:
    """``range(len(sizes))`` cut into at most ``count`` contiguous runs of about equal
    total size."""
    total = sum(sizes)
    out: list[range] = []
    start, done = 0, 0
    for part in range(1, count):
        target = total * part // count
        end = start
        while end < len(sizes) and done + sizes[end] <= target:
            done += sizes[end]
            end += 1
        if end > start:
            out.append(range(start, end))
            start = end
    if start < len(sizes):
        out.append(range(start, len(sizes)))
    return out


def paint_all(sizes: Sequence[int], paint: PaintOne) -> list[list[str]]:
    """``paint(i)`` for every ``i`` in ``range(len(sizes))``, in order, spread over the
    cores when there is enough to paint (``sizes``: each item's source length)."""
    return list(paint_each(sizes, paint))


def paint_each(sizes: Sequence[int], paint: PaintOne) -> Generator[list[str], None, None]:
    """What :func:`paint_all` returns, one item at a time as soon as it is ready: the
    chat's own run as it paints it, each child's once it has handed it over, so that
    the caller can print the first items while the rest are still being painted. The
    children start here, before the caller starts any thread of its own (a child forked
    while another thread holds a lock could wait on it for ever)."""
    count = workers() if hasattr(os, "fork") and sum(sizes) >= PARALLEL_FROM_CHARS else 1
    parts = runs(sizes, count)
    if len(parts) <= 1:
        return (paint(i) for i in range(len(sizes)))
    children = [(_fork(part, paint), part) for part in parts[1:]]
    return _in_order(parts[0], children, paint)


def _in_order(own: range, children: list[tuple[tuple[int, int] | None, range]],
              paint: PaintOne) -> Generator[list[str], None, None]:
    try:
        started = time.monotonic()
        for i in own:
            yield paint(i)
        deadline = time.monotonic() + max(2 * (time.monotonic() - started), 1.0) + CHILD_GRACE_SECONDS
        while children:
            child, part = children.pop(0)
            painted = _collect(child, deadline) if child is not None else None
            if painted is None or len(painted) != len(part):
                painted = [paint(i) for i in part]  # the child failed: its run painted here
            yield from painted
    finally:  # left before the end (the caller failed): no child outlives it
        for child, _ in children:
            if child is not None:
                _end(child)


def _fork(part: range, paint: PaintOne) -> tuple[int, int] | None:
    """(pid, the pipe's read end) of a child painting ``part``; None when none starts."""
    try:
        read, write = os.pipe()
        pid = os.fork()
    except OSError:
        log.debug("no child to paint the exit's transcript", exc_info=True)
        return None
    if pid == 0:  # the child: paint, hand the lines over, and end without running the chat's exit
        code = 1
        try:
            os.close(read)
            data = pickle.dumps([paint(i) for i in part], protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write, "wb") as out:
                out.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    return pid, read


def _collect(child: tuple[int, int], deadline: float) -> list[list[str]] | None:
    pid, read = child
    chunks: list[bytes] = []
    try:
        while True:
            wait = deadline - time.monotonic()
            if wait <= 0 or not select.select([read], [], [], wait)[0]:
                os.kill(pid, signal.SIGKILL)
                return None
            chunk = os.read(read, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        os.close(read)
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            status = -1
    if status != 0:
        return None
    try:
        painted = pickle.loads(b"".join(chunks))
    except Exception:
        return None
    return painted if isinstance(painted, list) else None


def _end(child: tuple[int, int]) -> None:
    pid, read = child
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except OSError:
        pass
    try:
        os.close(read)
    except OSError:
        pass
