"""A cancellation signal shared by one agent run, its provider request and its tools."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


class AbortSignal:
    """Set once by :meth:`abort`; long-running work checks ``aborted`` or awaits
    :meth:`wait`, and ``on_abort`` callbacks (killing a process group, say) run at once."""

    def __init__(self) -> None:
        self.aborted = False
        self.reason: str | None = None
        self._callbacks: list[Callable[[], None]] = []
        self._event: asyncio.Event | None = None

    def abort(self, reason: str = "aborted") -> None:
        if self.aborted:
            return
        self.aborted, self.reason = True, reason
        if self._event is not None:
            self._event.set()
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def on_abort(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Run ``callback`` when aborted (now, if already); returns a function that removes it."""
        if self.aborted:
            callback()
            return lambda: None
        self._callbacks.append(callback)
        return lambda: self._callbacks.remove(callback) if callback in self._callbacks else None

    async def wait(self) -> None:
        if self._event is None:
            self._event = asyncio.Event()
            if self.aborted:
                self._event.set()
        await self._event.wait()
