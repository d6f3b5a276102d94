"""A local stand-in of pi.dev's model catalogue route and of a Radius gateway's config
route, for the tests of ``pi update --models`` and the background refresh."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Catalogues:
    """pi.dev's catalogue route and a Radius gateway's config route on 127.0.0.1: each
    answer is scripted per path, every request is recorded."""

    def __init__(self):
        #: While set to an unset event, every answer waits for it (a slow pi.dev).
        self.hold: threading.Event | None = None
        self.answers: dict[str, list[tuple[int, dict, bytes]]] = {}
        self.requests: list[tuple[str, dict]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                outer.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
                if outer.hold is not None:
                    outer.hold.wait(30)
                path = self.path.split("?")[0]
                queue = outer.answers.get(path) or [(404, {}, b"not found")]
                status, headers, body = queue.pop(0) if len(queue) > 1 else queue[0]
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def answer(self, path: str, *answers: tuple[int, dict, object]):
        self.answers[path] = [(s, h, b if isinstance(b, bytes) else json.dumps(b).encode()) for s, h, b in answers]

    def close(self):
        if self.hold is not None:
            self.hold.set()
        self.server.shutdown()
        self.server.server_close()
