"""The transport-free half of RPC mode: one harness as pi's RPC protocol.

A transport (stdin/stdout in :mod:`.server`, a WebSocket fan-out in ``pi serve``) gives
``emit`` for the frames that answer no command (events, ``extension_ui_request``,
``extension_error``) and, per client, a :class:`Commands` whose ``send`` carries that
client's responses; :meth:`RpcSession.dispatch` runs each command as its own task, so a
``prompt``, a ``bash`` or a plugin's dialog never stops the next command.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from pi_plugins.print_mode import event_json
from pi_plugins.rpc.commands import Commands
from pi_plugins.rpc.protocol import CommandError, failure, parse_line
from pi_plugins.rpc.ui import RpcUI

log = logging.getLogger("pi.rpc")

#: How long commands still running at shutdown get to finish once the run is aborted.
SHUTDOWN_GRACE = 5.0


class RpcSession:
    def __init__(self, app, emit: Callable[[dict], Any], *, full_events: bool = True) -> None:
        self.app = app
        self.harness = app.harness
        self.emit = emit
        self.full_events = full_events
        self.ui = RpcUI(emit)
        self.tasks: set[asyncio.Task] = set()
        self._unsubscribe: Callable[[], None] | None = None

    def commands(self, send: Callable[[dict], Any]) -> Commands:
        """The commands of one client, its responses written with ``send``."""
        return Commands(self.app, send)

    def open(self, *, plugin_errors: bool = True) -> None:
        """Take over the harness's UI and events, and its plugins' errors unless the
        transport routes those itself (plugins shared by many sessions: it calls
        :meth:`plugin_error` for the session whose run the error came from)."""
        self.harness.set_ui(self.ui)
        self._unsubscribe = self.harness.subscribe(self._event)
        if plugin_errors:
            self.app.plugins.error_listeners.append(self.plugin_error)

    def close(self) -> None:
        if self.plugin_error in self.app.plugins.error_listeners:
            self.app.plugins.error_listeners.remove(self.plugin_error)
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    # ------------------------------------------------------------ input

    def dispatch(self, raw: bytes | str, commands: Commands) -> None:
        """One line (or WebSocket frame) from a client: a dialog's answer resolves it
        (the first answer wins), anything else runs as a command task."""
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogatepass")
        if not raw.strip():
            return
        try:
            command = parse_line(raw)
        except CommandError as exc:
            commands.send(failure(None, str(exc), "parse"))
            return
        if command.get("type") == "extension_ui_response":
            self.ui.resolve(command)
            return
        task = asyncio.create_task(commands.handle(command))
        self.tasks.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("rpc command crashed", exc_info=task.exception())

    # ------------------------------------------------------------ output

    def _event(self, event) -> None:
        value = event_json(event, self.full_events)
        if value["type"] == "tool_execution_update":
            _bash_progress_details(value)
        self.emit(value)

    def plugin_error(self, error) -> None:
        """A plugin's handler raised: pi's ``extension_error`` frame."""
        info = next((i for i in self.app.plugins.infos if i.name == error.plugin), None)
        self.emit({"type": "extension_error",
                   "extensionPath": info.location if info and info.location else error.plugin,
                   "event": error.hook,
                   "error": str(error.error) or type(error.error).__name__})

    # ------------------------------------------------------------ the end

    async def shut_down(self) -> None:
        """Abort the run and the user's shell command, answer open dialogs with their
        defaults, then give the running commands a moment to finish."""
        self.harness.abort()
        self.harness.abort_bash()
        self.ui.cancel_all()
        if self.tasks:
            _, late = await asyncio.wait(set(self.tasks), timeout=SHUTDOWN_GRACE)
            for task in late:
                task.cancel()
            if late:
                await asyncio.wait(late, timeout=1.0)


def _bash_progress_details(value: dict) -> None:
    """pi's bash tool gives each update with output ``details`` (its truncation and
    full-output path, both unset while nothing is cut: ``{}`` on the wire); clients
    that read ``partialResult.details`` find it as they do with pi."""
    partial = value.get("partialResult")
    if value.get("toolName") == "bash" and isinstance(partial, dict) and partial.get("content") \
            and partial.get("details") is None:
        partial["details"] = {}
