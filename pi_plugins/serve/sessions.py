"""The live sessions of ``pi serve``: each a harness on its own session file, driven by
pi's RPC commands (:class:`pi_plugins.rpc.session.RpcSession`) and fanned out to every
attached client.

Every frame that answers no command gets ``seq``, an integer that increases per session,
and is kept in a replay buffer from the start of the current run (so at least the
current or the last run is held); a client attaching with ``since=N`` first gets the held
frames after N, then the live ones, with nothing lost or doubled between the two (both
happen in one step of the event loop). A response goes only to the client that sent the
command.

The frames are ``pi --mode rpc``'s (pi 1.6's shape): a ``message_update`` carries its
delta, and a client builds the answer from ``message_start`` on. Past ``HELD_BYTES`` a
session lets go of the ``message_update`` frames of messages that have ended first (their
``message_end`` holds the whole message), so a client attaching mid-answer still gets
every delta of the message that is streaming, and every other event of the run.

Plugins, settings and the model registry are loaded once and shared by every session, as
``pi batch`` shares them (:class:`pi_plugins.batch.runner.BatchEnvironment`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections import deque
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from pi_plugins.rpc.protocol import dumps
from pi_plugins.serve.browser_tools import BrowserTools

log = logging.getLogger("pi.serve")

#: The extension-UI methods that wait for an answer.
DIALOGS = frozenset({"confirm", "select", "input", "editor"})
#: The replay buffer's size per session before the ended messages' updates go.
HELD_BYTES = 4 * 1024 * 1024
#: What a client may have unsent, in characters of JSON (its bytes, for ASCII), before it
#: is dropped with 1013 (it reconnects with ``since``): four replay buffers, so a client
#: attaching with ``since=0`` always fits.
CLIENT_BACKLOG_BYTES = 4 * HELD_BYTES

#: The session whose client's command is running (set by the WebSocket's reader; the
#: command tasks and what they start inherit it), so a plugin's error goes to its session.
CURRENT: ContextVar[ServedSession | None] = ContextVar("pi_serve_session", default=None)


class RequestError(Exception):
    """A request the server refuses; ``status`` is its HTTP status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Client:
    """One attached WebSocket: its frames in order, written by its own task, so a slow
    client never holds up the session or the other clients. What it has unsent is
    bounded in bytes: past ``limit`` the frames are let go and :attr:`behind` is set
    (the connection closes with 1013); one frame alone may exceed it, so a big answer
    to ``get_messages`` still goes to a client that keeps up."""

    def __init__(self, send_text: Callable[[str], Any], limit: int = CLIENT_BACKLOG_BYTES) -> None:
        self._send_text = send_text
        self.limit = limit
        self._frames: deque[str] = deque()
        self.queued = 0
        self._wake = asyncio.Event()
        self._stopped = False
        #: Set when it fell ``limit`` behind: nothing more is queued for it.
        self.behind = asyncio.Event()

    @property
    def dropped(self) -> bool:
        return self.behind.is_set()

    def put(self, text: str) -> None:
        if self.dropped or self._stopped:
            return
        if self._frames and self.queued + len(text) > self.limit:
            self._frames.clear()  # it can come back with since=<last seq it saw>
            self.queued = 0
            self.behind.set()
            self._wake.set()
            return
        self._frames.append(text)
        self.queued += len(text)
        self._wake.set()

    def stop(self) -> None:
        """No more frames: the pump ends once it has sent those queued."""
        self._stopped = True
        self._wake.set()

    async def pump(self) -> None:
        while True:
            while self._frames:
                text = self._frames.popleft()
                self.queued -= len(text)
                await self._send_text(text)
            if self._stopped or self.dropped:
                return
            self._wake.clear()
            await self._wake.wait()


