"""The RPC mode's life: read commands from stdin, run each as its own task (so a
``prompt``, a ``bash`` or a plugin's dialog never stops the next command from being
read), write responses and events to stdout, and shut down cleanly on EOF or SIGTERM.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys

from pi_plugins.print_mode import event_json
from pi_plugins.rpc.commands import Commands
from pi_plugins.rpc.protocol import CommandError, LineReader, Output, failure, parse_line
from pi_plugins.rpc.ui import RpcUI

log = logging.getLogger("pi.rpc")

#: How long commands still running at shutdown get to finish once the run is aborted.
SHUTDOWN_GRACE = 5.0


class RpcServer:
    def __init__(self, app) -> None:
        self.app = app
        self.harness = app.harness
        self.full_events = app.args.events == "full"  # pi 1.6: deltas only, unless asked
        self.exit_code = 0
        self.output = Output(_binary(app.stdout), on_closed=self._client_gone)
        self.ui = RpcUI(self.output.send)
        self.commands = Commands(app, self.output.send)
        self.reader: LineReader | None = None
        self.tasks: set[asyncio.Task] = set()

    async def serve(self) -> int:
        self.reader = LineReader(_binary(self.app.stdin))
        self.harness.ctx.ui = self.ui
        unsubscribe = self.harness.subscribe(self._event)
        self.app.plugins.error_listeners.append(self._plugin_error)
        stop_signals = self._catch_signals()
        try:
            while (raw := await self.reader.next()) is not None:
                self._dispatch(raw)
        finally:
            await self._shut_down()
            for signum in stop_signals:
                asyncio.get_running_loop().remove_signal_handler(signum)
            self.app.plugins.error_listeners.remove(self._plugin_error)
            unsubscribe()
        return self.exit_code

    # ------------------------------------------------------------ input

    def _dispatch(self, raw: bytes) -> None:
        if not raw.strip():
            return
        try:
            command = parse_line(raw)
        except CommandError as exc:
            self.output.send(failure(None, str(exc), "parse"))
            return
        if command.get("type") == "extension_ui_response":
            self.ui.resolve(command)
            return
        task = asyncio.create_task(self.commands.handle(command))
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
        self.output.send(value)

    def _plugin_error(self, error) -> None:
        info = next((i for i in self.app.plugins.infos if i.name == error.plugin), None)
        self.output.send({"type": "extension_error",
                          "extensionPath": info.location if info and info.location else error.plugin,
                          "event": error.hook,
                          "error": str(error.error) or type(error.error).__name__})

    # ------------------------------------------------------------ the end

    def _catch_signals(self) -> list[int]:
        loop = asyncio.get_running_loop()
        caught = []
        for signum, code in ((signal.SIGTERM, 143), (getattr(signal, "SIGHUP", None), 129)):
            if signum is None:
                continue
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signum, self._stop, code)
                caught.append(signum)
        return caught

    def _stop(self, code: int) -> None:
        self.exit_code = code
        if self.reader is not None:
            self.reader.stop()

    def _client_gone(self) -> None:
        """stdout is closed: nobody reads what we say, so stop as on EOF."""
        self._stop(self.exit_code)

    async def _shut_down(self) -> None:
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


def _binary(stream):
    """The byte stream under a text stream (the protocol is UTF-8 whatever the locale)."""
    return getattr(stream, "buffer", stream)


async def run_rpc(app) -> int:
    """``pi --mode rpc``. Anything else that prints goes to stderr while it runs, so the
    protocol stream carries only protocol lines."""
    server = RpcServer(app)
    saved, sys.stdout = sys.stdout, sys.stderr
    try:
        return await server.serve()
    finally:
        sys.stdout = saved
