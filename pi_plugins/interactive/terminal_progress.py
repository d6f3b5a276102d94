"""pi 1.6's terminal progress (``terminal.showTerminalProgress``, off by default): while
the agent works or a compaction runs, OSC 9;4;3 (an indeterminate progress bar in the
terminal's tab, as Windows Terminal, Ghostty and others draw it), sent again every second
so the terminal does not time it out; OSC 9;4;0 clears it when the work ends."""

from __future__ import annotations

import asyncio
from typing import Any

ACTIVE = "\x1b]9;4;3\x07"
CLEAR = "\x1b]9;4;0\x07"
KEEPALIVE_SECONDS = 1.0

_STARTS = ("agent_start", "turn_start", "compaction_start")
_ENDS = ("agent_end", "compaction_end")


class TerminalProgress:
    def __init__(self, tui: Any) -> None:
        self.tui = tui
        self.active = False
        self._keepalive: asyncio.Task | None = None

    def enabled(self) -> bool:
        return self.tui.settings.get("terminal.showTerminalProgress", False) is True

    def on_event(self, event: Any) -> None:
        if event.type in _STARTS and self.enabled():
            self.set(True)
        elif event.type in _ENDS and (self.active or self.enabled()):
            if event.type == "compaction_end" and self.tui.run_task is not None:
                return  # a compaction within a run: the run's progress goes on
            self.set(False)

    def set(self, active: bool) -> None:
        self.tui.write_to_terminal(ACTIVE if active else CLEAR)
        self.active = active
        if active and (self._keepalive is None or self._keepalive.done()):
            self._keepalive = self.tui.spawn(self._keep_alive())
        elif not active and self._keepalive is not None:
            self._keepalive.cancel()
            self._keepalive = None

    async def _keep_alive(self) -> None:
        while self.active:
            await asyncio.sleep(KEEPALIVE_SECONDS)
            if self.active:
                self.tui.write_to_terminal(ACTIVE)
