"""Fixtures for the export tests: pi's session fixtures, and a real headless Chromium.

The browser is Debian's ``chromium`` (CI's ``.ci/run`` installs it); where it is missing
the browser tests skip, except under CI. One browser serves all tests; it is driven over the DevTools protocol
on a pipe (``--remote-debugging-pipe``: JSON messages ending in NUL on fds 3 and 4), so
the tests load pages, click and read what is shown, with no network and no extra library.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import subprocess
import time
from pathlib import Path

import pytest

from support.fixtures import SESSION_FIXTURES as FIXTURES
from support.programs import require_program


@pytest.fixture(params=sorted(p.name for p in FIXTURES.glob("*.jsonl")))
def fixture_session(request) -> Path:
    """Each session file recorded from the real pi."""
    return FIXTURES / request.param


CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
    "--disable-default-apps", "--disable-extensions", "--mute-audio",
)


class BrowserError(Exception):
    pass


def _above_4(fd: int) -> int:
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 5)
    os.close(fd)
    return moved


class Browser:
    """A headless Chromium driven over the DevTools protocol on a pipe."""

    def __init__(self, binary: str, profile: Path, timeout: float = 30) -> None:
        self.timeout = timeout
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # The browser expects the pipe on fds 3 (commands) and 4 (answers); the shell
        # (bash: it takes fd numbers above 9) moves them there from numbers above 4, so no
        # redirection clobbers another.
        to_browser_r, from_browser_w = _above_4(to_browser_r), _above_4(from_browser_w)
        script = f'exec "$0" "$@" 3<&{to_browser_r} 4>&{from_browser_w}'
        self.log = profile / "chromium.log"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                ["bash", "-c", script, binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                 "--remote-debugging-pipe", "about:blank"],
                pass_fds=(to_browser_r, from_browser_w), stdin=subprocess.DEVNULL,
                stdout=log, stderr=log,
            )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.send("Page.enable", session=self.session)
        self.send("Runtime.enable", session=self.session)

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._receive()
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self.events.append(answer)

    def _receive(self) -> dict:
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                raise BrowserError("the browser did not answer in time")
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                tail = self.log.read_text(errors="replace")[-2000:]
                raise BrowserError(f"the browser closed the pipe; its log ends:\n{tail}")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def _wait_for(self, method: str) -> dict:
        while True:
            for i, event in enumerate(self.events):
                if event.get("method") == method:
                    return self.events.pop(i)
            self.events.append(self._receive())

    def open(self, url: str) -> None:
        """Load ``url`` and wait for its load event (the page's script has run)."""
        self.events.clear()
        answer = self.send("Page.navigate", {"url": url}, session=self.session)
        if answer.get("errorText"):
            raise BrowserError(f"{url}: {answer['errorText']}")
        self._wait_for("Page.loadEventFired")

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (JSON-able values)."""
        answer = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                           session=self.session)
        if "exceptionDetails" in answer:
            raise BrowserError(f"{expression!r} raised: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    def page_errors(self) -> list[dict]:
        """Uncaught exceptions in the page since it was opened."""
        return [e for e in self.events if e.get("method") == "Runtime.exceptionThrown"]

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (BrowserError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)


@pytest.fixture(scope="session")
def chromium() -> str:
    return require_program("chromium", "Debian's chromium; .ci/run installs it")


@pytest.fixture(scope="session")
def browser(chromium, tmp_path_factory):
    running = Browser(chromium, tmp_path_factory.mktemp("chromium-profile"))
    yield running
    running.close()