class ServedSession:
    """One live session: its harness, its RPC side, its clients and held frames."""

    def __init__(self, app, path: Path | None) -> None:
        from pi_plugins.rpc.session import RpcSession

        self.app = app
        self.harness = app.harness
        self.path = path
        #: Counted from the clock in microseconds, so after a restart of the server a
        #: client's old ``since`` is below every new seq and it gets all that is held.
        self.seq = time.time_ns() // 1000
        #: (seq, frame, id of the dialog it asks if it is one, the frame's type)
        self.held: deque[tuple[int, str, str | None, str | None]] = deque()
        self.held_bytes = 0
        self.clients: set[Client] = set()
        self.rpc = RpcSession(app, self.emit, full_events=False)  # as pi --mode rpc sends them
        self.rpc.open(plugin_errors=False)  # the plugins are shared: see SessionHost
        self.browser_tools = BrowserTools(self)  # javascript_repl, run by an attached page

    @property
    def id(self) -> str:
        return self.harness.session.id

    def emit(self, value: dict) -> None:
        """A frame for every client, numbered and held for replay."""
        kind = value.get("type")
        if kind == "agent_start":
            self.held.clear()  # a new run: the held frames start with it
            self.held_bytes = 0
            self.browser_tools.keep_offered()  # a reload collected the tools anew
        self.seq += 1
        value["seq"] = self.seq
        text = dumps(value).decode("utf-8")
        dialog: str | None = (value.get("id") if kind == "extension_ui_request"
                              and value.get("method") in DIALOGS else None)
        self.held.append((self.seq, text, dialog, kind))
        self.held_bytes += len(text)
        if self.held_bytes > HELD_BYTES:
            self._let_go()
        for client in self.clients:
            client.put(text)

    def _let_go(self) -> None:
        """Down to three quarters of ``HELD_BYTES``: the oldest message_update frames of
        ended messages first, then (a run of huge tool outputs) the oldest of any kind."""
        excess = self.held_bytes - HELD_BYTES * 3 // 4
        ends = [i for i, entry in enumerate(self.held) if entry[3] == "message_end"]
        last_end = ends[-1] if ends else -1  # updates before it belong to ended messages
        kept: deque = deque()
        for i, entry in enumerate(self.held):
            if excess > 0 and i < last_end and entry[3] == "message_update":
                excess -= len(entry[1])
                self.held_bytes -= len(entry[1])
            else:
                kept.append(entry)
        while excess > 0 and len(kept) > 1:
            dropped = kept.popleft()
            excess -= len(dropped[1])
            self.held_bytes -= len(dropped[1])
        self.held = kept

    def attach(self, client: Client, since: int | None) -> Callable[[dict], None]:
        """Add ``client``, replaying the held frames after ``since`` first; returns where
        its commands' output goes (responses to it, anything else to everyone)."""
        if since is not None:
            for seq, text, dialog, _ in self.held:
                # a dialog answered (or timed out) is no longer held: nobody must answer it again
                if seq > since and (dialog is None or self.rpc.ui.waiting(dialog)):
                    client.put(text)
        self.clients.add(client)

        def send(value: dict) -> None:
            if value.get("type") == "response":
                client.put(dumps(value).decode("utf-8"))
            else:
                self.emit(value)

        return send

    def detach(self, client: Client) -> None:
        self.clients.discard(client)
        self.browser_tools.withdraw(client)

    async def close(self) -> None:
        """Abort its run, answer its dialogs, stop its processes, close its file."""
        for client in list(self.clients):
            client.stop()
        self.clients.clear()
        self.browser_tools.close()
        await self.rpc.shut_down()
        self.rpc.close()
        await self.harness.close()


