"""HTTP/1.1 over plain TCP for ``http://`` servers (local model servers, the test server):
h11 on asyncio streams, as an httpx transport, so every provider keeps talking httpx.

httpx's own transport is httpcore on anyio. Against a local server that stack is most of
what a request costs the client: importing httpcore and anyio and making the first
connection took 30 ms of every ``pi -p`` (of 50 ms for the whole first request, against
7 ms for h11 on asyncio), and each request and each piece of a large body pays their
layers again (a batch's turns, a resumed session's 44 MB body). h11 (httpcore's own
HTTP/1.1 engine) still does the protocol; this module only keeps the connections.

Anything else (``https://``, a proxy from the environment) goes through httpx's own
transports: httpx mounts proxies itself, and an URL of another scheme reaching this
transport (a redirect) is handed to a default one.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any, AsyncIterator

import h11
import httpx

_READ = 1 << 16  # bytes asked of the socket at a time


class PlainHttpTransport(httpx.AsyncBaseTransport):
    """Keeps one idle connection list per host and port; a connection goes back to it
    when its response was read to the end and both sides may go on. At most
    ``max_connections`` requests are under way at once; more wait for one to end."""

    def __init__(self, max_connections: int = 100) -> None:
        self.max_connections = max_connections
        self._slots = asyncio.Semaphore(max_connections)
        self._idle: dict[tuple[str, int], list[_Connection]] = {}
        self._other: httpx.AsyncBaseTransport | None = None  # for any other scheme

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.scheme != "http":
            if self._other is None:
                self._other = httpx.AsyncHTTPTransport()
            return await self._other.handle_async_request(request)
        timeouts = request.extensions.get("timeout", {})
        key = (url.host, url.port or 80)
        try:
            async with asyncio.timeout(timeouts.get("pool")):
                await self._slots.acquire()
        except TimeoutError:
            raise httpx.PoolTimeout("no connection came free", request=request) from None
        connection = None
        try:
            connection = self._take_idle(key) or await _Connection.open(
                key, timeouts.get("connect"), request)
            await connection.send(request, timeouts.get("write"))
            event = await connection.response(timeouts.get("read"), request)
        except BaseException:
            if connection is not None:
                connection.close()
            self._slots.release()
            raise
        return httpx.Response(
            event.status_code, headers=event.headers,
            stream=_Body(connection, self, timeouts.get("read"), request),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": event.reason})

    def _take_idle(self, key: tuple[str, int]) -> "_Connection | None":
        idle = self._idle.get(key)
        while idle:
            connection = idle.pop()
            if connection.usable():
                return connection
            connection.close()  # the server closed it while it waited
        return None

    def release(self, connection: "_Connection", reusable: bool) -> None:
        """The end of a request's exchange: its connection idle again (when the response
        was read to the end and both sides may go on) or closed, and its slot free."""
        if reusable and connection.next_cycle():
            self._idle.setdefault(connection.key, []).append(connection)
        else:
            connection.close()
        self._slots.release()

    async def aclose(self) -> None:
        for idle in self._idle.values():
            for connection in idle:
                connection.close()
        self._idle.clear()
        if self._other is not None:
            await self._other.aclose()


class _Connection:
    def __init__(self, key: tuple[str, int], reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self.key, self.reader, self.writer = key, reader, writer
        self.h11 = h11.Connection(h11.CLIENT)

    @classmethod
    async def open(cls, key: tuple[str, int], timeout: float | None,
                   request: httpx.Request) -> "_Connection":
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(*key, limit=_READ)
        except TimeoutError:
            raise httpx.ConnectTimeout("timed out connecting", request=request) from None
        except OSError as exc:
            raise httpx.ConnectError(str(exc) or type(exc).__name__, request=request) from None
        sock = writer.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(key, reader, writer)

    def usable(self) -> bool:
        return (self.h11.our_state is h11.IDLE and not self.writer.is_closing()
                and not self.reader.at_eof())

    def next_cycle(self) -> bool:
        if self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE \
                and not self.writer.is_closing():
            self.h11.start_next_cycle()
            return True
        return False

    def close(self) -> None:
        if not self.writer.is_closing():
            self.writer.close()

    async def send(self, request: httpx.Request, timeout: float | None) -> None:
        h = self.h11
        try:
            self.writer.write(h.send(h11.Request(
                method=request.method, target=request.url.raw_path,
                headers=request.headers.raw)))
            async for chunk in request.stream:
                # passthrough: the chunk goes to the socket as it is, not joined anew
                self.writer.writelines(h.send_with_data_passthrough(h11.Data(data=chunk)))
                await self._drain(timeout, request)
            self.writer.write(h.send(h11.EndOfMessage()))
            await self._drain(timeout, request)
        except h11.LocalProtocolError as exc:
            raise httpx.LocalProtocolError(str(exc), request=request) from None

    async def _drain(self, timeout: float | None, request: httpx.Request) -> None:
        try:
            async with asyncio.timeout(timeout):
                await self.writer.drain()
        except TimeoutError:
            raise httpx.WriteTimeout("timed out sending the request", request=request) from None
        except OSError as exc:
            raise httpx.WriteError(str(exc) or type(exc).__name__, request=request) from None

    async def next_event(self, timeout: float | None, request: httpx.Request) -> Any:
        h = self.h11
        while True:
            try:
                event = h.next_event()
            except h11.RemoteProtocolError as exc:
                raise httpx.RemoteProtocolError(str(exc), request=request) from None
            if event is not h11.NEED_DATA:
                return event
            try:
                async with asyncio.timeout(timeout):
                    data = await self.reader.read(_READ)
            except TimeoutError:
                raise httpx.ReadTimeout("timed out waiting for the server", request=request) \
                    from None
            except OSError as exc:
                raise httpx.ReadError(str(exc) or type(exc).__name__, request=request) from None
            if not data and h.their_state is h11.SEND_RESPONSE:
                raise httpx.RemoteProtocolError(
                    "Server disconnected without sending a response.", request=request)
            h.receive_data(data)

    async def response(self, timeout: float | None, request: httpx.Request) -> h11.Response:
        while True:
            event = await self.next_event(timeout, request)
            if isinstance(event, h11.Response):
                return event
            # an informational (1xx) response: the real one follows


class _Body(httpx.AsyncByteStream):
    """The response body as h11 reads it; the connection is reused once it is read to
    the end, closed if the reader stops before."""

    def __init__(self, connection: _Connection, transport: PlainHttpTransport,
                 timeout: float | None, request: httpx.Request) -> None:
        self.connection, self.transport = connection, transport
        self.timeout, self.request = timeout, request
        self.done = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        connection = self.connection
        try:
            while not self.done:
                event = await connection.next_event(self.timeout, self.request)
                if isinstance(event, h11.Data):
                    yield bytes(event.data)
                elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                    self.done = True
        except BaseException:
            self.done = True
            connection.close()
            raise

    async def aclose(self) -> None:
        if self.connection is None:
            return
        connection, self.connection = self.connection, None
        self.transport.release(connection, self.done)
