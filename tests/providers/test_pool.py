"""The shards of HTTP clients that keep hundreds of concurrent requests cheap."""

import asyncio

from pi_plugins.providers.http import _pool, http_client
from pi_plugins.providers.pool import SHARD_CONNECTIONS


def test_requests_fill_the_first_shard_before_a_new_one_is_made_and_slots_come_back():
    async def scenario():
        pool = _pool("http://127.0.0.1:9")
        taken = [await pool.acquire() for _ in range(2 * SHARD_CONNECTIONS + 1)]
        sizes = [s.in_use for s in pool.shards]
        for shard in taken:
            pool.release(shard)
        again = await pool.acquire()
        first = pool.shards[0]
        client = await http_client("http://127.0.0.1:9")
        return sizes, again is first, client is first.client, [s.in_use for s in pool.shards]

    sizes, reused, same_client, after = asyncio.run(scenario())
    assert sizes == [SHARD_CONNECTIONS, SHARD_CONNECTIONS, 1]
    assert reused and same_client
    assert after == [1, 0, 0]


def test_each_event_loop_and_each_scheme_has_its_own_pool():
    async def pools():
        return _pool("http://a"), _pool("https://b"), _pool("http://c")

    plain, secure, plain_again = asyncio.run(pools())
    assert plain is plain_again and plain is not secure
    assert asyncio.run(pools())[0] is not plain


def test_a_shard_whose_client_was_closed_is_replaced():
    async def scenario():
        pool = _pool("http://127.0.0.1:9")
        shard = await pool.acquire()
        pool.release(shard)
        await shard.client.aclose()
        fresh = await pool.acquire()
        return fresh is not shard and not fresh.client.is_closed, len(pool.shards)

    assert asyncio.run(scenario()) == (True, 1)


def test_the_shards_of_a_tls_pool_share_one_tls_context():
    async def scenario():
        pool = _pool("https://api.example.invalid")
        taken = [await pool.acquire() for _ in range(SHARD_CONNECTIONS + 1)]
        contexts = {id(s.client.ssl_context) for s in pool.shards}
        for shard in taken:
            pool.release(shard)
        return len(pool.shards), contexts

    shards, contexts = asyncio.run(scenario())
    assert shards == 2 and len(contexts) == 1


def test_every_request_goes_through_one_client_whatever_the_scheme():
    from pi_plugins.providers.transport import Client

    async def clients():
        return await http_client("http://127.0.0.1:9"), await http_client("https://b.invalid")

    plain, secure = asyncio.run(clients())
    assert isinstance(plain, Client) and isinstance(secure, Client)
    assert plain.ssl_context is None and secure.ssl_context is not None
