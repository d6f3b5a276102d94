"""``pi serve`` under a client that pushes on it: one that never reads, connections that
never finish their headers, hostile frames. Each test shows the server holding up."""

from __future__ import annotations

import json
import socket
import time

import pytest
from support.llm_server import Reply
from support.serve_process import ServeProcess
from websockets.client import ClientProtocol
from websockets.frames import Opcode
from websockets.http11 import Response
from websockets.uri import parse_uri


def _rss_mb(pid: int) -> float:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


class StalledClient:
    """A WebSocket on a raw socket with a small receive buffer, read only when asked:
    websockets' sans-I/O protocol does the framing, nothing reads in the background."""

    def __init__(self, url: str) -> None:
        uri = parse_uri(url)
        self.protocol = ClientProtocol(uri, max_size=None)
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.sock.connect((uri.host, uri.port))
        self.protocol.send_request(self.protocol.connect())
        self._flush()
        while not any(isinstance(e, Response) for e in self._read_some()):
            pass
        assert self.protocol.handshake_exc is None

    def _flush(self) -> None:
        self.sock.sendall(b"".join(self.protocol.data_to_send()))

    def _read_some(self) -> list:
        data = self.sock.recv(1 << 20)
        if data:
            self.protocol.receive_data(data)
        else:
            self.protocol.receive_eof()
        self._flush()  # a pong, or the close echoed
        return self.protocol.events_received()

    def send(self, value: dict) -> None:
        self.protocol.send_text(json.dumps(value).encode())
        self._flush()

    def read_to_close(self, timeout: float = 20) -> tuple[int | None, int]:
        """Reads everything on its way; the close code (None: none within ``timeout``)
        and how many text frames came."""
        self.sock.settimeout(timeout)
        texts, deadline = 0, time.monotonic() + timeout
        while self.protocol.close_rcvd is None and time.monotonic() < deadline:
            events = self._read_some()
            texts += sum(1 for e in events if getattr(e, "opcode", None) is Opcode.TEXT)
            if self.protocol.state.name == "CLOSED":
                break
        return (self.protocol.close_rcvd.code if self.protocol.close_rcvd else None), texts


@pytest.mark.process
def test_a_client_that_never_reads_is_closed_with_1013_and_the_servers_memory_stays_bounded(pi, server):
    server.push(Reply(text="Noted."))
    served = ServeProcess(pi)
    session = served.open(pi)
    url = f"ws://127.0.0.1:{served.port}/api/sessions/{session}/rpc?token={served.token}"
    builder = StalledClient(url)  # a 2 MB session: one long prompt
    builder.send({"id": "p", "type": "prompt", "message": "log line of forty characters, see below\n" * 52_000})
    while not any(getattr(e, "opcode", None) is Opcode.TEXT and b'"agent_end"' in e.data
                  for e in builder._read_some()):
        pass
    pid = served.process.pid
    before = _rss_mb(pid)
    stalled = StalledClient(url)
    for n in range(300):
        stalled.send({"id": f"m{n}", "type": "get_messages"})
    peak, deadline, last_change, last = before, time.monotonic() + 12, time.monotonic(), before
    while time.monotonic() < deadline and time.monotonic() - last_change < 2:
        now = _rss_mb(pid)
        peak = max(peak, now)
        if abs(now - last) > 2:
            last, last_change = now, time.monotonic()
        time.sleep(0.05)
    code, answers = stalled.read_to_close()
    assert code == 1013
    assert answers < 300  # the ones let go were never built up in memory
    assert peak - before < 120, f"{before:.0f} MB -> {peak:.0f} MB"
    print(f"server RSS with a stalled client: {before:.0f} MB -> peak {peak:.0f} MB, {answers} of 300 answers sent")
    assert served.http.get("/api/sessions").status_code == 200  # and it serves on
    assert served.stop()[0] == 0


def _half_open(netloc: str) -> socket.socket:
    """A connection that starts a request and never finishes its headers."""
    host, port = netloc.rsplit(":", 1)
    conn = socket.create_connection((host, int(port)), timeout=10)
    conn.sendall(b"GET /api/health HTTP/1.1\r\nHost: " + netloc.encode() + b"\r\nX-Slow: ")
    return conn


def _closed_by_server(conn: socket.socket, timeout: float) -> bool:
    conn.settimeout(timeout)
    try:
        return conn.recv(1024) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_200_half_open_connections_lock_no_real_client_out_and_are_closed(serve_with):
    from pi_plugins.serve.limits import Limits

    served = serve_with(limits=Limits(request_timeout=1.5, max_pending=32))
    started = time.monotonic()
    attackers = [_half_open(served.netloc) for _ in range(200)]
    try:
        session = served.open()  # a real client, from the same loopback address, served
        assert served.http.get("/api/sessions").json()["sessions"][0]["id"] == session
        client = served.socket(session)
        assert client.ok("get_state")["sessionId"] == session
        assert time.monotonic() - started < 5
        # every half-open one is closed: the oldest for newer ones, the rest when time is up
        closed = [_closed_by_server(conn, 5) for conn in attackers]
        assert all(closed), f"{closed.count(False)} of 200 still open"
        assert client.ok("get_state")["sessionId"] == session  # the attached client stays
    finally:
        for conn in attackers:
            conn.close()


def test_a_request_whose_body_never_arrives_is_closed(serve_with):
    from pi_plugins.serve.limits import Limits

    served = serve_with(limits=Limits(request_timeout=1.0))
    host, port = served.netloc.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(b"POST /api/sessions HTTP/1.1\r\nHost: " + served.netloc.encode() +
                     b"\r\nAuthorization: Bearer " + served.token.encode() +
                     b"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"cwd\":")
        assert _closed_by_server(conn, 5)
    assert served.http.get("/api/health").status_code == 200


def test_more_connections_than_the_cap_from_one_address_are_closed(serve_with):
    from pi_plugins.serve.limits import Limits

    served = serve_with(limits=Limits(max_connections=10))
    session = served.open()
    kept = [served.socket(session) for _ in range(9)]
    host, port = served.netloc.rsplit(":", 1)
    extra = socket.create_connection((host, int(port)), timeout=10)
    assert _closed_by_server(extra, 5)
    kept[0].close()
    time.sleep(0.3)
    assert served.socket(session).ok("get_state")["sessionId"] == session  # room again
