"""Plugin components drawn in some rows of a chat window get the mouse and, when they ask,
the keys, as pi 1.6's fullscreen mode routes them to every component (docs/tui.md "Handle
mouse input"): widgets below the editor and a custom footer (:class:`ComponentRows`, a
window of their own), and widgets above the editor, drawn at the end of the fullscreen
transcript (:mod:`.transcript_view`).

The rows each component took in the last frame say which one is under the pointer, and
the event reaches it in its own cells (:class:`.component_mouse.MouseRouter`: handled,
capture, focus, render). A ``focus`` answer gives that component the keys (its
``handle_input``), as pi-tui's ``setFocus``, until it is gone or the editor is clicked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prompt_toolkit.data_structures import Point
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import Window
from prompt_toolkit.mouse_events import MouseEvent

from pi_plugins.interactive.component_mouse import MouseRouter
from pi_plugins.interactive.controls import LinesControl

#: What the area shows: (the component, or None for plain lines, and its lines), in order.
Parts = Callable[[int], list[tuple[Any, list[str]]]]
#: (the component, its first row, its rows), as last drawn.
Rows = list[tuple[Any, int, int]]


class PlacedComponents:
    """The components drawn in one window's rows. ``control`` is that window's control: it
    takes the keys (``focusable`` set, :attr:`key_bindings` its bindings) while one of them
    has the focus."""

    def __init__(self, tui: Any) -> None:
        self.tui = tui
        self.control: Any = None
        self.rows: Rows = []
        self._routers: dict[int, MouseRouter] = {}
        self.focused: Any = None
        self.key_bindings = KeyBindings()

        @self.key_bindings.add(Keys.Any)
        def _(event) -> None:
            self._key("".join(press.data for press in event.key_sequence))

    def drawn(self, rows: Rows) -> None:
        """The components in this frame (routers of those gone dropped)."""
        self.rows = rows
        shown = {id(component) for component, _, _ in rows}
        self._routers = {key: router for key, router in self._routers.items() if key in shown}

    def route(self, event: MouseEvent, row: int, width: int) -> Any:
        """The event on ``row`` to the component drawn there; NotImplemented when none is
        there or it does not take the mouse."""
        for component, first, rows in self.rows:
            if first <= row < first + rows:
                inside = MouseEvent(Point(event.position.x, row - first), event.event_type, event.button,
                                    event.modifiers)
                return self._router(component)(inside, width, rows)
        return NotImplemented

    def _router(self, component: Any) -> MouseRouter:
        router = self._routers.get(id(component))
        if router is None or router.component is not component:
            router = MouseRouter(component, self._failed, self.tui.invalidate,
                                 on_focus=lambda: self._focus(component))
            self._routers[id(component)] = router
        return router

    def _focus(self, component: Any) -> None:
        app = self.tui.app
        if app is None or self.control is None:
            return
        self.focused, self.control.focusable = component, True
        try:
            app.layout.focus(self.control)
        except ValueError:  # not on screen
            self._unfocus()
            return
        self._editor_takes_clicks()

    def _unfocus(self) -> None:
        self.focused = None
        if self.control is not None:
            self.control.focusable = False

    def _editor_takes_clicks(self) -> None:
        """A click in the editor gives it the keys back (it never lost them otherwise)."""
        from prompt_toolkit.filters import to_filter

        control = getattr(getattr(self.tui, "editor", None), "control", None)
        if control is not None:  # consulted only while the editor does not have the keys
            control.focus_on_click = to_filter(True)

    def _key(self, data: str) -> None:
        from pi_plugins.interactive.components import handle_key

        component = self.focused
        if component is None or not any(shown is component for shown, _, _ in self.rows):
            self._unfocus()
            app = self.tui.app
            if app is not None:
                app.layout.focus(self.tui.editor)  # the component went: the keys go back
            return
        try:
            handle_key(component, data)
        except Exception as exc:  # a broken handler must not take the chat down
            self._failed(exc, "a key")
        self.tui.invalidate()

    def _failed(self, exc: Exception, what: str = "a mouse event") -> None:
        self.tui.add_text(f"Error: a plugin's component failed on {what}: {exc}", "error")


class ComponentRows:
    """One window of the bottom area drawing ``parts``, some of them components."""

    def __init__(self, tui: Any, parts: Parts) -> None:
        self.parts = parts
        self.placed = PlacedComponents(tui)
        self.control = LinesControl(self._lines, key_bindings=self.placed.key_bindings, on_mouse=self._mouse)
        self.placed.control = self.control
        self.window = Window(self.control, dont_extend_height=True)

    def _lines(self, width: int) -> list[str]:
        lines: list[str] = []
        rows: Rows = []
        for component, part in self.parts(width):
            if component is not None and part:
                rows.append((component, len(lines), len(part)))
            lines += part
        self.placed.drawn(rows)
        return lines

    def _mouse(self, event: MouseEvent, width: int, height: int) -> Any:
        return self.placed.route(event, event.position.y, width)
