"""The HTTP client every provider request goes through: httpcore's connection pool (the
transport under httpx), spoken to directly.

httpx's package imports its own command line with it (click, pygments and rich's
progress bars), about a fifth of what starting ``pi -p`` imported; a streaming POST needs
none of it. What httpx's ``AsyncClient`` did on top of httpcore for us is here, as it
did it: its default headers, a ``Content-Length`` for a body, credentials in the URL as
basic auth, the proxies the environment names (``HTTP_PROXY``, ``HTTPS_PROXY``,
``ALL_PROXY``, ``NO_PROXY``), ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` or certifi's bundle
for TLS, gzip and deflate answers decoded, and a response's headers read without regard
to case. Errors are httpcore's own classes (:func:`pi_plugins.providers.http.transport_kind`
tells them apart); redirects are followed by the providers (keys stay at their origin).
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import httpcore

from pi_core import __version__

#: Seconds: to connect, and for every other wait (a read; reasoning models can be quiet
#: for minutes), as ``httpx.Timeout(600, connect=30)``.
CONNECT_TIMEOUT = 30.0
READ_TIMEOUT = 600.0
#: How long an idle connection is kept for the next request (httpx's default).
KEEPALIVE_EXPIRY = 5.0
_DEFAULT_HEADERS = {"accept": "*/*", "accept-encoding": "gzip, deflate",
                    "connection": "keep-alive", "user-agent": f"pi-harness/{__version__}"}
_DEFAULT_PORTS = {"http": 80, "https": 443}


def ssl_context() -> Any:
    """The TLS context for ``https://`` servers: the CA bundle ``SSL_CERT_FILE`` or the
    folder ``SSL_CERT_DIR`` names, else certifi's (as httpx's ``trust_env``). Loading a
    bundle takes ~30 ms: made once per pool and shared by its shards."""
    import ssl

    if os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
    if os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=os.environ["SSL_CERT_DIR"])
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


class Headers(Mapping[str, str]):
    """A response's headers: names in lower case, a repeated header's values joined with
    ", " (as httpx's ``Headers`` reads them, so ``dict(headers)`` is what it was)."""

    def __init__(self, raw: list[tuple[bytes, bytes]]) -> None:
        encoding = _encoding(raw)
        self._values: dict[str, str] = {}
        for name, value in raw:
            key, text = name.decode(encoding).lower(), value.decode(encoding)
            self._values[key] = f"{self._values[key]}, {text}" if key in self._values else text

    def __getitem__(self, name: str) -> str:
        return self._values[name.lower()]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Headers({self._values!r})"


def _encoding(raw: list[tuple[bytes, bytes]]) -> str:
    """ASCII, else UTF-8 when every header decodes as it, else Latin-1 (httpx's order)."""
    for encoding in ("ascii", "utf-8"):
        try:
            for name, value in raw:
                name.decode(encoding)
                value.decode(encoding)
        except UnicodeDecodeError:
            continue
        return encoding
    return "iso-8859-1"


class DecodingError(Exception):
    """An answer's ``Content-Encoding`` did not decode."""


class _Decoder:
    """gzip and deflate, undone as the bytes arrive (the encodings we ask for)."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self.first = True
        gzip = encoding == "gzip"
        self.inflate = zlib.decompressobj(zlib.MAX_WBITS | 16 if gzip else zlib.MAX_WBITS)

    def feed(self, data: bytes) -> bytes:
        try:
            out = self.inflate.decompress(data)
        except zlib.error as exc:
            if self.encoding == "deflate" and self.first:  # a raw deflate stream, no zlib header
                self.inflate = zlib.decompressobj(-zlib.MAX_WBITS)
                self.first = False
                return self.feed(data)
            raise DecodingError(f"the answer's {self.encoding} encoding did not decode: {exc}") from None
        self.first = False
        return out

    def flush(self) -> bytes:
        try:
            return self.inflate.flush()
        except zlib.error as exc:
            raise DecodingError(f"the answer's {self.encoding} encoding did not decode: {exc}") from None


class Response:
    """An answer whose body is read as it arrives (:meth:`aiter_bytes`)."""

    def __init__(self, response: httpcore.Response) -> None:
        self._response = response
        self.status_code = response.status
        self.headers = Headers(response.headers)
        reason = response.extensions.get("reason_phrase", b"")
        self.reason_phrase = reason.decode("ascii", "ignore") if isinstance(reason, bytes) else ""
        self.is_closed = False

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body, decoded (gzip, deflate), in the pieces it came in."""
        decoders = [_Decoder(e) for e in reversed(_encodings(self.headers.get("content-encoding")))]
        async for chunk in self._response.aiter_stream():
            if self.is_closed:  # closed while the reader waited (an abort)
                raise httpcore.ReadError("the response was closed")
            for decoder in decoders:
                chunk = decoder.feed(chunk)
            if chunk:
                yield chunk
        tail = b""
        for decoder in decoders:
            tail = decoder.feed(tail) + decoder.flush() if tail else decoder.flush()
        if tail:
            yield tail

    async def aclose(self) -> None:
        """Close the answer: its connection goes back to the pool if it was read to the
        end, and is closed otherwise."""
        if not self.is_closed:
            self.is_closed = True
            await self._response.aclose()


def _encodings(value: str | None) -> list[str]:
    names = [v.strip().lower() for v in (value or "").split(",")]
    return [n for n in names if n in ("gzip", "deflate")]


class Client:
    """Pooled connections, at most ``connections`` at once to any one server: a pool for
    direct connections, and one for each proxy the environment names (made when first
    used). ``ssl_context`` is None for a client of plain ``http://`` servers."""

    def __init__(self, connections: int, ssl_context: Any = None) -> None:
        self.connections = connections
        self.ssl_context = ssl_context
        self.proxies = environment_proxies()
        self._pools: dict[str | None, httpcore.AsyncConnectionPool] = {}
        self.is_closed = False

    def _pool(self, proxy: str | None) -> httpcore.AsyncConnectionPool:
        pool = self._pools.get(proxy)
        if pool is None:
            via = None
            if proxy is not None:
                parts = urlsplit(proxy)
                auth = ((unquote(parts.username or ""), unquote(parts.password or ""))
                        if parts.username or parts.password else None)
                via = httpcore.Proxy(_without_userinfo(proxy), auth=auth)
            pool = self._pools[proxy] = httpcore.AsyncConnectionPool(
                ssl_context=self.ssl_context, proxy=via, max_connections=self.connections,
                max_keepalive_connections=self.connections, keepalive_expiry=KEEPALIVE_EXPIRY)
        return pool

    async def send(self, method: str, url: str, *, headers: Mapping[str, str],
                   content: bytes | AsyncIterator[Any] | None = None,
                   read_timeout: float | None = READ_TIMEOUT) -> Response:
        """Send a request and return its answer once the headers are in (the body is
        read from :meth:`Response.aiter_bytes`). ``read_timeout``: seconds of silence,
        waiting for the headers or the body, before it fails (None: no limit)."""
        if not url.isascii() or " " in url:  # httpx percent-encodes what a URL cannot hold
            url = quote(url, safe=":/?#[]@!$&'()*+,;=%~")
        parts = urlsplit(url)
        sent = {**_DEFAULT_HEADERS, **{k.lower(): v for k, v in headers.items()}}
        if parts.username or parts.password:
            if "authorization" not in sent:
                from base64 import b64encode

                pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
                sent["authorization"] = "Basic " + b64encode(pair.encode()).decode()
            url = _without_userinfo(url)
        if isinstance(content, bytes) and "content-length" not in sent:
            sent["content-length"] = str(len(content))
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        if parts.port and parts.port != _DEFAULT_PORTS.get(parts.scheme):
            host = f"{host}:{parts.port}"
        request = httpcore.Request(
            method, url, headers=[("host", host), *sent.items()], content=content,
            extensions={"timeout": {"connect": CONNECT_TIMEOUT, "read": read_timeout,
                                    "write": READ_TIMEOUT, "pool": READ_TIMEOUT}})
        pool = self._pool(proxy_for(parts.scheme, parts.hostname or "", parts.port, self.proxies))
        return Response(await pool.handle_async_request(request))

    async def aclose(self) -> None:
        self.is_closed = True
        for pool in self._pools.values():
            await pool.aclose()


def _without_userinfo(url: str) -> str:
    scheme, rest = url.split("://", 1)
    netloc, sep, tail = rest.partition("/")
    return f"{scheme}://{netloc.rpartition('@')[2]}{sep}{tail}"


def apply_http_proxy_setting(value: Any) -> None:
    """pi 1.6's ``httpProxy`` (agent-directory settings only): the proxy for every
    request, given as ``HTTP_PROXY`` and ``HTTPS_PROXY`` where the environment sets
    neither (a variable already set wins, as in pi; commands started later inherit them,
    as pi's do). Called by the command line once the settings are read."""
    proxy = value.strip() if isinstance(value, str) else ""
    if proxy:
        os.environ.setdefault("HTTP_PROXY", proxy)
        os.environ.setdefault("HTTPS_PROXY", proxy)


_PROXY_VARIABLE = re.compile(r"(?i)^(http|https|all|no)_proxy$")


def environment_proxies() -> dict[str, Any]:
    """The proxies the environment names, as httpx's ``trust_env`` reads them:
    ``{"http": url, "https": url, "all": url, "no": [entries of NO_PROXY]}``, each only
    when set; empty when ``NO_PROXY`` is ``*``. A lower-case variable wins over an
    upper-case one (as urllib's ``getproxies``), and ``HTTP_PROXY`` is ignored in a CGI
    script (where a request's ``Proxy:`` header would set it)."""
    found: dict[str, Any] = {}
    for name, value in sorted(os.environ.items(), key=lambda item: item[0].islower()):
        match = _PROXY_VARIABLE.match(name)
        if match and value:
            found[match[1].lower()] = value
    if "REQUEST_METHOD" in os.environ:
        found.pop("http", None)
    no = [host.strip().lower() for host in found.pop("no", "").split(",") if host.strip()]
    if "*" in no:
        return {}
    for scheme in ("http", "https", "all"):
        if scheme in found and "://" not in found[scheme]:
            found[scheme] = f"http://{found[scheme]}"
    if no:
        found["no"] = no
    return found


def proxy_for(scheme: str, host: str, port: int | None, proxies: dict[str, Any]) -> str | None:
    """The proxy a request goes through, or None to connect directly. A ``NO_PROXY``
    entry is a host (``localhost``, an address: that host only), a domain
    (``example.com``: it and its subdomains; ``.example.com``: its subdomains only),
    either with a ``:port``, or a ``scheme://host`` (as curl and httpx read them)."""
    proxy = proxies.get(scheme) or proxies.get("all")
    if proxy is None:
        return None
    host = host.lower()
    for entry in proxies.get("no", ()):
        if "://" in entry:
            entry_scheme, entry = entry.split("://", 1)
            if entry_scheme not in ("all", scheme):
                continue
        name, _, entry_port = entry.rpartition(":") if _has_port(entry) else (entry, "", "")
        if entry_port and port != int(entry_port) and not (
                port is None and _DEFAULT_PORTS.get(scheme) == int(entry_port)):
            continue
        name = name.strip("[]").split("/")[0]
        if name == host or (name.startswith(".") and host.endswith(name)) or \
                (not name.startswith(".") and host.endswith("." + name)):
            return None
    return proxy


def _has_port(entry: str) -> bool:
    head, sep, tail = entry.rpartition(":")
    return bool(sep) and tail.isdigit() and (not head.count(":") or head.endswith("]"))
