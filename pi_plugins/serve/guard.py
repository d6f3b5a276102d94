"""What keeps ``pi serve`` its user's alone (the bash tool runs as that user), as ASGI
middleware in front of every route:

- a ``Host`` that is neither a loopback name nor the ``--host`` value: 403 (DNS rebinding);
- a WebSocket handshake whose ``Origin`` is not the server's own: 403, before any
  upgrade (no ``Origin``: a script, not a browser, which is fine);
- ``/api/*`` except ``/api/health`` without the token (``Authorization: Bearer``, or
  ``?token=`` on a WebSocket, which browsers cannot give headers): 401. The token is
  compared in constant time.

No CORS headers are ever added: another site's page cannot read an answer.
"""

from __future__ import annotations

import hmac
from urllib.parse import parse_qs

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
PUBLIC_PATHS = frozenset({"/api/health"})


def host_name(host: str) -> str:
    """``example:8765`` → ``example``; ``[::1]:8765`` → ``::1``."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def token_matches(given: str | None, token: str) -> bool:
    """Constant time, so the answer's timing says nothing about how much was right."""
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


class Guard:
    def __init__(self, app, *, token: str, host: str) -> None:
        self.app = app
        self.token = token
        self.hosts = LOOPBACK_NAMES | {host_name(host)}

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        if host_name(host) not in self.hosts:
            return await _refuse(scope, receive, send, 403, "Forbidden: unknown Host header")
        if scope["type"] == "websocket":
            origin = headers.get("origin")
            if origin is not None and origin.lower() not in (f"http://{host}".lower(), f"https://{host}".lower()):
                return await _refuse(scope, receive, send, 403, "Forbidden: cross-origin WebSocket")
        path = scope["path"]
        if path.startswith("/api/") and path not in PUBLIC_PATHS:
            if not token_matches(_given_token(scope, headers), self.token):
                return await _refuse(scope, receive, send, 401, "Unauthorized: a valid token is needed")
        return await self.app(scope, receive, send)


def _given_token(scope, headers: dict) -> str | None:
    auth = headers.get("authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip()
    if scope["type"] == "websocket":
        values = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token")
        return values[0] if values else None
    return None


async def _refuse(scope, receive, send, status: int, text: str) -> None:
    body = text.encode()
    if scope["type"] == "websocket":
        await receive()  # websocket.connect: the handshake, answered below
    head = {"status": status, "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                          (b"content-length", str(len(body)).encode())]}
    if scope["type"] == "http":
        await send({"type": "http.response.start", **head})
        await send({"type": "http.response.body", "body": body})
    elif "websocket.http.response" in scope.get("extensions", {}):
        # refused with this status before the upgrade (the ASGI denial-response extension)
        await send({"type": "websocket.http.response.start", **head})
        await send({"type": "websocket.http.response.body", "body": body})
    else:  # a server without the extension answers a close before accept with 403
        await send({"type": "websocket.close", "code": 1008})
