"""``pi connect``: stdin and stdout bridged to a served session's WebSocket, so any
program that speaks to ``pi --mode rpc`` (pi's RpcClient, pi-acp, a script) drives the
served session unchanged: each stdin line is one text frame, each frame one stdout line.
"""

from __future__ import annotations

import asyncio
import sys
from urllib.parse import parse_qs, quote, urlsplit

#: After stdin ends, how long frames still arriving are written out before closing.
EOF_GRACE = 0.5


class ConnectError(Exception):
    """The server cannot be reached or refused us; the message says which."""


def socket_url(url: str, session_id: str, token: str | None = None, since: int | None = None) -> str:
    """The WebSocket URL of ``session_id`` on the server at ``url`` (``http://HOST:PORT``);
    the token from ``token``, the URL's ``#token=``, ``PI_SERVE_TOKEN``, or the file
    ``pi serve`` keeps it in (:mod:`pi_plugins.serve.token`)."""
    from pi_plugins.serve.token import ENV, client_token, token_file

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https", "ws", "wss") or not parts.netloc:
        raise ConnectError(f"{url!r} is not the server's address (http://HOST:PORT)")
    given = parse_qs(parts.fragment).get("token")
    token = token or (given[0] if given else None) or client_token()
    if not token:
        raise ConnectError(f"no token: {ENV} is not set and {token_file()} holds none "
                           "(pi serve writes it; a served token comes from the same user's agent dir)")
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
    query = f"token={quote(token, safe='')}" + (f"&since={since}" if since is not None else "")
    return f"{scheme}://{parts.netloc}/api/sessions/{quote(session_id, safe='')}/rpc?{query}"


async def bridge(target: str, stdin=None, stdout=None) -> int:
    """Copy lines both ways until stdin ends (0) or the server closes (0; 1 if it
    refused the connection)."""
    import websockets
    from websockets.exceptions import ConnectionClosed, InvalidStatus

    from pi_plugins.rpc.protocol import LineReader

    stdin = getattr(stdin or sys.stdin, "buffer", stdin or sys.stdin)
    stdout = getattr(stdout or sys.stdout, "buffer", stdout or sys.stdout)
    try:
        connection = await websockets.connect(target, max_size=None, ping_interval=None)
    except InvalidStatus as exc:
        status = exc.response.status_code
        body = exc.response.body.decode("utf-8", "replace").strip() if exc.response.body else ""
        raise ConnectError(f"the server refused the connection ({status}{': ' + body if body else ''})") from None
    except OSError as exc:
        raise ConnectError(f"cannot reach the server: {exc.strerror or exc}") from None

    async def upstream() -> None:
        reader = LineReader(stdin)
        while (raw := await reader.next()) is not None:
            line = raw.rstrip(b"\n").rstrip(b"\r")
            if line.strip():
                await connection.send(line.decode("utf-8", "replace"))

    async def downstream() -> None:
        try:
            async for frame in connection:
                data = frame.encode("utf-8") if isinstance(frame, str) else frame
                stdout.write(data + b"\n")
                stdout.flush()
        except (ConnectionClosed, OSError):  # the server went away, or stdout did
            pass

    up, down = asyncio.create_task(upstream()), asyncio.create_task(downstream())
    try:
        done, _ = await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
        if up in done:  # stdin ended: the responses still on their way may arrive
            await asyncio.wait({down}, timeout=EOF_GRACE)
    finally:
        up.cancel()
        await connection.close()
        down.cancel()
        await asyncio.gather(up, down, return_exceptions=True)
    return 0
