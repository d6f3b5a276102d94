"""One MCP server over stdio: start it, list its tools, call them, stop it.

The ``mcp`` SDK's stdio transport and session are async context managers built on anyio
task groups, which must be entered and left by the same task. So each connection runs
in a task of its own that opens them, signals that it is ready, and waits to be told to
stop; calls from the agent's tasks go through the open session meanwhile. Everything
that crosses into ``mcp`` is turned into plain JSON shapes here (camelCase keys, as on
the wire), so the rest of the plugin does not depend on the SDK's version.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tempfile
from typing import IO, Any

from pi_mcp.config import ServerConfig

log = logging.getLogger("pi.mcp")
MAX_PAGES = 100
CONNECTION_CLOSED = -32000  # the JSON-RPC error code the SDK gives pending requests


class ServerError(RuntimeError):
    """The server could not be started, or the connection to it broke."""


def first_error(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups, as anyio raises them."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe(exc: BaseException) -> str:
    exc = first_error(exc)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def as_json(model: Any) -> Any:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


class Connection:
    def __init__(self, config: ServerConfig):
        self.config = config
        self.tools: list[dict] = []
        self.error: str | None = None
        self._session: Any = None
        self._task: asyncio.Task | None = None
        self._stop: asyncio.Event | None = None
        self._stderr: IO[str] | None = None  # what the server writes to stderr, kept for errors
        self._closed_stderr: IO[str] | None = None
        self._starting = asyncio.Lock()

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def running(self) -> bool:
        return self._session is not None and self._task is not None and not self._task.done()

    async def ensure_running(self) -> None:
        """Start the server again if it was stopped (a session ended and a new one uses
        the tools); one start at a time."""
        async with self._starting:
            if not self.running:
                await self.start()

    async def start(self) -> None:
        """Start the server and list its tools; raises :class:`ServerError` saying why
        it failed (with the end of what the server wrote to stderr)."""
        import mcp.client.stdio  # noqa: F401 - seconds on first use; not part of the server's time

        self.error = None
        self._stop = asyncio.Event()
        self._stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
        ready = asyncio.get_running_loop().create_future()
        self._task = asyncio.ensure_future(self._run(ready, self._stop, self._stderr))
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.config.startup_timeout)
            return
        except TimeoutError:
            reason = f"did not start within {self.config.startup_timeout:g} s"
        except Exception as exc:
            reason = describe(exc)
        await self.stop(keep_stderr=True)  # the process ends, so its last words are in the file
        if ready.done() and not ready.cancelled():
            ready.exception()  # seen: a late failure is part of the reason already
        raise ServerError(self._explain(reason))

    async def _run(self, ready: asyncio.Future, stop: asyncio.Event, stderr) -> None:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=self.config.command, args=self.config.args,
                                       env=self.config.env or None, cwd=self.config.cwd)
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(stdio_client(params, errlog=stderr))
                session = await stack.enter_async_context(ClientSession(read, write))
                await session.initialize()
                self.tools = await self._list_tools(session)
                self._session = session
                ready.set_result(None)
                await stop.wait()
        except BaseException as exc:  # noqa: BLE001 - reported, never raised into the agent
            if not ready.done():
                ready.set_exception(ServerError(describe(exc)) if isinstance(exc, BaseExceptionGroup)
                                    else exc if isinstance(exc, Exception) else ServerError(describe(exc)))
            elif not stop.is_set():
                self.error = f"the connection broke: {describe(exc)}"
                log.warning("MCP server %s: %s", self.name, self.error)
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self._session = None

    @staticmethod
    async def _list_tools(session) -> list[dict]:
        tools, cursor = [], None
        for _ in range(MAX_PAGES):
            if cursor is None:
                page = await session.list_tools()
            else:
                try:
                    from mcp.types import PaginatedRequestParams

                    page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor))
                except (TypeError, ImportError):  # older SDKs take the cursor itself
                    page = await session.list_tools(cursor=cursor)
            data = as_json(page)
            tools += [t for t in data.get("tools", []) if isinstance(t, dict) and t.get("name")]
            cursor = data.get("nextCursor")
            if not cursor:
                break
        return tools

    async def call(self, tool: str, arguments: dict) -> dict:
        """The tool's result as JSON (``content``, ``isError``, ``structuredContent``);
        raises :class:`ServerError` when the server is gone or too slow."""
        session = self._session
        if session is None or not self.running:
            raise ServerError(self.error or "the server is not running")
        waiter = asyncio.ensure_future(session.call_tool(tool, arguments))
        done, _ = await asyncio.wait({waiter, self._task}, timeout=self.config.timeout,
                                     return_when=asyncio.FIRST_COMPLETED)
        if waiter in done:
            try:
                return as_json(waiter.result())
            except Exception as exc:
                if getattr(getattr(exc, "error", None), "code", None) == CONNECTION_CLOSED:
                    # The server went away (the session does not end by itself then).
                    self.error = f"the connection broke: {describe(exc)}"
                    log.warning("MCP server %s: %s", self.name, self.error)
                    await self.stop()
                raise ServerError(describe(exc)) from None
        waiter.cancel()
        with contextlib.suppress(BaseException):
            await waiter
        if self._task in done:
            raise ServerError(self.error or "the server stopped")
        raise ServerError(f"no answer within {self.config.timeout:g} s")

    async def stop(self, *, keep_stderr: bool = False) -> None:
        """Close the session and the server's stdin; the SDK ends the process (after a
        grace period, by signal). ``keep_stderr`` keeps what the server wrote, for
        :meth:`_explain`."""
        if self._stop is not None:
            self._stop.set()
        task = self._task
        if task is not None and not task.done():
            try:
                if self._session is None:  # still starting: nothing to wind down gently
                    raise TimeoutError
                await asyncio.wait_for(asyncio.shield(task), 10)
            except (TimeoutError, Exception):
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        self._session = None
        stderr, self._stderr = self._stderr, None
        if keep_stderr:
            self._closed_stderr = stderr
        elif stderr is not None:
            with contextlib.suppress(Exception):
                stderr.close()

    def _explain(self, reason: str) -> str:
        """``reason`` and the last lines the server wrote to stderr."""
        tail, stderr = "", self._closed_stderr
        self._closed_stderr = None
        if stderr is not None:
            with contextlib.suppress(Exception):
                stderr.seek(0)
                lines = [l for l in stderr.read().splitlines() if l.strip()]
                if lines:
                    tail = "; its stderr ends with: " + " | ".join(lines[-3:])
            with contextlib.suppress(Exception):
                stderr.close()
        return f"{reason}{tail}"
