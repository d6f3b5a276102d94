"""``pi serve`` as a real process (``python -m pi_plugins.cli serve --port 0``): its
one printed line parsed, an HTTP client with its token, a signal to end it."""

from __future__ import annotations

import re
import signal
import subprocess
import sys

import httpx

LINE = re.compile(r"^pi serve: http://127\.0\.0\.1:(\d+)/#token=(\S+)\n$")


class ServeProcess:
    def __init__(self, pi, *args: str, env: dict | None = None, host: str = "127.0.0.1") -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pi_plugins.cli", "serve", "--port", "0", *args], cwd=pi.cwd,
            env={**pi.env, "PI_OFFLINE": "1", **(env or {})}, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.line = self.process.stdout.readline()
        match = re.match(LINE.pattern.replace(r"127\.0\.0\.1", re.escape(host)), self.line)
        assert match, f"{self.line!r} {self.process.stderr.read() if self.process.poll() is not None else ''}"
        self.port, self.token = int(match[1]), match[2]
        self.url = self.line.split(" ", 2)[2].strip()
        self.base = f"http://127.0.0.1:{self.port}"
        self.http = httpx.Client(base_url=self.base, headers={"Authorization": f"Bearer {self.token}"}, timeout=15)

    def open(self, pi) -> str:
        response = self.http.post("/api/sessions", json={"cwd": str(pi.cwd), "model": "local/test-model"})
        assert response.status_code == 201, response.text
        return response.json()["id"]

    def stop(self, signum=signal.SIGTERM) -> tuple[int, str, str]:
        self.process.send_signal(signum)
        out, err = self.process.communicate(timeout=30)
        return self.process.returncode, out, err
