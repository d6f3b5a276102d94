"""One configured MCP server: its connection over stdio or streamable HTTP, on the
official ``mcp`` SDK (imported here only, when a server is to be connected, and then in a
thread of its own: the import takes most of a second of CPU, which on the event loop would
hold up the first prompt, while no server is needed before it unless ``direct``).

The SDK's client and transports are anyio context managers that must be entered and left
by one task, so each connection lives in a task of its own that opens them, says it is
ready, and waits to be told to stop; calls from the agent go through the open client
meanwhile. A connection that drops (a crashed server) shows as ``disconnected`` and opens
again on the next call, as pi 1.6's does; a tool call is never sent twice. Errors are one
line each (the first real error of anyio's exception groups), with the tail of a failed
stdio server's stderr.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import gc
import importlib
import logging
import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from pi_plugins.mcp.config import ServerEntry
from pi_plugins.mcp.stdio_transport import StdioTransport
from pi_plugins.mcp.values import UnresolvedValue, resolve

log = logging.getLogger("pi.mcp")
STDERR_TAIL_CHARS = 2000
CONNECTION_CLOSED = -32000  # the JSON-RPC code the SDK fails requests with when the transport ends
MAX_PAGES = 100
#: Delays between attempts to connect to an HTTP server that failed with a transient error.
CONNECT_RETRY_DELAYS_S = (0.25, 1.0)


#: What connecting needs of the SDK (and our OAuth client on it), imported off the event loop.
SDK_MODULES = ("mcp", "mcp.shared.message", "mcp.client.streamable_http", "httpx2", "pi_plugins.mcp.oauth")
_sdk_import: concurrent.futures.Future | None = None
_sdk_import_lock = threading.Lock()


class McpCallError(Exception):
    """A request failed; the message is one line for the model or the user."""


def _import_sdk(done: concurrent.futures.Future) -> None:
    global _sdk_import
    try:
        for module in SDK_MODULES:
            importlib.import_module(module)
    except BaseException as exc:  # noqa: BLE001 - handed to the connections waiting for it
        with _sdk_import_lock:
            _sdk_import = None  # tried again by the next connection
        done.set_exception(exc if isinstance(exc, Exception) else McpCallError(describe(exc)))
    else:
        # The SDK's pydantic models are a large graph of objects that live until the end:
        # the collector's passes over them at exit cost ~0.2 s (0.01 s frozen), and its
        # passes during the run are spared them too. What the run makes later is frozen at
        # exit, so the interpreter's last collections have nothing to look at.
        gc.freeze()
        atexit.register(gc.freeze)
        done.set_result(None)


async def load_sdk() -> None:
    """The SDK imported, by one daemon thread for the whole process (a run that ends
    before it is done does not wait for it, and starts no server)."""
    global _sdk_import
    with _sdk_import_lock:
        if _sdk_import is None:
            _sdk_import = concurrent.futures.Future()
            _sdk_import.set_running_or_notify_cancel()  # so a cancelled waiter cannot cancel it for the others
            threading.Thread(target=_import_sdk, args=(_sdk_import,), name="pi-mcp-sdk-import", daemon=True).start()
        loading = _sdk_import
    if not loading.done():
        await asyncio.wrap_future(loading)
    loading.result()


def first_error(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe(exc: BaseException) -> str:
    exc = first_error(exc)
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if isinstance(exc, (McpCallError, UnresolvedValue)):
        return text
    if type(exc).__name__ == "MCPError" and text == "Connection closed":  # the server ended: pi 1.6's words
        return "MCP connection closed"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def as_json(model: Any) -> Any:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def _transient(exc: BaseException) -> bool:
    """Network failures and overloaded or restarting HTTP servers: worth another try."""
    exc = first_error(exc)
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if isinstance(status, int):
        return status in (408, 429) or (status >= 500 and status != 501)
    name = type(exc).__name__
    return name in ("ConnectError", "ConnectTimeout", "ReadError", "RemoteProtocolError") or isinstance(
        exc, ConnectionError)


def _expand_home(value: str) -> str:
    return str(Path.home()) if value == "~" else (str(Path.home() / value[2:]) if value.startswith("~/") else value)


class ServerConnection:
    """State: ``connecting``, ``connected``, ``needs-auth`` (an OAuth server that wants a
    sign-in), ``failed``, ``disconnected`` or ``closed``.

    With ``agent_dir``, an HTTP server without an Authorization header signs in with the
    OAuth credentials stored there (:mod:`.oauth`); ``sign_in`` lets this connection run
    the browser step (``pi mcp login``), whose wait bounds the requests instead of the
    server's ``timeout``."""

    def __init__(self, entry: ServerEntry, cwd: str, *, on_tools: Callable[[ServerConnection], None] | None = None,
                 on_log: Callable[[str, dict], None] | None = None, agent_dir: Path | None = None,
                 sign_in: Any = None) -> None:
        self.entry = entry
        self.cwd = cwd
        self.agent_dir = agent_dir
        self.sign_in = sign_in
        self.state = "connecting"
        self.error: str | None = None
        self.tools: list[dict] = []
        self.instructions: str | None = None
        self.has_resources = False
        self.on_tools = on_tools
        self.on_log = on_log
        self._client: Any = None
        self._stop: asyncio.Event | None = None
        self._runner: asyncio.Task | None = None
        self._opening: asyncio.Future | None = None
        self._refreshing: asyncio.Future | None = None
        self._closed = False
        self._auth: Any = None
        self._refresh_first = False
        self._stdio: StdioTransport | None = None

    @property
    def uses_oauth(self) -> bool:
        """HTTP without an Authorization header, with an agent dir to keep credentials in."""
        return self.agent_dir is not None and self.entry.uses_oauth

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def connected(self) -> bool:
        return self.state == "connected"

    # ------------------------------------------------------------ opening

    async def get_client(self) -> Any:
        """The open client, connecting first when there is none (one attempt at a time)."""
        if self._closed:
            raise McpCallError(f'MCP server "{self.name}" is shut down')
        if self.connected:
            return self._client
        if self._opening is None:
            self._opening = asyncio.ensure_future(self._open())
            self._opening.add_done_callback(self._opened)
        return await asyncio.shield(self._opening)

    def _opened(self, future: asyncio.Future) -> None:
        self._opening = None
        if not future.cancelled():
            future.exception()  # seen here; the callers got it

    async def _open(self) -> Any:
        self.state, self.error = "connecting", None
        delays = CONNECT_RETRY_DELAYS_S if self.entry.is_http else ()
        attempt, refreshed = 0, False
        while True:
            self._refresh_first = refreshed
            try:
                return await self._connect_once()
            except Exception as exc:  # noqa: BLE001 - said once, as the state's error
                if not self._closed and self._wants_sign_in(exc):
                    if not refreshed and not self._auth.insufficient_scope and self._auth.credentials.can_refresh():
                        refreshed = True  # the server rejected the token: refresh it once, as pi 1.6
                        continue
                    self.state, self.error = "needs-auth", None
                    raise McpCallError(f'MCP server "{self.name}" requires sign-in. Run /mcp to sign in.') from None
                if self._closed or attempt >= len(delays) or not _transient(exc):
                    self.state = "closed" if self._closed else "failed"
                    self.error = self.error or describe(exc)
                    raise McpCallError(f'MCP server "{self.name}" failed to connect: {self.error}') from None
                self.error = None
                await asyncio.sleep(delays[attempt])
                attempt += 1

    def _wants_sign_in(self, exc: BaseException) -> bool:
        if self._auth is None:
            return False
        from pi_plugins.mcp.oauth import needs_sign_in

        return self._auth.sign_in_required or needs_sign_in(exc)

    async def _connect_once(self) -> Any:
        ready: asyncio.Future = asyncio.get_running_loop().create_future()
        stop = self._stop = asyncio.Event()
        stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
        self._runner = asyncio.ensure_future(self._run(ready, stop, stderr))
        try:
            return await asyncio.shield(ready)
        except BaseException as exc:
            stop.set()
            await self._finish_runner()
            tail = _tail(stderr)
            if not isinstance(exc, asyncio.CancelledError):
                self.error = describe(exc) + (f"\n{tail}" if tail else "")
            raise
        finally:
            if not ready.done():
                ready.cancel()

    async def _finish_runner(self) -> None:
        task, self._runner = self._runner, None
        if task is None or task.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(task), 5)
        except BaseException:  # noqa: BLE001 - a hung server: cancel its task
            task.cancel()
            with contextlib.suppress(BaseException):
                await task

    async def _transport(self, stack: contextlib.AsyncExitStack, stderr: IO[str]) -> Any:
        from mcp.client.streamable_http import streamable_http_client

        config, name = self.entry.config, self.name
        if self.entry.is_http:
            import httpx2  # the SDK's HTTP client library

            headers = {k: resolve(v, f'MCP server "{name}" header "{k}"')
                       for k, v in (config.get("headers") or {}).items()}
            self._auth = None
            provider = (config.get("auth") or {}).get("provider")
            if provider:  # a provider's login (the Radius MCP server): its key as the bearer token
                from pi_plugins.signin.common import auth_storage

                store = auth_storage(self.agent_dir)
                key = await store.refreshed_key(provider) if store.needs_refresh(provider) else store.api_key(provider)
                if key:
                    headers["Authorization"] = f"Bearer {key}"
            if self.uses_oauth:
                from pi_plugins.mcp.oauth import make_auth

                assert self.agent_dir is not None
                self._auth = make_auth(self.entry, self.agent_dir, self.sign_in, expired=self._refresh_first)
            # the SDK's own timeouts: 30 s, and 300 s for a read (a server may hold a stream open)
            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300), auth=self._auth))
            return streamable_http_client(config["url"], http_client=http)
        env = {k: resolve(v, f'MCP server "{name}" env "{k}"') for k, v in (config.get("env") or {}).items()}
        self._stdio = StdioTransport(
            _expand_home(config["command"]), [_expand_home(a) for a in config.get("args", [])],
            env={**os.environ, **env}, cwd=str(Path(self.cwd) / _expand_home(config.get("cwd", "."))), errlog=stderr)
        if self._closed:
            self._stdio.end_now()
        return self._stdio.streams()

    async def _run(self, ready: asyncio.Future, stop: asyncio.Event, stderr: IO[str]) -> None:
        from pi_core import __version__

        try:
            await load_sdk()
            from mcp import Client, Implementation

            async with contextlib.AsyncExitStack() as stack:
                client = Client(await self._transport(stack, stderr), mode="legacy", cache=None,
                                read_timeout_seconds=None if self.sign_in is not None else self.entry.timeout, message_handler=self._on_message,
                                logging_callback=self._on_log, list_roots_callback=self._roots,
                                client_info=Implementation(name="pi", version=__version__))
                await stack.enter_async_context(client)
                caps = client.server_capabilities
                tools = await self._list_tools(client) if caps.tools is not None else []
                if stop.is_set():
                    raise McpCallError("shut down while connecting")
                self._client, self.tools = client, tools
                self.has_resources = caps.resources is not None
                self.instructions = (client.instructions or "").strip() or None
                self.state, self.error = "connected", None
                if not ready.done():
                    ready.set_result(client)
                if self.on_tools:
                    self.on_tools(self)
                await stop.wait()
        except BaseException as exc:  # noqa: BLE001 - handed to the opener, never raised into the agent
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else McpCallError(describe(exc)))
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            if self._client is not None and self._stop is stop:
                self._client = None

    @staticmethod
    async def _list_tools(client: Any) -> list[dict]:
        tools: list[dict] = []
        cursor = None
        for _ in range(MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools += [t for t in as_json(page).get("tools", []) if isinstance(t, dict) and t.get("name")]
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    # ------------------------------------------------------------ notifications

    async def _on_message(self, message: Any) -> None:
        """``tools/list_changed``: list again, in a task of its own (the SDK delivers
        notifications from its receive loop, which the listing's answer needs)."""
        if getattr(message, "method", None) == "notifications/tools/list_changed" and self._client is not None:
            self._refreshing = asyncio.ensure_future(self._refresh_tools(self._client))

    async def _refresh_tools(self, client: Any) -> None:
        try:
            tools = await self._list_tools(client)
        except Exception as exc:  # noqa: BLE001 - shown in the state
            self.error = f"Failed to refresh tools: {describe(exc)}"
            return
        if client is self._client:
            self.tools = tools
            if self.on_tools:
                self.on_tools(self)

    async def _roots(self, context: Any) -> Any:
        """The session's folder as the one root, as pi 1.6 offers it (servers such as
        server-everything add tools for clients that have roots)."""
        from mcp.types import ListRootsResult, Root

        folder = Path(os.path.abspath(self.cwd))
        return ListRootsResult(roots=[Root(uri=folder.as_uri(), name=folder.name)])  # type: ignore[arg-type]

    async def _on_log(self, params: Any) -> None:
        if self.on_log:
            self.on_log(self.name, as_json(params))

    # ------------------------------------------------------------ calls

    def _mark_dropped(self) -> None:
        self._client = None
        if self._stop is not None:
            self._stop.set()
        if self.state == "connected":
            self.state, self.error = "disconnected", "Connection closed"

    async def call_tool(self, tool: str, arguments: dict, progress: Callable[[str], None] | None = None) -> dict:
        """The tool's result (wire JSON); raises :class:`McpCallError` in one line."""
        client = await self.get_client()

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            if progress is not None:
                progress(message or f"Progress {value:g}" + ("" if total is None else f"/{total:g}"))

        try:
            result = await client.call_tool(tool, arguments, progress_callback=on_progress)
        except Exception as exc:  # noqa: BLE001 - one line for the model
            if self._wants_sign_in(exc):
                self._mark_dropped()
                self.state, self.error = "needs-auth", None
                raise McpCallError(f'MCP server "{self.name}" requires sign-in. Run /mcp to sign in.') from None
            if getattr(getattr(exc, "error", None), "code", getattr(exc, "code", None)) == CONNECTION_CLOSED:
                self._mark_dropped()
                raise McpCallError(f'MCP server "{self.name}": connection closed; it reconnects on the next call') \
                    from None
            raise McpCallError(f"MCP tool {self.name}/{tool} failed: {describe(exc)}") from None
        await self._refreshed()
        return {k: v for k, v in as_json(result).items() if k not in ("_meta", "resultType")}  # resultType: the SDK's own

    async def _refreshed(self) -> None:
        """Wait for a tool list the call changed, so the next request declares it."""
        refreshing = self._refreshing
        if refreshing is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(refreshing), self.entry.timeout)

    async def _read(self, run: Callable[[Any], Any]) -> Any:
        """A read-only request (``await run(client)``): connecting first when needed, and,
        being safe to repeat, tried once more after a transient HTTP error or a dropped
        connection (pi 1.6 retries reads, never tool calls)."""
        for attempt in (1, 2):
            client = await self.get_client()
            try:
                return await run(client)
            except Exception as exc:  # noqa: BLE001 - one line for the model
                dropped = getattr(getattr(exc, "error", None), "code", getattr(exc, "code", None)) == CONNECTION_CLOSED
                if dropped:
                    self._mark_dropped()
                if attempt == 1 and (dropped or (self.entry.is_http and _transient(exc))):
                    continue
                answered = getattr(getattr(exc, "error", None), "message", None)
                if isinstance(answered, str) and not dropped:  # the server's own error: its words, as pi 1.6
                    raise McpCallError(answered) from None
                raise McpCallError(f'MCP server "{self.name}": {describe(exc)}') from None
        raise AssertionError("unreachable")

    async def list_page(self, key: str, cursor: str | None) -> tuple[list[dict], str | None]:
        """One page of ``resources`` or ``resourceTemplates`` (wire JSON) and the next cursor."""
        method = "list_resources" if key == "resources" else "list_resource_templates"

        async def run(client: Any) -> tuple[list[dict], str | None]:
            page = as_json(await getattr(client, method)(cursor=cursor))
            return [i for i in page.get(key, []) if isinstance(i, dict)], page.get("nextCursor")

        return await self._read(run)

    async def list_all(self, key: str) -> list[dict]:
        """Every page of ``resources`` or ``resourceTemplates`` (up to MAX_PAGES)."""
        items: list[dict] = []
        cursor = None
        for _ in range(MAX_PAGES):
            page, cursor = await self.list_page(key, cursor)
            items += page
            if not cursor:
                break
        return items

    async def read_resource(self, uri: str) -> list[dict]:
        """The contents of one resource (wire JSON)."""

        async def run(client: Any) -> list[dict]:
            return [c for c in as_json(await client.read_resource(uri)).get("contents", []) if isinstance(c, dict)]

        return await self._read(run)

    async def close(self) -> None:
        """Stop the server (the SDK closes stdin, then ends the process); idempotent. A
        server still connecting is not waited for: its task is cancelled at once."""
        self._closed = True
        if self.state != "connected" and self._stdio is not None:
            self._stdio.end_now()  # still starting: nobody needs it, no grace (pi 1.6 exits at once)
        if self.state != "connected" and self._runner is not None:
            self._runner.cancel()
        self.state = "closed"
        if self._stop is not None:
            self._stop.set()
        self._client = None
        opening = self._opening
        if opening is not None and not opening.done():
            opening.cancel()
        await self._finish_runner()


def _tail(stderr: IO[str]) -> str:
    try:
        stderr.seek(0)
        text = stderr.read().strip()
        stderr.close()
    except (OSError, ValueError):
        return ""
    return text[-STDERR_TAIL_CHARS:]
