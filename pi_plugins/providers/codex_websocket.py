"""The WebSocket transport to ChatGPT's Codex backend, as pi 0.73.1 speaks it when its
runtime has WebSockets (the setting ``transport``: ``auto``, pi's default, and
``websocket`` try it first; ``sse`` never does).

One ``response.create`` frame (the Responses body with ``"type"`` first) goes to
``wss://<base>/codex/responses`` with the sign-in's headers, ``OpenAI-Beta:
responses_websockets=2026-02-06`` and the session's id (a new one per request without a
session); the answer is the same Responses events, one JSON text frame each, until
``response.completed`` (``response.done``, ``response.incomplete``).

A session keeps its socket open between turns (five idle minutes, or until the event
loop ends) and, with ``auto`` (and ``websocket-cached``), sends a next turn as the
input items that are new since the last answer with ``previous_response_id``, when the
rest of the request is unchanged. A socket that cannot be opened, or that closes before
the answer starts, sends the request over server-sent events instead; a session whose
socket failed uses server-sent events from then on. An error the backend reports (an
``error`` event, a failed response, a frame that is not JSON) is the answer's error, as
over server-sent events. Without the ``websockets`` library every request goes as
server-sent events, as pi's does on a runtime without WebSockets.
"""

from __future__ import annotations

import asyncio
import json
import uuid
import weakref
from collections.abc import AsyncIterator
from typing import Any

#: pi's WebSocket beta, in place of ``responses=experimental``.
BETA = "responses_websockets=2026-02-06"
IDLE_SECONDS = 5 * 60
#: Sessions whose WebSocket failed: they use server-sent events from then on (pi's too).
fallback_sessions: set[str] = set()


class TransportFailure(Exception):
    """The socket could not be opened, or it broke off: a transport failure, after which
    a request that has not started answering goes over server-sent events."""


def websocket_url(url: str) -> str:
    """The Responses URL with the WebSocket scheme (``https`` → ``wss``, ``http`` → ``ws``)."""
    if url.startswith("https:"):
        return "wss:" + url[6:]
    if url.startswith("http:"):
        return "ws:" + url[5:]
    return url


def websocket_headers(sse_headers: dict[str, str], request_id: str) -> dict[str, str]:
    """The handshake's headers: the request's, without those of a POST body and its
    beta, with the WebSocket beta and ``request_id`` as the session and request id."""
    drop = {"accept", "content-type", "openai-beta", "session-id", "x-client-request-id"}
    headers = {k: v for k, v in sse_headers.items() if k.lower() not in drop}
    headers.update({"OpenAI-Beta": BETA, "x-client-request-id": request_id, "session-id": request_id})
    return headers


def new_request_id() -> str:
    return str(uuid.uuid4())


class _Entry:
    """A session's socket: busy while a request uses it, and what a next turn can build on."""

    __slots__ = ("socket", "busy", "continuation", "idle")

    def __init__(self, socket: Any):
        self.socket = socket
        self.busy = True
        self.continuation: tuple[dict, str, list] | None = None  # (full body, response id, output items)
        self.idle: asyncio.TimerHandle | None = None


class _Loop:
    """One event loop's sockets: the sessions' kept ones, and every one still open, each
    closed when the loop shuts down (``asyncio.run`` closes the async generators it knows)
    so that ``pi -p`` ends when its answer has."""

    def __init__(self) -> None:
        self.sessions: dict[str, _Entry] = {}
        self.open: weakref.WeakSet[Any] = weakref.WeakSet()
        self.closing: set[asyncio.Task] = set()
        self.keeper = self._close_at_shutdown()

    async def _close_at_shutdown(self):
        try:
            yield
            await asyncio.Event().wait()
        finally:
            for entry in self.sessions.values():
                if entry.idle is not None:
                    entry.idle.cancel()
            self.sessions.clear()
            for socket in list(self.open):
                try:
                    await socket.close(1000, "done")
                except Exception:  # pragma: no cover - the connection is gone already
                    pass


_loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Loop] = weakref.WeakKeyDictionary()


async def _this_loop() -> _Loop:
    loop = asyncio.get_running_loop()
    state = _loops.get(loop)
    if state is None:
        state = _loops[loop] = _Loop()
        await state.keeper.__anext__()
    return state


def is_open(socket: Any) -> bool:
    from websockets.protocol import State

    return socket.state is State.OPEN


async def close(socket: Any, code: int = 1000, reason: str = "done") -> None:
    """Send the close frame and go on, without waiting for the server's answer (pi's
    ``close`` does not wait either); the loop's shutdown waits for what is left."""
    state = _loops.get(asyncio.get_running_loop())
    task = asyncio.ensure_future(socket.close(code, reason))
    if state is not None:
        state.closing.add(task)
        task.add_done_callback(state.closing.discard)
    await asyncio.sleep(0)  # the close frame goes out now


#: pi 1.6's default ``websocketConnectTimeoutMs``.
DEFAULT_CONNECT_TIMEOUT_MS = 15_000


def connect_seconds(timeout_ms: int | None) -> float | None:
    """The handshake's time limit for ``websocketConnectTimeoutMs`` (0: none)."""
    if timeout_ms is None:
        timeout_ms = DEFAULT_CONNECT_TIMEOUT_MS
    return timeout_ms / 1000 if timeout_ms > 0 else None


