"""The security rules of ``pi serve``, each shown by what a refused request gets (a
test here fails when its rule is taken out)."""

from __future__ import annotations

import os
import shutil
import socket

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from support.sessions import fixture


def _handshake_status(url: str, **options) -> int:
    """The HTTP status a WebSocket handshake gets (101 when it is upgraded)."""
    try:
        with connect(url, open_timeout=10, **options):
            return 101
    except InvalidStatus as exc:
        return exc.response.status_code


def _raw_handshake_status(netloc: str, path: str, host: str) -> int:
    """A WebSocket handshake written by hand, with its own Host header."""
    address, port = netloc.rsplit(":", 1)
    with socket.create_connection((address, int(port)), timeout=10) as conn:
        conn.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
                      "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                      "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        return int(conn.recv(4096).split(b" ", 2)[1])


def test_every_api_path_but_health_needs_the_token(served):
    bare = httpx.Client(base_url=served.base, timeout=10)
    session = served.open()
    for method, path in (("GET", "/api/sessions"), ("POST", "/api/sessions"),
                         ("DELETE", f"/api/sessions/{session}"), ("GET", f"/api/sessions/{session}/export")):
        assert bare.request(method, path).status_code == 401, path
        wrong = bare.request(method, path, headers={"Authorization": "Bearer wrong-token"})
        assert wrong.status_code == 401, path
    assert bare.get("/api/health").status_code == 200
    assert session in served.serving.sessions.live  # nothing refused was done


def test_a_websocket_with_a_bad_token_is_refused_with_401_before_the_upgrade(served):
    session = served.open()
    assert _handshake_status(served.socket_url(session, token="wrong-token")) == 401
    assert _handshake_status(served.socket_url(session).replace(f"token={served.token}", "")) == 401
    assert _handshake_status(served.socket_url(session)) == 101


def test_the_token_is_compared_in_constant_time(served, monkeypatch):
    import hmac

    from pi_plugins.serve import guard

    compared = []
    real = hmac.compare_digest

    def recording(a, b):
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(guard.hmac, "compare_digest", recording)
    assert served.http.get("/api/sessions").status_code == 200
    bad = served.http.get("/api/sessions", headers={"Authorization": "Bearer nearly-" + served.token})
    assert bad.status_code == 401
    assert sorted(compared) == sorted([(served.token.encode(), served.token.encode()),
                                       (("nearly-" + served.token).encode(), served.token.encode())])


@pytest.mark.parametrize("host", ["evil.example", "evil.example:80", "127.0.0.1.nip.io", "[::2]:1"])
def test_a_foreign_host_header_is_refused_against_dns_rebinding(served, host):
    response = served.http.get("/api/sessions", headers={"Host": host})
    assert response.status_code == 403
    assert served.http.get("/", headers={"Host": host}).status_code == 403
    path = served.socket_url(served.open()).split(served.netloc, 1)[1]
    assert _raw_handshake_status(served.netloc, path, host) == 403
    assert _raw_handshake_status(served.netloc, path, served.netloc) == 101


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]"])
def test_loopback_host_names_are_accepted(served, host):
    port = served.netloc.rsplit(":", 1)[1]
    assert served.http.get("/api/sessions", headers={"Host": f"{host}:{port}"}).status_code == 200


def test_a_websocket_from_another_origin_is_refused_with_403_before_the_upgrade(served):
    url = served.socket_url(served.open())
    assert _handshake_status(url, origin="http://evil.example") == 403
    assert _handshake_status(url, origin=f"http://{served.netloc}.evil.example") == 403
    assert _handshake_status(url, origin=f"http://{served.netloc}") == 101  # the page's own
    assert _handshake_status(url) == 101  # no Origin: a script, not a browser


def test_no_cors_headers_are_ever_sent(served):
    origin = {"Origin": "http://evil.example"}
    answers = [
        served.http.get("/api/health", headers=origin),
        served.http.get("/api/sessions", headers=origin),
        served.http.get("/", headers=origin),
        served.http.options("/api/sessions", headers={**origin, "Access-Control-Request-Method": "POST",
                                                      "Access-Control-Request-Headers": "authorization"}),
    ]
    for response in answers:
        assert [h for h in response.headers if h.lower().startswith("access-control-")] == []
    assert answers[-1].status_code >= 400  # a preflight is not granted


def test_a_session_outside_the_sessions_folder_is_refused(served, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    stray = outside / "stray.jsonl"
    shutil.copy(fixture("tree-branch.jsonl"), stray)
    root = served.serving.sessions.root
    (root / "--linked--").mkdir(parents=True, exist_ok=True)
    os.symlink(stray, root / "--linked--" / "link.jsonl")
    for reference in (str(stray), str(root / ".." / "elsewhere.jsonl"),
                      str(root / "--linked--" / "link.jsonl"), "../../elsewhere/stray.jsonl"):
        response = served.http.post("/api/sessions", json={"cwd": served.cwd, "session": reference})
        assert response.status_code == 403, reference
        assert "not a session file in the sessions folder" in response.json()["error"]
    assert served.serving.sessions.live == {}


def test_a_session_id_that_is_not_live_reaches_no_file(served):
    assert served.http.delete("/api/sessions/does-not-exist").status_code == 404
    assert _handshake_status(served.socket_url("does-not-exist")) == 404
    traversal = "..%2F..%2Fetc%2Fpasswd"  # no route has a slash in an id: refused, not opened
    assert served.http.delete(f"/api/sessions/{traversal}").status_code in (404, 405)
    assert _handshake_status(served.socket_url(traversal)) in (403, 404)


def test_the_page_is_sent_with_a_content_security_policy(served):
    policy = served.http.get("/").headers["content-security-policy"]
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["default-src"] == "'self'" and directives["connect-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'" and directives["object-src"] == "'none'"
    assert directives["base-uri"] == "'none'" and directives["form-action"] == "'none'"


def test_a_frame_nested_100000_deep_is_answered_with_an_error_not_a_dropped_connection(served):
    client = served.socket(served.open())
    client.connection.send('{"id": "deep", "type": "get_state", "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    answer = client.wait_for(lambda f: f.get("type") == "response" and f.get("command") == "parse")
    assert answer["success"] is False and "nested too deeply" in answer["error"]
    assert client.ok("get_state")["sessionId"]  # the connection carries on


def test_an_export_is_built_off_the_event_loop(served, server):
    import threading

    import pi_plugins.export_html as export_module

    from support.llm_server import Reply

    server.push(Reply(text="Exported."))
    session = served.open()
    client = served.socket(session)
    client.ok("prompt", message="hello")
    client.event("agent_end")
    threads = []
    real = export_module.export_html

    def recording(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    export_module.export_html = recording
    try:
        response = served.http.get(f"/api/sessions/{session}/export")
    finally:
        export_module.export_html = real
    assert response.status_code == 200 and "Exported." in response.text
    assert threads and threads[0] != "pi-serve"  # not the server's event-loop thread
