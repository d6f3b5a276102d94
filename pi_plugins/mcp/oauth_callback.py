"""The browser's way back from an OAuth sign-in: the loopback page the authorization
server redirects to (``http://127.0.0.1:<port>/callback`` unless ``oauth.callbackUrl``
says otherwise), and the parsing of a redirect URL the user pasted instead."""

from __future__ import annotations

import asyncio
import contextlib
import html
from urllib.parse import parse_qs, urlsplit

from mcp.shared.auth import AuthorizationCodeResult

from pi_plugins.mcp.connection import McpCallError

#: pi 1.6's callback page: its titles, headings and messages (the look is our own)
SIGNED_IN = "Signed in to the MCP server. You may now close this page."
NOT_SIGNED_IN = "Authorization failed. You may close this window."


def callback_page(ok: bool, message: str, details: str | None = None) -> str:
    """The page the browser shows after the redirect: ``Authentication successful`` or
    ``Authentication failed`` as title and heading, the message, and any details."""
    heading = "Authentication successful" if ok else "Authentication failed"
    extra = f'<div class="details">{html.escape(details)}</div>' if details else ""
    return ('<!doctype html>\n<html lang="en"><head><meta charset="utf-8" />'
            '<meta name="viewport" content="width=device-width, initial-scale=1" />'
            f"<title>{heading}</title><style>body{{font-family:system-ui,sans-serif;text-align:center;"
            "margin:15vh auto;max-width:560px;padding:0 24px}.details{font-family:monospace;"
            f"white-space:pre-wrap;margin-top:16px}}</style></head><body><main><h1>{heading}</h1>"
            f"<p>{html.escape(message)}</p>{extra}</main></body></html>")


class SignInFailed(McpCallError):
    """The authorization server or the browser ended the sign-in; one line."""


def parse_redirect(url: str) -> AuthorizationCodeResult:
    """The code, state and issuer of a redirect URL (the callback's or a pasted one)."""
    query = {k: v[0] for k, v in parse_qs(urlsplit(url.strip()).query).items()}
    if "error" in query:
        detail = query.get("error_description")
        raise SignInFailed(f"Authorization failed: {query['error']}" + (f" ({detail})" if detail else ""))
    if not query.get("code"):
        raise SignInFailed("The redirect carries no authorization code")
    return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))


class LoopbackCallback:
    """The page the authorization server sends the browser back to (by default
    ``http://127.0.0.1:<port>/callback``). Answers one redirect with a small page and
    hands its parameters to :meth:`wait`. ``port`` 0 takes a free port; ``fixed`` is a
    configured redirect URI, sent exactly as written."""

    def __init__(self, port: int = 0, path: str = "/callback", host: str = "127.0.0.1",
                 redirect_host: str = "127.0.0.1", fixed: str | None = None, extra_paths: tuple[str, ...] = ()) -> None:
        self.port, self.path, self.host, self.redirect_host, self.fixed = port, path, host, redirect_host, fixed
        self.extra_paths = extra_paths  # a server-specific document's redirect path
        self._server: asyncio.AbstractServer | None = None
        self._result: asyncio.Future[AuthorizationCodeResult] | None = None

    @property
    def redirect_uri(self) -> str:
        return self.fixed or f"http://{self.redirect_host}:{self.port}{self.path}"

    async def __aenter__(self) -> LoopbackCallback:
        self._result = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._answer, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
        if self._result is not None and not self._result.done():
            self._result.cancel()

    def deliver(self, redirect_url: str) -> None:
        """A redirect URL pasted by the user (a browser that cannot reach this machine)."""
        if self._result is None or self._result.done():
            return
        try:
            self._result.set_result(parse_redirect(redirect_url))
        except SignInFailed as exc:
            self._result.set_exception(exc)

    async def wait(self) -> AuthorizationCodeResult:
        """The next redirect's parameters. Each is taken once: when the SDK starts the
        authorization again within one sign-in (its token request failed), the new
        attempt waits for its own redirect, not the last one, whose state is stale."""
        assert self._result is not None
        try:
            return await asyncio.shield(self._result)
        finally:
            if self._result.done():
                self._result = asyncio.get_running_loop().create_future()

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request_line = (await asyncio.wait_for(reader.readline(), 10)).decode("latin-1")
            while (await asyncio.wait_for(reader.readline(), 10)) not in (b"\r\n", b"\n", b""):
                pass
            parts = request_line.split()
            target = parts[1] if len(parts) >= 2 else ""
            if parts[:1] != ["GET"] or urlsplit(target).path not in (self.path, *self.extra_paths):
                status, body = "404 Not Found", callback_page(False, "Not found")
            else:
                status, body = self._complete(target)
            data = body.encode()
            writer.write(f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nCache-Control: no-store\r\n"
                         f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode() + data)
            await writer.drain()
        except (TimeoutError, OSError, UnicodeError):
            pass
        finally:
            writer.close()

    def _complete(self, target: str) -> tuple[str, str]:
        """pi 1.6's answers: a refusal from the authorization server is a 200 page that
        says so (its description as details), a redirect without a code a 400."""
        try:
            result = parse_redirect(target)
        except SignInFailed as exc:
            if self._result is not None and not self._result.done():
                self._result.set_exception(exc)
            query = {k: v[0] for k, v in parse_qs(urlsplit(target).query).items()}
            if "error" in query:
                return "200 OK", callback_page(False, NOT_SIGNED_IN, query.get("error_description") or query["error"])
            return "400 Bad Request", callback_page(False, "Missing authorization code")
        if self._result is not None and not self._result.done():
            self._result.set_result(result)
        return "200 OK", callback_page(True, SIGNED_IN)
