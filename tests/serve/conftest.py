"""``pi serve`` in this process (a thread with its own event loop, as a subprocess of
``pi serve`` would run it), in a home whose models.json points at the scripted LLM
server; sync HTTP and WebSocket clients to talk to it.

::

    def test_x(served, server):
        server.push(Reply(text="Hi"))
        session = served.open()                  # POST /api/sessions -> id
        client = served.socket(session)          # WebSocket /api/sessions/{id}/rpc
        client.ok("prompt", message="hello")
        client.event("agent_end")
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from typing import Any, Callable
from urllib.parse import urlsplit

import httpx
import pytest
from websockets.sync.client import connect

from support.cli import use_environment

TOKEN = "test-token-0123456789abcdef"
TIMEOUT = 15.0


class Frames:
    """A WebSocket to a served session; every frame it receives is kept, parsed, in
    ``frames`` (in order); waits look from ``after`` on, as support.rpc.RpcClient's."""

    def __init__(self, url: str, **options: Any) -> None:
        self.connection = connect(url, max_size=None, open_timeout=TIMEOUT, **options).__enter__()
        self.frames: list[dict] = []
        self.closed = False
        self._changed = threading.Condition()
        self._ids = itertools.count(1)
        self._prefix = f"c{id(self) % 10000}-"
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for text in self.connection:
                with self._changed:
                    self.frames.append(json.loads(text))
                    self._changed.notify_all()
        except Exception:
            pass
        with self._changed:
            self.closed = True
            self._changed.notify_all()

    def mark(self) -> int:
        with self._changed:
            return len(self.frames)

    def wait_for(self, predicate: Callable[[dict], bool], after: int = 0, timeout: float = TIMEOUT,
                 what: str = "a matching frame") -> dict:
        deadline = time.monotonic() + timeout
        with self._changed:
            index = after
            while True:
                while index < len(self.frames):
                    if predicate(self.frames[index]):
                        return self.frames[index]
                    index += 1
                remaining = deadline - time.monotonic()
                if self.closed or remaining <= 0:
                    break
                self._changed.wait(remaining)
        tail = "\n".join(json.dumps(f)[:300] for f in self.frames[-10:])
        raise AssertionError(f"no {what} after frame {after} ({'closed' if self.closed else 'timed out'}):\n{tail}")

    def event(self, type: str, after: int = 0, timeout: float = TIMEOUT, **fields: Any) -> dict:
        return self.wait_for(lambda f: f.get("type") == type and all(f.get(k) == v for k, v in fields.items()),
                             after, timeout, what=f"{type} {fields or ''}")

    def events(self, after: int = 0) -> list[dict]:
        with self._changed:
            return [f for f in self.frames[after:] if f.get("type") != "response"]

    def send(self, type: str, **fields: Any) -> dict:
        command = {"id": f"{self._prefix}{next(self._ids)}", "type": type, **fields}
        self.connection.send(json.dumps(command))
        return command

    def request(self, type: str, **fields: Any) -> dict:
        command = self.send(type, **fields)
        return self.wait_for(lambda f: f.get("type") == "response" and f.get("id") == command["id"],
                             what=f"response to {command['id']}")

    def ok(self, type: str, **fields: Any) -> Any:
        response = self.request(type, **fields)
        assert response["success"] is True, response
        return response.get("data")

    def close(self) -> None:
        self.connection.close()


class Served:
    """A running ``pi serve`` (see the module docstring)."""

    def __init__(self, pi, token: str = TOKEN, approve: bool | None = None, limits=None, port: int = 0) -> None:
        from pi_plugins.serve.cli import Serving

        self.pi, self.token = pi, token
        self.cwd = str(pi.cwd)
        self.serving = Serving("127.0.0.1", port, token, approve=approve, limits=limits)
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.exit_code: int | None = None
        self._thread = threading.Thread(target=self._main, name="pi-serve", daemon=True)
        self._thread.start()
        if not self._ready.wait(TIMEOUT) or self._error is not None:
            raise RuntimeError(f"pi serve did not start: {self._error!r}")
        self.url = self.serving.url
        parts = urlsplit(self.url)
        self.base = f"http://{parts.netloc}"
        self.netloc = parts.netloc
        self.http = httpx.Client(base_url=self.base, timeout=TIMEOUT,
                                 headers={"Authorization": f"Bearer {token}"})
        self.sockets: list[Frames] = []

    def _main(self) -> None:
        async def main() -> None:
            self.loop = asyncio.get_running_loop()
            try:
                await self.serving.start()
            except BaseException as exc:
                self._error = exc
                self._ready.set()
                raise
            self._ready.set()
            self.exit_code = await self.serving.wait()

        from pi_plugins.serve.cli import event_loop

        try:
            with event_loop() as runner:  # the loop `pi serve` runs on
                runner.run(main())
        except BaseException as exc:
            self._error = exc

    def open(self, **body: Any) -> str:
        """A live session (``POST /api/sessions``), on the test model by default."""
        body = {"cwd": self.cwd, "model": "local/test-model", **body}
        response = self.http.post("/api/sessions", json=body)
        assert response.status_code == 201, response.text
        return response.json()["id"]

    def socket_url(self, session_id: str, since: int | None = None, token: str | None = None) -> str:
        query = f"token={token or self.token}" + (f"&since={since}" if since is not None else "")
        return f"ws://{self.netloc}/api/sessions/{session_id}/rpc?{query}"

    def socket(self, session_id: str, since: int | None = None, **options: Any) -> Frames:
        client = Frames(self.socket_url(session_id, since), **options)
        self.sockets.append(client)
        return client

    def live(self, session_id: str):
        return self.serving.sessions.live[session_id]

    def stop(self) -> None:
        for client in self.sockets:
            try:
                client.close()
            except Exception:
                pass
        self.http.close()
        if self.loop is not None and self._thread.is_alive():
            self.loop.call_soon_threadsafe(self.serving.stop)
        self._thread.join(TIMEOUT)


