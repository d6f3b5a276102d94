"""A forward HTTP proxy on 127.0.0.1 for tests: it takes both kinds of proxied request,
an absolute URL (``POST http://host:port/path``, how httpcore sends a plain-HTTP request
through a proxy) and ``CONNECT host:port`` (a tunnel, how pi 1.6's undici sends every
request), relays the bytes both ways, and records each request's method and target."""

from __future__ import annotations

import socket
import socketserver
import threading
from urllib.parse import urlsplit


class _Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        client = self.request
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = client.recv(65536)
            if not chunk:
                return
            head += chunk
        header, _, rest = head.partition(b"\r\n\r\n")
        line, _, fields = header.partition(b"\r\n")
        method, target, version = line.decode("latin-1").split(" ", 2)
        self.server.seen.append((method, target))  # type: ignore[attr-defined]
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            upstream = socket.create_connection((host, int(port)))
            client.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            first = rest
        else:
            parts = urlsplit(target)
            upstream = socket.create_connection((parts.hostname, parts.port or 80))
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            first = f"{method} {path} {version}\r\n".encode("latin-1") + fields + b"\r\n\r\n" + rest
        with upstream:
            if first:
                upstream.sendall(first)
            _relay(client, upstream)


def _relay(a: socket.socket, b: socket.socket) -> None:
    def pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            try:
                dst.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    other = threading.Thread(target=pump, args=(b, a), daemon=True)
    other.start()
    pump(a, b)
    other.join(timeout=30)


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class HttpProxy:
    """``with HttpProxy() as proxy:`` ``proxy.url`` to use, ``proxy.seen`` what came."""

    def __init__(self) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.seen = []  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def seen(self) -> list[tuple[str, str]]:
        return self._server.seen  # type: ignore[attr-defined]

    def __enter__(self) -> "HttpProxy":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
