"""``pi serve``'s HTTP API, WebSocket and page, as one Starlette application.

- ``GET /api/health``, ``GET|POST /api/sessions``, ``DELETE /api/sessions/{id}``,
  ``GET /api/sessions/{id}/export``, ``DELETE /api/session-files?path=P``: JSON (the
  export is its HTML page; the delete removes a session file, closing it if live);
- ``GET /api/sessions/{id}/file?path=P``: a PDF, Word or Excel file of the session's
  folder, for a document artifact (:mod:`pi_plugins.serve.files`);
- ``/api/settings``, ``/api/providers/{p}/key``: the settings view
  (:mod:`pi_plugins.serve.settings_api`);
- ``WS /api/sessions/{id}/rpc?token=T[&since=N]``: pi's RPC protocol, one JSON object
  per text frame (:mod:`pi_plugins.serve.sessions`), and the page's ``navigate_tree``
  (:mod:`pi_plugins.serve.tree_commands`);
- ``/`` and ``/assets/*``: the page (package data, no build step; the Markdown, sanitising
  and highlighting libraries vendored in ``page/vendor``); ``/artifact``: the document of
  an artifact's sandboxed frame, under a policy of its own.

Everything passes through :class:`pi_plugins.serve.guard.Guard` first.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from importlib import resources
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from pi_core import __version__
from pi_plugins.serve.files import file_routes
from pi_plugins.serve.guard import Guard
from pi_plugins.serve.sessions import CURRENT, Client, RequestError, SessionHost
from pi_plugins.serve.settings_api import json_object, settings_routes
from pi_plugins.serve.tree_commands import ServeCommands

#: How long a client that fell behind has to take what is on its way and the 1013 close.
CLOSE_WAIT = 15.0
PAGE = Path(str(resources.files("pi_plugins.serve") / "page"))
#: What the page may load and reach: its own scripts and styles (no inline script), its
#: own server (HTTP and WebSocket), images inline; no plugins, no <base>, no forms, never
#: framed. Artifacts run in ``/artifact`` frames, under their own policy.
CONTENT_SECURITY_POLICY = ("default-src 'self'; script-src 'self'; "
                           "style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
                           "font-src 'self' data:; connect-src 'self'; frame-src 'self'; "
                           "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
#: An artifact's frame: its inline scripts run (that is what an HTML artifact is), but it
#: may reach nothing (no fetch, no WebSocket, no remote script, image or font), and only
#: the page may frame it; the page frames it sandboxed, without allow-same-origin, so it
#: is an opaque origin as well.
ARTIFACT_POLICY = ("default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; "
                   "img-src data: blob:; font-src data:; media-src data: blob:; connect-src 'none'; "
                   "form-action 'none'; base-uri 'none'; frame-ancestors 'self'")
#: The frame's document: it takes the artifact's source from the page (postMessage) and
#: writes it in, so the source never travels through a URL.
ARTIFACT_SHELL = """<!doctype html><meta charset="utf-8"><script>
addEventListener("message", (event) => {
  if (event.source !== parent || typeof event.data !== "string") return;
  document.open(); document.write(event.data); document.close();
}, { once: true });
parent.postMessage("pi-artifact-ready", "*");
</script>"""
#: The page's own headers: its policy, not framed by another site, no sniffing, no referrer.
PAGE_HEADERS = {"Content-Security-Policy": CONTENT_SECURITY_POLICY, "X-Frame-Options": "DENY",
                "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
                "Cache-Control": "no-cache"}


def create_app(host: SessionHost, *, token: str, bind_host: str = "127.0.0.1") -> Guard:
    """The application for ``host``'s sessions, guarded by ``token`` (see the guard)."""

    async def health(request: Request) -> Response:
        return JSONResponse({"ok": True, "version": __version__})

    async def list_sessions(request: Request) -> Response:
        cwd = request.query_params.get("cwd")
        rows = await asyncio.to_thread(host.listing, os.path.realpath(cwd) if cwd else None)
        return JSONResponse({"sessions": rows})

    async def open_session(request: Request) -> Response:
        body = await json_object(request)
        for key in ("cwd", "model", "session"):
            if body.get(key) is not None and not isinstance(body[key], str):
                raise RequestError(400, f"{key!r} must be a string")
        served = await host.open(body.get("cwd"), body.get("model"), body.get("session"))
        return JSONResponse({"id": served.id, "path": str(served.path)}, status_code=201)

    async def close_session(request: Request) -> Response:
        await host.close(request.path_params["id"])
        return Response(status_code=204)

    async def delete_file(request: Request) -> Response:
        path = request.query_params.get("path")
        if not path:
            raise RequestError(400, "path is required")
        await host.delete_file(path)
        return Response(status_code=204)

    async def export(request: Request) -> Response:
        from pi_plugins.export_html import export_html

        served = host.get(request.path_params["id"])
        session, tools = served.harness.session, list(served.harness.agent.tools)

        def build() -> str:
            with tempfile.TemporaryDirectory() as folder:
                page = export_html(session, Path(folder) / "export.html", tools=tools)
                return page.read_text(encoding="utf-8")

        # a thread: a 30 MB session's export held every other session up for 300 ms
        return HTMLResponse(await asyncio.to_thread(build))

    async def rpc_socket(websocket: WebSocket) -> None:
        try:
            served = host.get(websocket.path_params["id"])
            given = websocket.query_params.get("since")
            since = int(given) if given is not None else None
        except (RequestError, ValueError) as exc:
            status = exc.status if isinstance(exc, RequestError) else 400
            message = str(exc) if isinstance(exc, RequestError) else "since must be an integer"
            if "websocket.http.response" in websocket.scope.get("extensions", {}):
                await websocket.send_denial_response(JSONResponse({"error": message}, status_code=status))
            else:
                await websocket.close(code=1008, reason=message)
            return
        await websocket.accept()
        client = Client(websocket.send_text)
        send = served.attach(client, since)
        commands = ServeCommands(served, send, client)
        pump = asyncio.create_task(client.pump())
        reading = asyncio.create_task(_read(websocket, served, commands))
        behind = asyncio.create_task(client.behind.wait())
        try:
            await asyncio.wait({pump, reading, behind}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            served.detach(client)
            client.stop()
            reading.cancel()
            behind.cancel()
            if client.dropped:
                pump.cancel()  # stuck writing to a client that does not read: its frames go
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await pump
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await reading
            if client.dropped:
                # sent once the client reads what is on its way; one that never reads is
                # left to the keep-alive ping (its connection holds one frame at most)
                with contextlib.suppress(Exception, asyncio.TimeoutError):
                    await asyncio.wait_for(websocket.close(code=1013, reason="too far behind; reconnect with since"),
                                           CLOSE_WAIT)

    async def index(request: Request) -> Response:
        return FileResponse(PAGE / "index.html", headers=PAGE_HEADERS)

    async def artifact_frame(request: Request) -> Response:
        return HTMLResponse(ARTIFACT_SHELL, headers={
            "Content-Security-Policy": ARTIFACT_POLICY, "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer", "Cache-Control": "no-cache"})

    async def refused(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestError)  # the handler of RequestError only
        return JSONResponse({"error": str(exc)}, status_code=exc.status)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        try:
            yield
        finally:
            await host.close_all()

    app = Starlette(
        routes=[
            Route("/", index),
            Route("/artifact", artifact_frame),
            Route("/api/health", health),
            Route("/api/sessions", list_sessions, methods=["GET"]),
            Route("/api/sessions", open_session, methods=["POST"]),
            Route("/api/sessions/{id}", close_session, methods=["DELETE"]),
            Route("/api/sessions/{id}/export", export),
            Route("/api/session-files", delete_file, methods=["DELETE"]),
            WebSocketRoute("/api/sessions/{id}/rpc", rpc_socket),
            *settings_routes(host),
            *file_routes(host),
            Mount("/assets", StaticFiles(directory=PAGE)),
        ],
        exception_handlers={RequestError: refused},
        lifespan=lifespan,
    )
    return Guard(app, token=token, host=bind_host)


async def _read(websocket: WebSocket, served, commands) -> None:
    """The client's frames, each a command (or a dialog's answer) of the session."""
    CURRENT.set(served)  # this task's, inherited by the command tasks it starts
    try:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text")
            if text is None and message.get("bytes") is not None:
                text = message["bytes"].decode("utf-8", "replace")
            if text is not None:
                served.rpc.dispatch(text, commands)
    except WebSocketDisconnect:
        return
