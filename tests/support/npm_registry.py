"""A tiny npm registry on 127.0.0.1 for the package tests: it serves a packument
(``GET /NAME``, ``/@scope%2fname``) for every tarball in a folder and the tarballs
themselves (``GET /NAME/-/FILE.tgz``), with their real ``dist.integrity`` (sha512) and
``shasum``, each tarball's own ``package.json`` as the version's manifest. Both pi (through
npm, ``npm_config_registry``) and pi-harness install from it. ``tamper(name)`` serves a
changed tarball for that package while the packument keeps the published integrity.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import tarfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

FIXTURES = Path(__file__).parent.parent / "fixtures" / "pi-packages"


def _manifest(data: bytes) -> dict:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        member = archive.extractfile("package/package.json")
        assert member is not None
        return json.loads(member.read())


class NpmRegistry:
    def __init__(self, folder: Path = FIXTURES) -> None:
        self.tarballs: dict[str, bytes] = {}  # file name -> bytes
        self.versions: dict[str, dict[str, dict]] = {}  # name -> version -> manifest
        self.files: dict[tuple[str, str], str] = {}
        self.tampered: set[str] = set()
        self.requests: list[str] = []
        #: Cleared: tarball downloads wait until it is set again (an install held midway).
        self.open = threading.Event()
        self.open.set()
        for path in sorted(folder.glob("*.tgz")):
            self.add(path.name, path.read_bytes())
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    def add(self, filename: str, data: bytes) -> None:
        manifest = _manifest(data)
        self.tarballs[filename] = data
        self.versions.setdefault(manifest["name"], {})[manifest["version"]] = manifest
        self.files[(manifest["name"], manifest["version"])] = filename

    def tamper(self, name: str) -> None:
        self.tampered.add(name)

    def packument(self, name: str) -> dict:
        versions = {}
        for version, manifest in self.versions[name].items():
            data = self.tarballs[self.files[(name, version)]]
            versions[version] = {
                **manifest,
                "dist": {
                    "tarball": f"{self.url}{name}/-/{self.files[(name, version)]}",
                    "integrity": "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode(),
                    "shasum": hashlib.sha1(data).hexdigest(),
                },
            }
        latest = max(versions, key=lambda v: tuple(int(p) for p in v.split("-")[0].split(".")))
        return {"name": name, "dist-tags": {"latest": latest}, "versions": versions}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                path = unquote(self.path.split("?", 1)[0]).lstrip("/")
                registry.requests.append(path)
                if "/-/" in path:
                    registry.open.wait(30)
                    name, _, filename = path.partition("/-/")
                    data = registry.tarballs.get(filename)
                    if data is not None and name in registry.tampered:
                        data = data[:-8] + b"tampered"
                    self._send(data, "application/octet-stream")
                elif path in registry.versions:
                    self._send(json.dumps(registry.packument(path)).encode(), "application/json")
                else:
                    self._send(None, "")

            def _send(self, body: bytes | None, kind: str) -> None:
                if body is None:
                    body, kind = b'{"error":"Not found"}', "application/json"
                    self.send_response(404)
                else:
                    self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler

    def __enter__(self) -> NpmRegistry:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
