"""What keeps connections that never finish from locking clients out of ``pi serve``
(uvicorn times out only idle keep-alive connections, not one that never sends its
headers): uvicorn's h11 protocol with

- a request timeout: a request whose headers and body have not all arrived within
  ``request_timeout`` seconds of its start is closed;
- a cap per client address: at most ``max_pending`` connections of one address still
  waiting for their first request (the oldest is closed for a new one, so a real client
  from the same address, loopback is shared by every local client, still gets in), and
  at most ``max_connections`` in all (a new one past it is closed at once).

An attached WebSocket that stops answering is closed by uvicorn's keep-alive ping.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Limits:
    request_timeout: float = 10.0
    max_pending: int = 32
    max_connections: int = 512


def guarded_protocol(limits: Limits) -> type:
    """A protocol class for ``uvicorn.Config(http=...)`` that enforces ``limits``; its
    connections are counted per server (each call makes a new table)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    by_address: dict[str, list[Any]] = defaultdict(list)

    class GuardedH11Protocol(H11Protocol):
        _timer: Any = None
        _upgraded = False

        def connection_made(self, transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            address = self.client[0] if self.client else ""
            mine = by_address[address]
            mine[:] = [p for p in mine if not p.transport.is_closing()]
            if len(mine) >= limits.max_connections:
                transport.abort()
                return
            pending = [p for p in mine if p.scope is None]
            if len(pending) >= limits.max_pending:
                pending[0].transport.abort()  # the oldest that has not said what it wants
                mine.remove(pending[0])
            mine.append(self)
            self._arm()

        def _arm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = self.loop.call_later(limits.request_timeout, self._too_slow)

        def _too_slow(self) -> None:
            self._timer = None
            if self._upgraded or self.transport.is_closing():
                return
            if self.conn.their_state in (h11.IDLE, h11.SEND_BODY):  # headers or body unfinished
                self.transport.abort()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()  # the next request on this connection gets its own time

        def handle_websocket_upgrade(self, event) -> None:
            self._upgraded = True
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            super().handle_websocket_upgrade(event)

        def connection_lost(self, exc) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            super().connection_lost(exc)

    return GuardedH11Protocol
