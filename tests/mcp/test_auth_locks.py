"""The locks pi 1.6 takes on ``mcp-auth.json`` (npm proper-lockfile directories), taken
the same way: a held lock keeps the file as it is, a stale one (its holder died) is taken
over, and the refresh lock is per server."""

import asyncio
import json
import os
import time

import pytest

from pi_plugins.mcp import auth_locks
from pi_plugins.mcp.auth_locks import RefreshLock, RefreshLockBusy, refresh_lock_path
from pi_plugins.mcp.oauth import AuthStore


def test_a_held_mcp_auth_json_lock_keeps_the_file_as_it_is_and_says_why(tmp_path):
    store = AuthStore(tmp_path)
    store.update("s", "http://x/mcp", lambda state: state.update(tokens={"access_token": "a"}))
    before = store.path.read_text()
    (tmp_path / "mcp-auth.json.lock").mkdir()  # pi 1.6 is writing

    with pytest.raises(TimeoutError, match=r"mcp-auth\.json\.lock is held by another pi process; try again"):
        store.update("s", "http://x/mcp", lambda state: state.update(tokens={"access_token": "b"}))

    assert store.path.read_text() == before


def test_a_lock_left_by_a_process_that_died_is_taken_over(tmp_path):
    store = AuthStore(tmp_path)
    lock = tmp_path / "mcp-auth.json.lock"
    lock.mkdir()
    old = time.time() - auth_locks.WRITE_STALE_S - 1
    os.utime(lock, (old, old))

    store.update("s", "http://x/mcp", lambda state: state.update(tokens={"access_token": "b"}))

    assert json.loads(store.path.read_text())["mcp__s|http://x/mcp"]["tokens"] == {"access_token": "b"}
    assert not lock.exists()  # released


def test_the_refresh_lock_is_pi_16_s_path_and_waits_for_its_holder(tmp_path, monkeypatch):
    key = "mcp__secure|http://127.0.0.1:1/mcp"
    # pi 1.6: sha256(key) as hex, first 16 characters (node computes the same), in the agent dir
    assert refresh_lock_path(tmp_path, key).name == "mcp-auth-refresh-22af67c1db957646.lock"
    monkeypatch.setattr(auth_locks, "REFRESH_WAIT_S", 0.3)

    async def scenario():
        first = RefreshLock(tmp_path, key)
        await first.acquire()
        with pytest.raises(RefreshLockBusy):
            await RefreshLock(tmp_path, key).acquire()
        other_server = RefreshLock(tmp_path, "mcp__other|http://127.0.0.1:1/mcp")
        await other_server.acquire()  # one lock per server
        other_server.release()
        waiting = asyncio.ensure_future(RefreshLock(tmp_path, key).acquire())
        await asyncio.sleep(0.1)
        first.release()
        await waiting

    asyncio.run(scenario())