class SessionHost:
    """Every live session of one server, and the session files it may open: those under
    its sessions folder, nothing outside it."""

    def __init__(self, env, root: Path, flat: bool, cwd: str | None = None) -> None:
        self.env = env
        #: The folder of a new session that names none: where ``pi serve`` runs.
        self.cwd = cwd or os.getcwd()
        #: ``<agent dir>/sessions`` (a folder per project), or the one folder that
        #: ``PI_CODING_AGENT_SESSION_DIR`` / ``sessionDir`` names (``flat``).
        self.root = root
        self.flat = flat
        self.live: dict[str, ServedSession] = {}
        self._opening = asyncio.Lock()
        #: The settings checks under way (a package install): serving never waits for them.
        self.checks: set[asyncio.Task] = set()
        env.plugins.error_listeners.append(self._plugin_error)

    def _plugin_error(self, error) -> None:
        """One listener for the shared plugins: the error goes to the session it came from."""
        served = CURRENT.get()
        if served is not None and self.live.get(served.id) is served:
            served.rpc.plugin_error(error)

    @classmethod
    async def load(cls, *, cwd: str | None = None, approve: bool | None = None) -> SessionHost:
        """``approve``: ``-a`` (True) / ``-na`` (False), project trust for every session's
        folder; None: each folder's saved decision (a server cannot ask)."""
        from pi_core.app.settings import Settings
        from pi_plugins.batch.runner import BatchEnvironment
        from pi_plugins.cli.run_args import RunArgs
        from pi_plugins.cli.sessions import sessions_dir

        cwd = cwd or os.getcwd()
        env = await BatchEnvironment.load(cwd=cwd, approve=approve)
        chosen = sessions_dir(RunArgs(), Settings.load(cwd, env.agent_dir, project_trusted=approve))
        root = Path(chosen) if chosen is not None else env.agent_dir / "sessions"
        return cls(env, Path(os.path.realpath(root)), chosen is not None, cwd)

    def check_settings(self, cwd: str) -> None:
        """Install what the folder's settings list and the disk lacks (pi packages) in the
        background, once per settings: the sessions opened meanwhile start without them,
        those opened after have their resources; what happened is said on stderr."""
        import sys

        from pi_core.app.assembly import check_settings_in_background

        started = time.monotonic()

        def done(problems: list[str]) -> None:
            for problem in problems:
                print(f"pi serve: warning: {problem}", file=sys.stderr, flush=True)
            print(f"pi serve: start-up checks for {cwd} done in {time.monotonic() - started:.1f} s "
                  f"({len(problems)} warning{'' if len(problems) == 1 else 's'}); sessions opened "
                  "from now on have the packages they installed", file=sys.stderr, flush=True)

        task = check_settings_in_background(self.env.plugins, self.env.settings_for(cwd), done)
        if task is not None:
            self.checks.add(task)
            task.add_done_callback(self.checks.discard)

    # ------------------------------------------------------------ files

    def folder_for(self, cwd: str) -> Path:
        from pi_core.session.locations import session_dir_for

        return self.root if self.flat else session_dir_for(cwd, self.root)

    def inside(self, path: str | os.PathLike) -> Path:
        """``path`` resolved (links too), if it is a session file under the sessions
        folder; else :class:`RequestError` 403."""
        resolved = Path(os.path.realpath(path))
        if not resolved.is_relative_to(self.root) or resolved == self.root or resolved.suffix != ".jsonl":
            raise RequestError(403, f"{path}: not a session file in the sessions folder {self.root}")
        return resolved

    def find(self, reference: str, cwd: str) -> Path:
        """A session named by path or id prefix, under the sessions folder."""
        from pi_plugins.session_listing.listing import find_session

        if "/" in reference or "\\" in reference or reference.endswith(".jsonl") or ".." in reference:
            path = reference if os.path.isabs(reference) else os.path.join(cwd, reference)
            found = self.inside(path)
            if not found.is_file():
                raise RequestError(404, f"{reference}: no such session file")
            return found
        hit = find_session(reference, cwd, self.folder_for(cwd), self.root)
        if hit is None:
            raise RequestError(404, f"{reference}: no session with that id")
        return self.inside(hit.path)

    def listing(self, cwd: str | None) -> list[dict]:
        from pi_plugins.session_listing.listing import list_all_sessions, list_sessions

        if cwd is not None:
            infos = [i for i in list_sessions(self.folder_for(cwd)) if not self.flat or i.cwd == cwd]
        else:
            infos = list_sessions(self.root) if self.flat else list_all_sessions(self.root)
        rows, seen = [], set()
        for info in infos:
            live = self.live.get(info.id)
            seen.add(info.id)
            rows.append({"id": info.id, "path": str(info.path), "cwd": info.cwd, "name": info.name,
                         "modified": info.modified.isoformat().replace("+00:00", "Z"),
                         "messageCount": info.message_count, "live": live is not None,
                         "firstMessage": " ".join(info.first_message.split())})
        for served in self.live.values():  # new ones whose file appears with their first answer
            session = served.harness.session
            if served.id not in seen and (cwd is None or session.cwd == cwd):
                rows.insert(0, {"id": served.id, "path": str(session.file), "cwd": session.cwd,
                                "name": session.name, "modified": session.header.timestamp,
                                "messageCount": len(served.harness.messages), "live": True,
                                "firstMessage": _first_prompt(served.harness.messages)})
        return rows

    # ------------------------------------------------------------ live sessions

    def get(self, session_id: str) -> ServedSession:
        served = self.live.get(session_id)
        if served is None:
            raise RequestError(404, f"no live session {session_id!r}")
        return served

    async def open(self, cwd: str | None, model: str | None = None, session: str | None = None) -> ServedSession:
        """The session ``session`` (path or id) live, or a new one for ``cwd`` (by
        default the folder ``pi serve`` runs in)."""
        from pi_core.session import Session
        from pi_core.session.reader import SessionError

        cwd = cwd or self.cwd
        if not os.path.isabs(cwd) or not os.path.isdir(cwd):
            raise RequestError(400, f"cwd {cwd!r} is not an absolute path to a folder")
        cwd = os.path.realpath(cwd)
        async with self._opening:  # one opening at a time: the same file is never opened twice
            if session is not None:
                path = self.find(session, cwd)
                for served in self.live.values():
                    if served.path == path:
                        return served
                try:  # in its own folder (the header's), as long as that still exists
                    opened = Session.open(path, path.parent)
                except SessionError as exc:
                    raise RequestError(409, str(exc)) from None
                if os.path.isdir(opened.cwd):
                    cwd = opened.cwd
            else:
                opened = Session.create(cwd, self.folder_for(cwd))
            try:
                assert opened.file is not None  # opened from, or made in, a folder
                served = ServedSession(await self._app(opened, cwd, model), Path(opened.file))
            except BaseException:
                opened.close()
                raise
            self.live[served.id] = served
            return served

    async def _app(self, session, cwd: str, model_pattern: str | None):
        """A started harness on ``session`` with what ``pi`` gives it, as the RPC mode's
        :class:`pi_plugins.cli.app.App`."""
        from pi_core.app.assembly import assemble
        from pi_core.protocol.options import ResourceOptions
        from pi_plugins.batch.runner import BatchError
        from pi_plugins.cli.app import App
        from pi_plugins.cli.run_args import RunArgs
        from pi_plugins.cli.wiring import scoped_models

        env = self.env
        self.check_settings(cwd)  # a folder first served: its packages install meanwhile
        settings = env.settings_for(cwd)
        try:
            model, level = await env.model_for(model_pattern, settings)
        except BatchError as exc:
            if model_pattern is not None:
                raise RequestError(400, str(exc)) from None
            # as ``pi --mode rpc``: no model configured still serves (a prompt says why)
            from pi_core.protocol.model import unknown_model

            model, level = unknown_model(), None
        registry = env.registry
        harness = await assemble(
            plugins=env.plugins, session=session, model=model, registry=registry, thinking_level=level,
            model_is_explicit=model_pattern is not None, cwd=cwd, settings=settings,
            options=ResourceOptions(), agent_dir=env.agent_dir,
            scoped_models=scoped_models(settings.get("enabledModels"), registry),
            reason="resume" if len(session) else "startup")
        return App(RunArgs(mode="rpc"), harness, registry, env.plugins)

    async def delete_file(self, path: str) -> None:
        """Delete the session file ``path`` (under the sessions folder only), closing it
        first if it is live."""
        resolved = self.inside(path)
        if not resolved.is_file():
            raise RequestError(404, f"{path}: no such session file")
        for served in list(self.live.values()):
            if served.path == resolved:
                await self.close(served.id)
        resolved.unlink()

    async def close(self, session_id: str) -> None:
        served = self.get(session_id)
        del self.live[session_id]
        await served.close()

    async def close_all(self) -> None:
        served, self.live = list(self.live.values()), {}
        await asyncio.gather(*(s.close() for s in served), return_exceptions=True)


def _first_prompt(messages) -> str:
    """The first user message's text, as ``pi -r`` names a session without a name."""
    from pi_core.protocol.messages import UserMessage
    from pi_plugins.session_listing.listing import NO_MESSAGES

    for message in messages:
        if isinstance(message, UserMessage):
            text = message.content if isinstance(message.content, str) else "".join(
                getattr(block, "text", "") for block in message.content)
            return " ".join(text.split()) or NO_MESSAGES
    return NO_MESSAGES
