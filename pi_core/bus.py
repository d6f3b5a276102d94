"""An event bus for plugin-to-plugin messages (``ctx.events``)."""

from __future__ import annotations

import inspect
import logging
from collections import defaultdict
from collections.abc import Callable
from typing import Any

log = logging.getLogger("pi.bus")


class EventBus:
    def __init__(self) -> None:
        self._handlers: dict[str, list[Callable[[Any], Any]]] = defaultdict(list)

    def on(self, channel: str, handler: Callable[[Any], Any]) -> Callable[[], None]:
        """Subscribe; returns a function that unsubscribes."""
        self._handlers[channel].append(handler)
        return lambda: self._handlers[channel].remove(handler)

    async def emit(self, channel: str, data: Any = None) -> None:
        """Deliver ``data`` to every handler of ``channel``; a handler that raises is
        logged and the others still run."""
        for handler in list(self._handlers.get(channel, ())):
            try:
                result = handler(data)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                log.warning("event bus handler for %r failed", channel, exc_info=True)