async def connect(url: str, headers: dict[str, str], open_timeout: float | None = DEFAULT_CONNECT_TIMEOUT_MS / 1000) -> Any:
    try:
        from websockets.asyncio.client import connect as ws_connect
    except ImportError:
        raise TransportFailure("WebSocket transport is not available (pip install websockets)") from None
    state = await _this_loop()
    try:
        # no size cap on a frame (a long answer's response.completed holds all of it), no
        # User-Agent of the library's own (the request has pi's), no pings (pi's runtime
        # sends none)
        socket = await ws_connect(url, additional_headers=headers, user_agent_header=None, max_size=None,
                                  open_timeout=open_timeout, close_timeout=2, ping_interval=None)
    except (TimeoutError, OSError) as exc:
        raise TransportFailure(f"WebSocket error: {exc or type(exc).__name__}") from exc
    except Exception as exc:  # the handshake refused (websockets.InvalidStatus and kin)
        if type(exc).__module__.startswith("websockets"):
            raise TransportFailure(f"WebSocket error: {exc}") from exc
        raise
    state.open.add(socket)
    return socket


class Lease:
    """A socket for one request: the session's open one when it is free, else a new one
    (kept for the session afterwards only when it has none)."""

    def __init__(self, socket: Any, entry: _Entry | None, session_id: str | None, reused: bool):
        self.socket = socket
        self.entry = entry
        self.session_id = session_id
        self.reused = reused

    async def release(self, keep: bool) -> None:
        entry, socket = self.entry, self.socket
        state = _loops.get(asyncio.get_running_loop())
        if entry is None or not keep or not is_open(socket):
            if (entry is not None and state is not None and self.session_id is not None
                    and state.sessions.get(self.session_id) is entry):
                del state.sessions[self.session_id]
            await close(socket)
            return
        assert state is not None  # acquire made this loop's state with the entry
        entry.busy = False
        loop = asyncio.get_running_loop()
        entry.idle = loop.call_later(IDLE_SECONDS, self._expire, state)

    def _expire(self, state: _Loop) -> None:
        entry, session_id = self.entry, self.session_id
        assert entry is not None and session_id is not None  # only a cached lease expires
        if entry.busy:
            return
        if state.sessions.get(session_id) is entry:
            del state.sessions[session_id]
        asyncio.ensure_future(close(entry.socket, 1000, "idle_timeout"))


async def acquire(url: str, headers: dict[str, str], session_id: str | None,
                  open_timeout: float | None = DEFAULT_CONNECT_TIMEOUT_MS / 1000) -> Lease:
    if not session_id:
        return Lease(await connect(url, headers, open_timeout), None, None, False)
    sessions = (await _this_loop()).sessions
    cached = sessions.get(session_id)
    if cached is not None:
        if cached.idle is not None:
            cached.idle.cancel()
            cached.idle = None
        if not cached.busy and is_open(cached.socket):
            cached.busy = True
            return Lease(cached.socket, cached, session_id, True)
        if cached.busy:  # a second request of the session at once: a socket of its own
            return Lease(await connect(url, headers, open_timeout), None, None, False)
        del sessions[session_id]
        await close(cached.socket)
    socket = await connect(url, headers, open_timeout)
    entry = sessions[session_id] = _Entry(socket)
    return Lease(socket, entry, session_id, False)


async def close_session(session_id: str | None) -> None:
    """The session is left (pi closes its sockets when a session is disposed): its kept
    socket closes now instead of after five idle minutes."""
    state = _loops.get(asyncio.get_running_loop())
    entry = state.sessions.pop(session_id, None) if state is not None and session_id else None
    if entry is not None:
        if entry.idle is not None:
            entry.idle.cancel()
        await close(entry.socket)


def cached_body(entry: _Entry, body: dict) -> dict:
    """The next turn as a continuation of the last (``previous_response_id`` and the input
    items that are new), when everything but the input is as it was and the input starts
    with the last request's and its answer's items; else the whole body (and the
    continuation is forgotten)."""
    continuation = entry.continuation
    if continuation is None:
        return body
    last_body, response_id, items = continuation

    def rest(b: dict) -> dict:
        return {k: v for k, v in b.items() if k not in ("input", "previous_response_id")}

    baseline = [*(last_body.get("input") or []), *items]
    current = body.get("input") or []
    if rest(body) != rest(last_body) or len(current) < len(baseline) or current[:len(baseline)] != baseline \
            or not response_id:
        entry.continuation = None
        return body
    return {**body, "previous_response_id": response_id, "input": current[len(baseline):]}


async def texts(socket: Any) -> AsyncIterator[str]:
    """The socket's frames as text; a socket that closes is a :class:`TransportFailure`
    named by its close code and reason, as pi's message names them."""
    from websockets.exceptions import ConnectionClosed

    while True:
        try:
            data = await socket.recv()
        except ConnectionClosed as exc:
            frame = exc.rcvd
            code = frame.code if frame is not None else 1006  # no close frame: the connection dropped
            reason = (frame.reason if frame is not None else "") or ("message too big" if code == 1009 else "")
            raise TransportFailure(f"WebSocket closed {code} {reason}".strip()) from exc
        if isinstance(data, bytes):
            data = data.decode("utf-8", "replace")
        yield data


def frame_text(body: dict) -> str:
    return json.dumps({"type": "response.create", **body}, ensure_ascii=False, separators=(",", ":"))
