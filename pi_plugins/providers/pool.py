"""The HTTP clients of one event loop, in shards, so hundreds of concurrent requests
cost what a few do.

One HTTP client per loop is what a single agent needs, but a batch or a fan-out of
subagents puts hundreds of streams through it at once, and httpcore's pool does work in
proportion to (queued requests x connections) every time a request starts or a response
closes. Past its default limit of 100 connections the queue grows and the cost per
request with it: 300 concurrent agents took 5.8x the time of 100, most of it in the
pool's bookkeeping. So each shard is a client of at most :data:`SHARD_CONNECTIONS`
connections, a request takes a slot in the first shard with one free (a new shard is
made when none has), and no shard's own queue ever grows. A single agent only ever uses
the first shard, with its connections kept alive between requests.
"""

from __future__ import annotations

import asyncio
import sys
import weakref
from collections.abc import Callable
from typing import Any

#: Connections per shard: small, because httpcore scans its connections (some scans
#: nested) on every request and close.
SHARD_CONNECTIONS = 8


class Shard:
    __slots__ = ("client", "in_use", "keeper")

    def __init__(self, client: Any, keeper: Any):
        self.client = client
        self.in_use = 0
        self.keeper = keeper


class ClientPool:
    """Shards of one loop for one kind of URL (plain or TLS)."""

    def __init__(self, make_client: Callable[[int], Any]):
        self._make_client = make_client
        self.shards: list[Shard] = []

    async def acquire(self) -> Shard:
        """A shard with a free slot (taken until :meth:`release`)."""
        for shard in self.shards:
            if shard.in_use < SHARD_CONNECTIONS and not shard.client.is_closed:
                break
        else:
            self.shards = [s for s in self.shards if not s.client.is_closed]
            client = self._make_client(SHARD_CONNECTIONS)
            keeper = _keep_until_shutdown(client)
            await keeper.__anext__()
            shard = Shard(client, keeper)
            self.shards.append(shard)
        shard.in_use += 1
        return shard

    @staticmethod
    def release(shard: Shard) -> None:
        shard.in_use -= 1

    async def first_client(self) -> Any:
        """The first shard's client (for a request that manages no slot)."""
        if not self.shards or self.shards[0].client.is_closed:
            shard = await self.acquire()
            self.release(shard)
        return self.shards[0].client


_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict] = weakref.WeakKeyDictionary()


def pool_for(secure: bool, make_client: Callable[[int], Any]) -> ClientPool:
    per_loop = _pools.setdefault(asyncio.get_running_loop(), {})
    pool = per_loop.get(secure)
    if pool is None:
        pool = per_loop[secure] = ClientPool(make_client)
    return pool


async def _keep_until_shutdown(client: Any):
    """Holds the client open until the loop shuts down (``asyncio.run`` closes the async
    generators it knows), then closes it, so no connection is left open."""
    try:
        yield
        await asyncio.Event().wait()  # resumed only by the loop's shutdown (aclose)
    finally:
        await client.aclose()


def transport() -> tuple:
    """The HTTP transport's client class and TLS context maker. Its first import (httpcore,
    h11, the CA bundle's modules) makes what lives as long as the process: no collection
    meanwhile, and it is frozen then (``gc.freeze``), so no later collection walks it."""
    if "pi_plugins.providers.transport" in sys.modules:
        from pi_plugins.providers.transport import Client, ssl_context
    else:
        from pi_plugins.lasting import lasting

        with lasting():
            from pi_plugins.providers.transport import Client, ssl_context
    return Client, ssl_context
