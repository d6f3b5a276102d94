"""Local stand-ins of where ``/share`` sends a session: GitHub's gist API and Radius's
artifact route; each keeps what it received."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


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


class ArtifactApi:
    """POST /v1/artifacts as Radius answers it; what it received is kept."""

    def __init__(self, status: int = 201) -> None:
        self.received: list[tuple[str, dict, bytes]] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers["Content-Length"]))
                api.received.append((self.path, dict(self.headers), body))
                answer = ({"artifact": {"canonical_url": "https://radius.example/a/xyz"}} if status < 400
                          else {"error": "not allowed"})
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
