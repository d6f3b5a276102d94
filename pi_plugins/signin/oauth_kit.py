"""What every sign-in flow shares: the errors, the callbacks a front end gives
(:class:`LoginCallbacks`), PKCE, requests that go through ``PI_PROVIDER_ORIGINS``
(:mod:`pi_plugins.providers.origins`, so tests play the provider's side on 127.0.0.1),
the local page the browser is sent back to (:class:`CallbackServer`) and the
:class:`SignIn` base. The flows themselves are in :mod:`.flows` and the modules beside it."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import secrets
import threading
import time
from collections.abc import Awaitable, Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from attrs import define

from pi_plugins.providers.origins import rewrite

TIMEOUT = 30.0


class SignInError(RuntimeError):
    """A sign-in or refresh that did not succeed; the message says why (never a token)."""


class LoginCancelled(SignInError):
    def __init__(self) -> None:
        super().__init__("Login cancelled")


@define
class LoginCallbacks:
    """What a flow asks of the front end (the chat's dialog, ``pi auth login``).

    ``on_auth(url, instructions)`` shows the link (and opens a browser where one can);
    ``prompt(message, placeholder, allow_empty)`` asks for a line; ``manual_code()``, when
    given, waits for a pasted code or redirect URL, racing the local callback server;
    ``progress(message)`` reports a step; ``cancelled()`` says the user gave up.
    ``select(message, [(id, label), ...])`` picks a sign-in method (pi 1.6's ``select``
    prompt; without it the first, the browser, is taken); ``device_code(url, code)`` shows
    a device code to enter at ``url`` (without it, ``on_auth(url, "Enter code: CODE")``);
    ``paste_code(url, instructions, message)`` shows the link and asks for the code the
    page shows in one dialog, None when cancelled (without it, ``on_auth`` then ``prompt``)."""

    on_auth: Callable[[str, str | None], Any]
    prompt: Callable[[str, str | None, bool], Awaitable[str]]
    progress: Callable[[str], Any] = lambda message: None
    manual_code: Callable[[], Awaitable[str]] | None = None
    cancelled: Callable[[], bool] = lambda: False
    select: Callable[[str, list[tuple[str, str]]], Awaitable[str | None]] | None = None
    device_code: Callable[[str, str], Any] | None = None
    paste_code: Callable[[str, str | None, str], Awaitable[str | None]] | None = None

    async def choose(self, message: str, options: list[tuple[str, str]]) -> str:
        """The id of the method picked; :class:`LoginCancelled` when none is."""
        if self.select is None:
            return options[0][0]
        picked = await self.select(message, options)
        if picked is None:
            raise LoginCancelled()
        return picked

    async def ask_pasted_code(self, url: str, instructions: str | None, message: str, placeholder: str) -> str:
        """The code pasted after signing in at ``url``; :class:`LoginCancelled` when none is."""
        if self.paste_code is None:
            self.on_auth(url, instructions)
            return await self.prompt(message, placeholder, False)
        answer = await self.paste_code(url, instructions, message)
        if answer is None:
            raise LoginCancelled()
        return answer

    def show_device_code(self, url: str, code: str) -> None:
        if self.device_code is not None:
            self.device_code(url, code)
        else:
            self.on_auth(url, f"Enter code: {code}")


# ---------------------------------------------------------------- shared pieces


def pkce() -> tuple[str, str]:
    """(verifier, S256 challenge): 32 random bytes, base64url without padding."""
    verifier = _b64url(secrets.token_bytes(32))
    return verifier, _b64url(hashlib.sha256(verifier.encode()).digest())


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def now_ms() -> int:
    return int(time.time() * 1000)


def parse_authorization_input(text: str) -> tuple[str | None, str | None]:
    """(code, state) from what the user pasted: the redirect URL, ``code#state``, a
    query string, or the bare code."""
    value = text.strip()
    if not value:
        return None, None
    parts = urlsplit(value)
    if parts.scheme and parts.netloc:
        query = parse_qs(parts.query)
        return _first(query, "code"), _first(query, "state")
    if "#" in value:
        code, _, state = value.partition("#")
        return code, state
    if "code=" in value:
        query = parse_qs(value)
        return _first(query, "code"), _first(query, "state")
    return value, None


def _first(query: dict[str, list[str]], key: str) -> str | None:
    """The first value of ``key`` in a parsed query string, or None."""
    values = query.get(key)
    return values[0] if values else None


async def request(method: str, url: str, *, headers: dict[str, str], json_body: Any = None,
                   form: dict[str, str] | None = None) -> tuple[int, str]:
    import httpx

    target = rewrite(url)
    async with httpx.AsyncClient(timeout=TIMEOUT, follow_redirects=False) as client:
        response = await client.request(
            method, target, headers=headers,
            content=json.dumps(json_body).encode() if json_body is not None else None,
            data=form)
        return response.status_code, response.text


def parse_json(text: str, what: str) -> dict:
    try:
        data = json.loads(text)
    except ValueError:
        raise SignInError(f"{what} returned invalid JSON: {text[:200]!r}") from None
    if not isinstance(data, dict):
        raise SignInError(f"{what} returned {type(data).__name__}, not an object")
    return data


def _browser_page(title: str, detail: str = "") -> bytes:
    import html

    return (f"<!doctype html><html><head><meta charset='utf-8'><title>pi</title></head><body>"
            f"<h1>{html.escape(title)}</h1><p>{html.escape(detail)}</p></body></html>").encode()


class CallbackServer:
    """The local page the provider redirects the browser to (``http://HOST:PORT/PATH``):
    it checks the state (when there is one) and hands the code to the waiting flow; the
    whole query stays in :attr:`query` (ChatGPT's carries the issued client id). When the
    port is taken, the flow goes on without it (the user pastes the redirect URL), as pi's
    Codex flow does; ``strict`` raises instead. Port 0 takes a free one (:attr:`port`)."""

    def __init__(self, port: int, path: str, state: str | None, product: str, *,
                 host: str | None = None, strict: bool = False):
        self.loop = asyncio.get_running_loop()
        self.result: asyncio.Future = self.loop.create_future()
        self.server: ThreadingHTTPServer | None = None
        self.query: dict[str, str] = {}
        self.port = port
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                query = parse_qs(url.query)
                code, got_state = _first(query, "code"), _first(query, "state")
                error = _first(query, "error")
                if url.path != path:
                    status, page = 404, _browser_page("Callback route not found.")
                elif error:
                    status, page = 400, _browser_page(f"{product} authentication did not complete.",
                                                      f"Error: {error}")
                elif not code or (state is not None and not got_state):
                    status, page = 400, _browser_page("Missing code or state parameter.")
                elif state is not None and got_state != state:
                    status, page = 400, _browser_page("State mismatch.")
                elif outer.result.done():
                    status, page = 409, _browser_page("This sign-in has already been handled.")
                else:
                    status, page = 200, _browser_page(
                        f"{product} authentication completed. You can close this window.")
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Cache-Control", "no-store")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)
                if status == 200:
                    outer.query = {k: v[0] for k, v in query.items() if v}
                    outer.loop.call_soon_threadsafe(outer._settle, code)

        bind = host or os.environ.get("PI_OAUTH_CALLBACK_HOST") or "127.0.0.1"
        try:
            self.server = ThreadingHTTPServer((bind, port), Handler)
        except OSError:
            if strict:
                raise
            self.server = None
            self._settle(None)
            return
        self.port = self.server.server_address[1]
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True, name="pi-oauth-callback").start()

    def _settle(self, code: str | None) -> None:
        if not self.result.done():
            self.result.set_result(code)

    def cancel_wait(self) -> None:
        self._settle(None)

    def close(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


async def code_from_browser_or_paste(server: CallbackServer, callbacks: LoginCallbacks,
                                      state: str | None, prompt_message: str,
                                      placeholder: str | None = None) -> str:
    """The authorization code: from the callback server, or pasted (whichever comes
    first); with neither, asked for. A pasted state must match."""
    code = None
    pasted = None
    if callbacks.manual_code is not None:
        manual = asyncio.ensure_future(callbacks.manual_code())
        done, _ = await asyncio.wait({server.result, manual}, return_when=asyncio.FIRST_COMPLETED)
        if server.result.done() and server.result.result():
            code = server.result.result()
            manual.cancel()
        else:
            if not manual.done():
                await manual  # the callback server could not listen: wait for the paste
            pasted = manual.result()
    elif server.server is not None:
        code = await server.result
    if code is None and pasted is None:
        pasted = await callbacks.prompt(prompt_message, placeholder, False)
    if code is None:
        code, pasted_state = parse_authorization_input(pasted or "")
        if state is not None and pasted_state and pasted_state != state:
            raise SignInError("OAuth state mismatch")
    if not code:
        raise SignInError("Missing authorization code")
    return code



class SignIn:
    id = ""
    name = ""
    #: The flow runs a local callback server: a pasted redirect URL races it.
    uses_callback_server = False

    async def login(self, callbacks: LoginCallbacks, **options: Any) -> dict:
        raise NotImplementedError

    async def refresh(self, credentials: dict) -> dict:
        raise NotImplementedError

    def api_key(self, credentials: dict) -> str:
        return credentials["access"]

