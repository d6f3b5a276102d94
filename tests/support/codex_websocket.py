"""The scripted LLM server's WebSocket side: ChatGPT's Codex backend as pi 0.73.1 speaks
to it when a runtime has WebSockets (``wss://chatgpt.com/backend-api/codex/responses``).

The handshake is answered and the frames are read and written with the ``websockets``
library's sans-I/O protocol, on the HTTP handler's own socket. Each ``response.create``
frame is recorded as a :class:`~support.llm_server.Request` (method ``WEBSOCKET``, the
frame as its body, the handshake's headers) and answered with the next reply's Responses
events, one JSON text frame each; the connection then waits for the next frame, as the
backend's does (pi sends a session's next turn on the same socket).

A reply's faults, over a socket: ``disconnect_after`` drops the TCP connection after that
many events (without a close frame), ``truncate_after`` closes the WebSocket cleanly
(code 1000) after that many, ``status >= 300`` becomes an ``error`` event with the
reply's ``error`` and ``error_type``, ``raw`` is sent as one text frame (not JSON: the
protocol error), ``hold`` and ``delay`` as over HTTP.
"""

from __future__ import annotations

import json
import socket
import time
from typing import Any
from urllib.parse import parse_qs, urlsplit


def _events(pieces: list[str]) -> list[str]:
    """The JSON of each server-sent event the server would have written."""
    out = []
    for piece in pieces:
        data = [line[6:] for line in piece.split("\n") if line.startswith("data: ")]
        if data:
            out.append("\n".join(data))
    return out


def serve_websocket(handler: Any) -> None:
    from websockets.frames import Opcode
    from websockets.server import ServerProtocol

    from support.llm_server import CODEX, Reply, Request

    owner = handler.owner
    headers = {k.lower(): v for k, v in handler.headers.items()}
    protocol = ServerProtocol()
    # the handshake as it arrived (the handler has read it): the protocol parses it itself
    protocol.receive_data(handler.raw_requestline + b"".join(
        f"{name}: {value}\r\n".encode("latin-1") for name, value in handler.headers.items()) + b"\r\n")
    [handshake] = protocol.events_received()
    response = protocol.accept(handshake)
    protocol.send_response(response)
    conn = handler.connection

    def flush() -> None:
        for data in protocol.data_to_send():
            if data:
                conn.sendall(data)

    flush()
    handler.close_connection = True
    if response.status_code != 101:
        return
    with owner._changed:
        owner._counter += 1
        number = owner._counter
        owner.handshakes.append((number, headers))
        owner._changed.notify_all()
    parts = urlsplit(handler.path)
    try:
        while True:
            data = handler.rfile.read1(65536)
            if data:
                protocol.receive_data(data)
            else:
                protocol.receive_eof()
            frames = protocol.events_received()
            flush()
            for frame in frames:
                if frame.opcode != Opcode.TEXT:
                    continue
                text = frame.data.decode("utf-8")
                try:
                    body = json.loads(text)
                except ValueError:
                    body = None
                request = Request("WEBSOCKET", parts.path, parse_qs(parts.query), headers, body,
                                  frame.data, CODEX, time.monotonic(), connection=number)
                with owner._changed:
                    owner.requests.append(request)
                    owner._changed.notify_all()
                reply = owner._next(request) or Reply(status=500, error="llm_server: no scripted reply left")
                if not _answer(protocol, conn, flush, reply, request, number, owner):
                    return
            if not data or protocol.close_code is not None or protocol.close_expected():
                return  # the client closed: the handler closes the TCP connection, as a server does
    except OSError:
        pass
    finally:
        with owner._changed:
            owner.websocket_closes.append(number)
            owner._changed.notify_all()


def _answer(protocol: Any, conn: socket.socket, flush: Any, reply: Any, request: Any, number: int,
            owner: Any) -> bool:
    """Send ``reply``'s events; False when the connection is gone after it."""
    from support.llm_server import _responses

    if reply.raw is not None:
        events = [reply.raw]
    elif reply.status >= 300:
        events = [json.dumps({"type": "error", "code": reply.error_type or "server_error",
                              "message": reply.error or f"status {reply.status}"})]
    else:
        events = _events(_responses(reply, (request.body or {}).get("model") or "test-model", number))
    cut = reply.disconnect_after if reply.disconnect_after is not None else reply.truncate_after
    if cut is not None:
        events = events[:cut]
    try:
        for written, event in enumerate(events):
            if reply.hold is not None and written == reply.hold_after:
                reply.hold.wait(30)
            if reply.delay:
                time.sleep(reply.delay)
            protocol.send_text(event.encode("utf-8"))
            flush()
        if reply.disconnect_after is not None:
            conn.shutdown(socket.SHUT_RDWR)
            return False
        if reply.truncate_after is not None:
            protocol.send_close(1000, "truncated")
            flush()
            return False
    except OSError:
        with owner._changed:
            owner.disconnects.append((number, 0.0))
            owner._changed.notify_all()
        return False
    with owner._changed:
        owner.websocket_answers.append(number)
        owner._changed.notify_all()
    return True
