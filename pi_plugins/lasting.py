"""Imports whose objects live as long as the process (the command line, the HTTP
transport): made with no collection meanwhile, then frozen (``gc.freeze``, CPython's
documented API) so no later collection walks them again."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def lasting() -> Iterator[None]:
    """What runs inside makes long-lived objects: no collection meanwhile, and frozen
    after (left as it is when collection was off already, as the caller chose)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.freeze()
            gc.enable()
