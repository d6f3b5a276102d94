"""The RPC mode's life on stdin and stdout: read commands, hand each to the
transport-free :class:`~pi_plugins.rpc.session.RpcSession` (which runs it as its own
task and turns events into protocol lines), write what it says, and shut down cleanly on
EOF or SIGTERM.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys

from pi_plugins.rpc.protocol import LineReader, Output
from pi_plugins.rpc.session import RpcSession


class RpcServer:
    def __init__(self, app) -> None:
        self.app = app
        self.harness = app.harness
        self.exit_code = 0
        self.output = Output(_binary(app.stdout), on_closed=self._client_gone)
        self.session = RpcSession(app, self.output.send, full_events=app.args.events == "full")  # pi 1.6: deltas only, unless asked
        self.ui = self.session.ui
        self.commands = self.session.commands(self.output.send)
        self.reader: LineReader | None = None

    async def serve(self) -> int:
        self.reader = LineReader(_binary(self.app.stdin))
        self.session.open()
        stop_signals = self._catch_signals()
        try:
            while (raw := await self.reader.next()) is not None:
                self.session.dispatch(raw, self.commands)
        finally:
            await self.session.shut_down()
            for signum in stop_signals:
                asyncio.get_running_loop().remove_signal_handler(signum)
            self.session.close()
        return self.exit_code

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
