"""Widgets above the editor get the mouse in fullscreen, as pi 1.6 routes it to every
component (docs/tui.md "Handle mouse input").

In fullscreen those widgets are drawn inside the scrolling transcript, at the end of its
live part (:meth:`.LiveArea.content_lines` notes the rows each component took); an event
on one of those rows reaches the component in its own cells
(:class:`.component_mouse.MouseRouter`: handled, capture, render), and anywhere else the
transcript's own scrolling and selection take it. Unlike the widgets below the editor
(:mod:`.component_rows`), a ``focus`` answer does not move the keys: the transcript's
window never takes them.
"""

from __future__ import annotations

from typing import Any

from prompt_toolkit.data_structures import Point
from prompt_toolkit.mouse_events import MouseEvent

from pi_plugins.interactive.component_mouse import MouseRouter

#: (the component, its first row within the live lines, its rows), as last drawn.
Rows = list[tuple[Any, int, int]]


class TranscriptComponents:
    def __init__(self, tui: Any) -> None:
        self.tui = tui
        self.rows: Rows = []
        self._routers: dict[int, MouseRouter] = {}

    def drawn(self, rows: Rows) -> None:
        """The components in the live lines of this frame (routers of those gone dropped)."""
        self.rows = rows
        shown = {id(component) for component, _, _ in rows}
        self._routers = {key: router for key, router in self._routers.items() if key in shown}

    def route(self, event: MouseEvent, live_row: int, width: int) -> Any:
        """The event on row ``live_row`` of the live lines to the component drawn there;
        NotImplemented when none is there or it does not take the mouse."""
        for component, first, rows in self.rows:
            if first <= live_row < first + rows:
                inside = MouseEvent(Point(event.position.x, live_row - first), event.event_type, event.button,
                                    event.modifiers)
                return self._router(component)(inside, width, rows)
        return NotImplemented

    def _router(self, component: Any) -> MouseRouter:
        router = self._routers.get(id(component))
        if router is None or router.component is not component:
            router = MouseRouter(component, self._failed, self.tui.invalidate)
            self._routers[id(component)] = router
        return router

    def _failed(self, exc: Exception) -> None:
        self.tui.add_text(f"Error: a plugin's component failed on a mouse event: {exc}", "error")
