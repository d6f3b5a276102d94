"""HTTP/1.1 over plain TCP for ``http://`` servers (local model servers, the test server),
without httpx: h11 on asyncio streams.

Against a local server httpx is most of what a request costs the client: importing it
(52 modules, urllib.request, http.client and email among them) took 18 ms of every
``pi -p``, its transport (httpcore on anyio) 30 ms more for the first connection, and
each request and each piece of a large body paid their layers again. h11 (httpcore's own
HTTP/1.1 engine) does the protocol; this module keeps the connections and offers the
part of httpx's client the providers use (:class:`PlainHttpClient`: ``build_request``,
``send``, a response's status, headers and ``aiter_bytes``). Its errors carry the names
of httpx's own for the same failures, and a ``transport_kind`` the providers word them by.

TLS and proxies stay httpx's: ``https://`` URLs, and ``http://`` ones while the
environment names a proxy, get an httpx client (:mod:`pi_plugins.providers.http`, which
also follows redirects, for both).
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any, AsyncIterator
from urllib.parse import urlsplit

import h11

from pi_core import __version__

_READ = 1 << 16  # bytes asked of the socket at a time
_USER_AGENT = f"pi-harness/{__version__}"


class TransportError(Exception):
    """A request that failed on its way; ``transport_kind`` says how: ``connect``,
    ``timeout``, ``lost`` (the connection broke) or ``invalid`` (the URL)."""

    transport_kind = "connect"


class ConnectError(TransportError):
    pass


class LocalProtocolError(TransportError):
    pass


class UnsupportedProtocol(TransportError):
    transport_kind = "invalid"


class InvalidURL(TransportError):
    transport_kind = "invalid"


class _Timeout(TransportError):
    transport_kind = "timeout"


class ConnectTimeout(_Timeout):
    pass


class ReadTimeout(_Timeout):
    pass


class WriteTimeout(_Timeout):
    pass


class PoolTimeout(_Timeout):
    pass


class _Lost(TransportError):
    transport_kind = "lost"


class ReadError(_Lost):
    pass


class WriteError(_Lost):
    pass


class RemoteProtocolError(_Lost):
    pass


class Request:
    """One request as :meth:`PlainHttpClient.send` takes it."""

    __slots__ = ("method", "url", "key", "target", "headers", "content")

    def __init__(self, method: str, url: str, content: Any, headers: dict[str, str] | None):
        parts = urlsplit(url)
        if parts.scheme != "http":
            raise UnsupportedProtocol(f"{url}: only http:// URLs are sent this way")
        try:
            host, port = parts.hostname, parts.port or 80
        except ValueError as exc:
            raise InvalidURL(f"{url}: {exc}") from None
        if not host:
            raise InvalidURL(f"{url}: no host")
        self.method, self.url, self.key, self.content = method, url, (host, port), content
        self.target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        given = {name.lower(): value for name, value in (headers or {}).items()}
        given.setdefault("host", parts.netloc.rpartition("@")[2])
        given.setdefault("accept", "*/*")
        given.setdefault("user-agent", _USER_AGENT)
        if isinstance(content, (bytes, bytearray, memoryview)):
            given["content-length"] = str(len(content))
        elif content is None and method in ("POST", "PUT", "PATCH"):
            given["content-length"] = "0"
        elif content is not None and "content-length" not in given:
            given["transfer-encoding"] = "chunked"
        self.headers = list(given.items())


class PlainHttpClient:
    """Keeps one idle connection list per host and port; a connection goes back to it
    when its response was read to the end and both sides may go on. At most
    ``max_connections`` requests are under way at once; more wait for one to end.
    ``timeout`` bounds each wait for the server (and for a free slot); ``connect``
    the wait for a connection."""

    def __init__(self, max_connections: int = 100, timeout: float | None = None,
                 connect: float | None = None) -> None:
        self.max_connections = max_connections
        self.timeout, self.connect_timeout = timeout, connect
        self.is_closed = False
        self._slots = asyncio.Semaphore(max_connections)
        self._idle: dict[tuple[str, int], list[_Connection]] = {}

    def build_request(self, method: str, url: str, content: Any = None,
                      headers: dict[str, str] | None = None) -> Request:
        return Request(method, url, content, headers)

    async def send(self, request: Request, stream: bool = True) -> "Response":
        """The response, its body still to read (``aiter_bytes``) unless ``stream`` is
        false; it must be closed (``aclose``) unless read to the end."""
        if self.is_closed:
            raise TransportError("the client is closed")
        try:
            async with asyncio.timeout(self.timeout):
                await self._slots.acquire()
        except TimeoutError:
            raise PoolTimeout("no connection came free") from None
        connection = None
        try:
            connection = self._take_idle(request.key) or await _Connection.open(
                request.key, self.connect_timeout)
            await connection.send(request, self.timeout)
            event = await connection.response(self.timeout)
        except BaseException:
            if connection is not None:
                connection.close()
            self._slots.release()
            raise
        response = Response(event, connection, self)
        if not stream:
            response.content = b"".join([piece async for piece in response.aiter_bytes()])
        return response

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
        if reusable and not self.is_closed and connection.next_cycle():
            self._idle.setdefault(connection.key, []).append(connection)
        else:
            connection.close()
        self._slots.release()

    async def __aenter__(self) -> "PlainHttpClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        self.is_closed = True
        for idle in self._idle.values():
            for connection in idle:
                connection.close()
        self._idle.clear()


class Response:
    """A response whose body is read as it arrives; the connection is reused once it is
    read to the end, closed if the reader stops before. ``headers`` has lower-case
    names (a repeated header's values joined with commas, as httpx joins them)."""

    def __init__(self, event: h11.Response, connection: "_Connection",
                 client: PlainHttpClient) -> None:
        self.status_code = event.status_code
        self.reason_phrase = event.reason.decode("latin-1")
        headers: dict[str, str] = {}
        for name, value in event.headers:
            name, value = name.decode("latin-1"), value.decode("latin-1")
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        self.headers = headers
        self.content = b""
        self._connection: _Connection | None = connection
        self._client = client
        self._done = False

    @property
    def is_closed(self) -> bool:
        return self._connection is None

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body, decoded as its content-encoding says (gzip or deflate)."""
        decoder = _decoder(self.headers.get("content-encoding", ""))
        async for data in self._raw():
            data = decoder.decompress(data) if decoder is not None else data
            if data:
                yield data
        if decoder is not None:
            tail = decoder.flush()
            if tail:
                yield tail

    async def _raw(self) -> AsyncIterator[bytes]:
        connection = self._connection
        if connection is None:
            return
        try:
            while not self._done:
                event = await connection.next_event(self._client.timeout)
                if type(event) is h11.Data:
                    yield bytes(event.data)
                elif type(event) in (h11.EndOfMessage, h11.ConnectionClosed):
                    self._done = True
        except BaseException:
            self._done = True
            connection.close()
            raise
        await self.aclose()

    async def aclose(self) -> None:
        if self._connection is None:
            return
        connection, self._connection = self._connection, None
        self._client.release(connection, self._done)


def _decoder(encoding: str) -> Any:
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return None
    import zlib

    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(zlib.MAX_WBITS | 16)
    if encoding == "deflate":
        return zlib.decompressobj()
    raise RemoteProtocolError(f"the server sent a body encoded as {encoding!r}, "
                              "which was not asked for")


class _Connection:
    def __init__(self, key: tuple[str, int], reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self.key, self.reader, self.writer = key, reader, writer
        self.h11 = h11.Connection(h11.CLIENT)

    @classmethod
    async def open(cls, key: tuple[str, int], timeout: float | None) -> "_Connection":
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(*key, limit=_READ)
        except TimeoutError:
            raise ConnectTimeout("timed out connecting") from None
        except OSError as exc:
            raise ConnectError(str(exc) or type(exc).__name__) from None
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

    async def send(self, request: Request, timeout: float | None) -> None:
        h = self.h11
        try:
            self.writer.write(h.send(h11.Request(
                method=request.method, target=request.target, headers=request.headers)))
            content = request.content
            if isinstance(content, (bytes, bytearray, memoryview)):
                if content:
                    self.writer.writelines(h.send_with_data_passthrough(h11.Data(data=content)))
            elif content is not None:
                async for chunk in content:
                    # passthrough: the chunk goes to the socket as it is, not joined anew
                    self.writer.writelines(h.send_with_data_passthrough(h11.Data(data=chunk)))
                    await self._drain(timeout)
            self.writer.write(h.send(h11.EndOfMessage()))
            await self._drain(timeout)
        except h11.LocalProtocolError as exc:
            raise LocalProtocolError(str(exc)) from None

    async def _drain(self, timeout: float | None) -> None:
        try:
            async with asyncio.timeout(timeout):
                await self.writer.drain()
        except TimeoutError:
            raise WriteTimeout("timed out sending the request") from None
        except OSError as exc:
            raise WriteError(str(exc) or type(exc).__name__) from None

    async def next_event(self, timeout: float | None) -> Any:
        h = self.h11
        while True:
            try:
                event = h.next_event()
            except h11.RemoteProtocolError as exc:
                raise RemoteProtocolError(str(exc)) from None
            if event is not h11.NEED_DATA:
                return event
            try:
                async with asyncio.timeout(timeout):
                    data = await self.reader.read(_READ)
            except TimeoutError:
                raise ReadTimeout("timed out waiting for the server") from None
            except OSError as exc:
                raise ReadError(str(exc) or type(exc).__name__) from None
            if not data and h.their_state is h11.SEND_RESPONSE:
                raise RemoteProtocolError("Server disconnected without sending a response.")
            h.receive_data(data)

    async def response(self, timeout: float | None) -> h11.Response:
        while True:
            event = await self.next_event(timeout)
            if type(event) is h11.Response:
                return event
            # an informational (1xx) response: the real one follows
