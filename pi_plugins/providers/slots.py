"""At most so many requests at once to one server, the others queued in order.

A local server runs a fixed number of requests at once (llama.cpp's slots; one for
llama-cpp-python, which drops a running answer when another request arrives unless it
was started with ``--interrupt_requests False``). A batch or a fan-out of subagents must
not send more than that: the model's ``compat["maxConcurrentRequests"]`` (set by the
local_models plugin for the servers it discovered) is the limit for its base URL, per
event loop. A model without it is not limited.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from pi_core.protocol.model import Model

#: Per event loop: base URL -> (limit, semaphore).
_slots: weakref.WeakKeyDictionary[Any, dict[str, tuple[int, asyncio.Semaphore]]] = weakref.WeakKeyDictionary()


def limit_of(model: Model) -> int | None:
    value = (model.compat or {}).get("maxConcurrentRequests")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


async def acquire(model: Model) -> asyncio.Semaphore | None:
    """Wait for a free slot of ``model``'s server (first come, first served); the
    semaphore to release when the answer has ended, or ``None`` when there is no limit."""
    limit = limit_of(model)
    if limit is None:
        return None
    servers = _slots.setdefault(asyncio.get_running_loop(), {})
    held = servers.get(model.base_url)
    if held is None or held[0] != limit:
        # a new limit (a server discovered again) applies to requests from now on
        held = servers[model.base_url] = (limit, asyncio.Semaphore(limit))
    await held[1].acquire()
    return held[1]
