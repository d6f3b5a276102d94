"""/share: the HTML export as a secret gist, against a local GitHub API server."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from support.llm_server import Reply

pytestmark = pytest.mark.process  # starts real processes (see tests/conftest.py)


class GistApi:
    """POST /gists as GitHub answers it; what it received is kept."""

    def __init__(self, status: int = 201) -> None:
        self.received: list[tuple[str, dict, dict]] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                api.received.append((self.path, dict(self.headers), body))
                answer = ({"id": "abc123", "html_url": "https://gist.example/u/abc123"} if status < 400
                          else {"message": "Bad credentials"})
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def close(self):
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture
def gist_api():
    api = GistApi()
    yield api
    api.close()


def test_share_prints_the_gists_link_and_the_server_received_the_export(pi_tui, server, gist_api):
    server.push(Reply(text="Shared wisdom."))
    term = pi_tui(env={"PI_GITHUB_API_URL": gist_api.url, "GITHUB_TOKEN": "ghp_test"})
    term.submit("tell me something")
    term.wait_for("Shared wisdom.")
    term.wait_idle()
    term.submit("/share")
    screen = term.wait_drawn("Gist: https://gist.example/u/abc123")
    assert "Share URL: https://pi.dev/session/#abc123" in screen
    [(path, headers, body)] = gist_api.received
    assert path == "/gists" and headers["Authorization"] == "Bearer ghp_test"
    assert body["public"] is False
    html = body["files"]["session.html"]["content"]
    assert html.startswith("<!DOCTYPE html") and "Shared wisdom." in html and "tell me something" in html


def test_share_without_a_token_says_how_to_get_one(pi_tui):
    term = pi_tui()
    term.submit("/share")
    term.wait_drawn("Cannot share: set GITHUB_TOKEN, or log in with 'gh auth login'.")


def test_share_reports_the_apis_refusal(pi_tui, server):
    api = GistApi(status=401)
    try:
        term = pi_tui(env={"PI_GITHUB_API_URL": api.url, "GITHUB_TOKEN": "bad"})
        term.submit("/share")
        term.wait_drawn("Failed to create gist:")
        assert "401: Bad credentials" in term.screen()
    finally:
        api.close()