CONFIRM_PLUGIN = '''
from pi_core import hookimpl
from pi_core.protocol.events import ToolCallDecision


@hookimpl
async def before_tool_call(event, ctx):
    if event.tool_name != "bash":
        return None
    if await ctx.ui.confirm("Run this command?", event.arguments["command"]):
        return None
    return ToolCallDecision(block=True, reason="Blocked by user")
'''


@pytest.fixture
def confirm_plugin_file(pi):
    """A project plugin that asks ``confirm`` before each bash command, in a project
    without a trust decision (found by discovery when the server starts: use it before
    ``served``)."""
    folder = pi.cwd / ".pi" / "extensions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "confirm_bash.py").write_text(CONFIRM_PLUGIN)


@pytest.fixture
def confirm_plugin(pi, confirm_plugin_file):
    """:func:`confirm_plugin_file` in a trusted project: it loads."""
    pi.trust_project()


@pytest.fixture
def served(pi, monkeypatch):
    """``pi serve`` on a free port, in ``pi``'s home and project folder."""
    use_environment(monkeypatch, {**pi.env, "PI_OFFLINE": "1"}, pi.cwd)
    running = Served(pi)
    yield running
    running.stop()


@pytest.fixture
def serve_with(pi, monkeypatch):
    """``serve_with(**options)``: the ``served`` server made with :class:`Served`'s options
    (``approve``, ``limits``), started when called (after the test has set up the project)."""
    use_environment(monkeypatch, {**pi.env, "PI_OFFLINE": "1"}, pi.cwd)
    started: list[Served] = []

    def start(**options: Any) -> Served:
        started.append(Served(pi, **options))
        return started[-1]

    yield start
    for running in started:
        running.stop()


# ---------------------------------------------------------------- the page in Chromium

#: The widths the page is judged at: a desktop and a phone.
WIDTHS = {"desktop": (1280, 800), "phone": (375, 740)}


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium through Playwright (no browser download), one per module: the
    sync API holds an event loop on the main thread while it runs, which would break
    ``asyncio.run`` in the tests that come after."""
    import shutil

    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        running = playwright.chromium.launch(executable_path=shutil.which("chromium"),
                                             args=["--no-sandbox", "--disable-gpu"])
        yield running
        running.close()


class PageOpener:
    """``open(width="desktop", scheme="dark")``: a fresh page of the server, which must run
    without errors; ``shoot(page, name)`` keeps a screenshot in the test's output."""

    def __init__(self, browser, served, folder) -> None:
        self.browser, self.served, self.folder = browser, served, folder
        self.contexts: list = []
        self.errors: list[str] = []

    def open(self, width: str = "desktop", scheme: str = "dark", url: str | None = None):
        from playwright.sync_api import expect

        expect.set_options(timeout=15_000)
        w, h = WIDTHS[width]
        context = self.browser.new_context(viewport={"width": w, "height": h}, color_scheme=scheme,
                                           permissions=["clipboard-read", "clipboard-write"],
                                           accept_downloads=True)
        self.contexts.append(context)
        opened = context.new_page()
        opened.on("pageerror", lambda error: self.errors.append(str(error)))
        opened.goto(url or self.served.url)
        return opened

    def shoot(self, page, name: str):
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{name}.png"
        page.screenshot(path=str(path))
        return path

    def close(self) -> None:
        for context in self.contexts:
            context.close()


@pytest.fixture
def pages(browser, served, tmp_path):
    opener = PageOpener(browser, served, tmp_path / "screenshots")
    yield opener
    opener.close()
    assert opener.errors == []


@pytest.fixture
def page(pages):
    """A fresh page of the server at 1280 px; it must run without errors."""
    return pages.open()


@pytest.fixture(params=list(WIDTHS))
def width(request):
    """Each test that takes it runs at both widths (``desktop``, ``phone``)."""
    return request.param
