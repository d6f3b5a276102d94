"""Local stand-ins of where ``/share`` sends a session: GitHub's gist API and Radius's
artifact route; each keeps what it received."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _PostApi:
    """A JSON API on 127.0.0.1 that answers every POST with ``answer(status)`` and keeps
    ``(path, headers, body)`` of each request (the body as ``read_body`` gives it)."""

    def __init__(self, status: int) -> None:
        self.received: list[tuple[str, dict, Any]] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                body = api.read_body(self.rfile.read(int(self.headers["Content-Length"])))
                api.received.append((self.path, dict(self.headers), body))
                data = json.dumps(api.answer(status)).encode()
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

    def read_body(self, raw: bytes) -> Any:
        return raw

    def answer(self, status: int) -> dict:
        raise NotImplementedError

    def close(self):
        self.http.shutdown()
        self.http.server_close()


class GistApi(_PostApi):
    """POST /gists as GitHub answers it; the bodies kept as JSON."""

    def __init__(self, status: int = 201) -> None:
        super().__init__(status)

    def read_body(self, raw: bytes) -> Any:
        return json.loads(raw)

    def answer(self, status: int) -> dict:
        return {"id": "abc123", "html_url": "https://gist.example/u/abc123"} if status < 400 else \
            {"message": "Bad credentials"}


class ArtifactApi(_PostApi):
    """POST /v1/artifacts as Radius answers it; the bodies kept as bytes."""

    def __init__(self, status: int = 201) -> None:
        super().__init__(status)

    def answer(self, status: int) -> dict:
        return {"artifact": {"canonical_url": "https://radius.example/a/xyz"}} if status < 400 else \
            {"error": "not allowed"}
