"""A git server on 127.0.0.1 for the git-package tests: ``git http-backend`` (git's
smart HTTP protocol, as GitHub speaks it) behind a small threaded HTTP server, serving
the bare repositories under one folder. ``GitServer.repo("owner/name")`` makes one and
returns a :class:`Repo` to commit, tag and push to it.

A name such as ``git.example.com`` reaches it the way pi's git would be pointed
anywhere: a global git config (``GIT_CONFIG_GLOBAL``) whose ``url.<base>.insteadOf``
rewrites ``https://git.example.com/`` and ``ssh://git@git.example.com/`` to this server.
Both pi 1.6 and pi-harness run git, so both see the same server.
"""

from __future__ import annotations

import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HOST = "git.example.com"


def run_git(*args: str, cwd: Path | None = None, env: dict | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, check=False)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout.strip()


class Repo:
    """A bare repository on the server and a working copy that pushes to it."""

    def __init__(self, bare: Path, work: Path, env: dict[str, str]) -> None:
        self.bare, self.work, self.env = bare, work, env
        run_git("init", "-q", "--bare", "-b", "main", str(bare), env=env)
        run_git("init", "-q", "-b", "main", str(work), env=env)
        self.run("remote", "add", "origin", str(bare))

    def commit(self, files: dict[str, str], message: str = "change", tag: str | None = None) -> str:
        """Write ``files``, commit and push them (with ``tag``); the new commit."""
        for name, text in files.items():
            path = self.work / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        self.run("add", "-A")
        self.run("commit", "-q", "-m", message)
        if tag:
            self.run("tag", tag)
        self.run("push", "-q", "--tags", "origin", "main")
        return self.run("rev-parse", "HEAD")

    def run(self, *args: str) -> str:
        return run_git(*args, cwd=self.work, env=self.env)


class GitServer:
    def __init__(self, folder: Path) -> None:
        self.root = folder / "repos"
        self.root.mkdir(parents=True)
        self._work = folder / "work"
        self.requests: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self.config = folder / "gitconfig"
        self.config.write_text(
            "[user]\n\tname = Test\n\temail = test@example.com\n"
            "[init]\n\tdefaultBranch = main\n"
            f'[url "{self.url}"]\n\tinsteadOf = https://{HOST}/\n\tinsteadOf = ssh://git@{HOST}/\n')

    @property
    def env(self) -> dict[str, str]:
        """What a process needs to reach this server under its ``HOST`` name."""
        return {"GIT_CONFIG_GLOBAL": str(self.config), "GIT_CONFIG_NOSYSTEM": "1"}

    def repo(self, path: str) -> Repo:
        """A new repository, served as ``path`` and as ``path.git`` (as GitHub does)."""
        made = Repo(self.root / path, self._work / path, self.env)
        (self.root / f"{path}.git").symlink_to(made.bare.name)
        return made

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                self._cgi()

            def do_POST(self) -> None:
                self._cgi()

            def _cgi(self) -> None:
                path, _, query = self.path.partition("?")
                server.requests.append(path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                env = {
                    "PATH": os.environ["PATH"], "GIT_PROJECT_ROOT": str(server.root),
                    "GIT_HTTP_EXPORT_ALL": "1", "GIT_CONFIG_NOSYSTEM": "1",
                    "REQUEST_METHOD": self.command, "PATH_INFO": path, "QUERY_STRING": query,
                    "CONTENT_TYPE": self.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(body)),
                    "REMOTE_ADDR": "127.0.0.1", "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
                    "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
                }
                done = subprocess.run(["git", "http-backend"], input=body, capture_output=True, env=env)
                head, _, payload = done.stdout.partition(b"\r\n\r\n")
                status, headers = 200, []
                for line in head.decode("latin-1").split("\r\n"):
                    name, _, value = line.partition(":")
                    if name.lower() == "status":
                        status = int(value.split()[0])
                    elif name:
                        headers.append((name, value.strip()))
                self.send_response(status if done.returncode == 0 else 500)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler

    def __enter__(self) -> GitServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
