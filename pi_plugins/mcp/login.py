"""Signing in to an OAuth MCP server and out of it, for ``pi mcp login|logout`` and
``/mcp login|logout``, with pi 1.6's messages.

A sign-in is a connection allowed to run the browser step (:mod:`.oauth`): it listens on
the loopback callback, shows (and opens) the authorization URL, and waits, within the
time limit, for the browser to come back or for the user to paste the redirected URL;
the SDK then exchanges the code and saves the tokens, and the connection's tools prove
them.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pi_plugins.browser import open_browser
from pi_plugins.mcp.config import ServerEntry
from pi_plugins.mcp.connection import McpCallError, ServerConnection

DEFAULT_TIMEOUT_S = 300
NOT_OAUTH = 'MCP server "{name}" does not use OAuth. Only HTTP servers without an Authorization header do.'


async def sign_in(entry: ServerEntry, cwd: str, agent_dir: Path, *, show_url: Callable[[str], Any],
                  paste: Callable[[Callable[[str], None]], Awaitable[None]] | None = None,
                  on_log: Callable[[str, dict], None] | None = None) -> ServerConnection:
    """Run the browser sign-in and return the connected connection (the caller closes it).
    ``paste(deliver)`` may hand over a redirect URL the user pasted. Raises
    :class:`McpCallError` or :class:`pi_plugins.mcp.oauth.SignInFailed` in one line."""
    from pi_plugins.mcp.oauth import SignInSettings, callback_settings

    where = callback_settings(entry, agent_dir)
    try:
        callback = await where.callback().__aenter__()
    except OSError:
        if where.port == 0 or where.configured_port:
            raise
        callback = await where.callback(0).__aenter__()  # the registered port is taken: register anew
    pasting: asyncio.Future | None = None
    connection: ServerConnection | None = None
    try:
        async def show(url: str) -> None:
            nonlocal pasting
            result = show_url(url)
            if asyncio.iscoroutine(result):
                await result
            if paste is not None:
                pasting = asyncio.ensure_future(paste(callback.deliver))

        settings = SignInSettings(callback.redirect_uri, show, callback.wait)
        connection = ServerConnection(entry, cwd, agent_dir=agent_dir, sign_in=settings, on_log=on_log)
        await connection.get_client()
        return connection
    except BaseException:
        if connection is not None:
            await connection.close()
        raise
    finally:
        if pasting is not None:
            pasting.cancel()
        await callback.__aexit__(None, None, None)


def sign_out(entry: ServerEntry, agent_dir: Path) -> bool:
    """Delete the stored credentials; whether there were any."""
    from pi_plugins.mcp.oauth import AuthStore, server_url

    return AuthStore(agent_dir).remove(entry.name, server_url(entry))


async def login_command(entry: ServerEntry, cwd: str, agent_dir: Path, timeout: float, out: Callable[[str], None],
                        err: Callable[[str], None], open_url: Callable[[str], Any] = open_browser,
                        paste: Callable[[Callable[[str], None]], Awaitable[None]] | None = None) -> int:
    """``pi mcp login <server>``: its lines and exit status, as pi 1.6's."""
    from pi_plugins.mcp.log import ServerLog

    name = entry.name
    log = ServerLog(agent_dir / "mcp.log").write
    probe = ServerConnection(entry, cwd, agent_dir=agent_dir, on_log=log)
    try:
        await probe.get_client()
        out(f'Already signed in to MCP server "{name}" ({len(probe.tools)} tools).')
        return 0
    except McpCallError:
        if probe.state != "needs-auth":
            err(f'MCP server "{name}" failed to connect: {probe.error or "unknown error"}')
            return 1
    finally:
        await probe.close()

    def show(url: str) -> None:
        out(f'Sign in to MCP server "{name}" in your browser:\n{url}')
        open_url(url)

    try:
        connection = await asyncio.wait_for(sign_in(entry, cwd, agent_dir, show_url=show, paste=paste, on_log=log),
                                            timeout)
    except TimeoutError:
        err(f'Sign-in to MCP server "{name}" was cancelled or not completed within {round(timeout)} seconds.')
        return 1
    except Exception as exc:  # noqa: BLE001 - one line for the user
        err(f'Sign-in to MCP server "{name}" failed: {one_line(exc, name)}')
        return 1
    try:
        out(f'Signed in to MCP server "{name}" ({len(connection.tools)} tools).')
    finally:
        await connection.close()
    return 0


def one_line(exc: BaseException, name: str) -> str:
    """The error of a failed sign-in, without the connection's own prefix."""
    from pi_plugins.mcp.connection import describe

    text = describe(exc)
    prefix = f'MCP server "{name}" failed to connect: '
    return text[len(prefix):] if text.startswith(prefix) else text


async def paste_from_terminal(deliver: Callable[[str], None]) -> None:
    """In a terminal, a pasted redirect URL finishes the sign-in (a browser on another
    machine cannot reach the loopback callback). Read in a daemon thread, so a sign-in
    that the browser finished does not wait for a line."""
    if not sys.stdin.isatty():
        return

    loop = asyncio.get_running_loop()
    line: asyncio.Future[str] = loop.create_future()

    def hand_over(text: str) -> None:
        if not line.done():
            line.set_result(text)

    def read() -> None:
        loop.call_soon_threadsafe(hand_over, sys.stdin.readline())

    print("If the browser cannot reach this machine, paste the URL it was redirected to:", file=sys.stderr)
    threading.Thread(target=read, daemon=True).start()
    text = await line
    if text.strip():
        deliver(text.strip())
