"""Room on the malloc heap, backed by huge pages, before a large read.

Resuming a long session parses tens of MB of JSON into new strings, which glibc's malloc
takes from its heap as it grows, 128 KB at a time; the kernel then backs each new 4 KB
page on first touch. Page faults are dear in a virtual machine, and the 50 MB resume
took 10,000 of them there. :func:`make_room` grows the heap once by what the read will
need and asks for transparent huge pages there (``madvise(MADV_HUGEPAGE)``), so the same
strings cost a few dozen faults (the resume's median went from 0.394 to 0.379 s). It is
what ``GLIBC_TUNABLES=glibc.malloc.hugetlb=1`` does, which only works when set before
the process starts.

Only the ``pi`` process asks for it (:func:`allow`, from its console script): the
settings it changes are the process's own, and a host that imports pi_core (the SDK, a
Ray worker, the tests) keeps its allocator as it is. Anything else than Linux with glibc
and transparent huge pages available, or a call from another thread than the main one
(whose allocations come from another arena), does nothing. It is a hint: whatever fails,
the read goes on as before.
"""

from __future__ import annotations

import os
import threading

_HUGE_PAGE = 2 << 20
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3
_MADV_HUGEPAGE = 14
_STEP = 60 << 10  # below glibc's smallest mmap threshold: these come from the heap

_allowed = False
_made = 0  # bytes of heap made room for so far


def allow() -> None:
    """Let :func:`make_room` change this process's allocator (the console script)."""
    global _allowed
    _allowed = True


def make_room(size: int) -> bool:
    """Grow the heap by about ``size`` bytes, on huge pages, unless it has been already;
    whether it did."""
    global _made
    if not _allowed or size <= _made or threading.current_thread() is not threading.main_thread():
        return False
    try:
        if not _available():
            return False
        _made = size
        return _grow(size)
    except Exception:  # a hint only: any surprise leaves the allocator as it was
        return False


def _available() -> bool:
    try:
        libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (AttributeError, ValueError, OSError):
        return False
    if not libc.startswith("glibc"):
        return False
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled", encoding="ascii") as f:
            return "[never]" not in f.read()
    except OSError:
        return False


def _grow(size: int) -> bool:
    import ctypes

    libc = ctypes.CDLL(None)
    sbrk, malloc, free, madvise = libc.sbrk, libc.malloc, libc.free, libc.madvise
    sbrk.restype, sbrk.argtypes = ctypes.c_void_p, [ctypes.c_ssize_t]
    malloc.restype, malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    free.argtypes = [ctypes.c_void_p]
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    pad = size + _HUGE_PAGE
    # Keep the room once made: without these, freeing the next block at the heap's top
    # would hand it back to the kernel. Setting either turns off glibc's sliding mmap
    # threshold, so it is fixed where that slides to for blocks of a few MB.
    libc.mallopt(_M_MMAP_THRESHOLD, 4 << 20)
    libc.mallopt(_M_TRIM_THRESHOLD, 2 * pad)
    libc.mallopt(_M_TOP_PAD, pad)
    start = sbrk(0)
    blocks = []
    while sbrk(0) == start and len(blocks) < 64:  # the next growth takes the whole pad
        block = malloc(_STEP)
        if not block:
            break
        blocks.append(block)
    end = sbrk(0)
    for block in blocks:
        free(block)
    libc.mallopt(_M_TOP_PAD, 128 << 10)  # glibc's default, for later growth
    low = (start + _HUGE_PAGE - 1) & -_HUGE_PAGE
    high = end & -_HUGE_PAGE
    return high > low and madvise(low, high - low, _MADV_HUGEPAGE) == 0
