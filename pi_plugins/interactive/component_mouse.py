"""Mouse events for plugin components, as pi 1.6's fullscreen mode routes them: a component
with ``handle_mouse(event)`` gets each event over it as a :class:`ComponentMouseEvent`
(zero-based cells within the component) and answers with a dict, pi-tui's
``TuiMouseEventResult``: ``handled`` (the chat does nothing more with it), ``capture``
and ``focus`` (both imply handled; ``focus`` gives the component the keys), ``render``
(draw again; by default after a press, click, drag or wheel, not after a move or
release). ``screen_x``/``screen_y`` are the terminal's own cells.

As 1.6: a component that handled a press holds the gesture: the drag and the release
reach it wherever they happen, in its own cells (negative or past its size outside it).
A release where the press was, with no move between, is followed by a ``click`` whose
``click_count`` says which of a double or triple click it is (same cell within 500 ms).
Regular mode leaves the mouse to the terminal, which owns its scrollback, so nothing
arrives there.
"""

from __future__ import annotations

import time
from typing import Any

from attrs import frozen
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.keys import Keys
from prompt_toolkit.mouse_events import MouseButton, MouseEvent, MouseEventType, MouseModifier

_BUTTONS = {MouseButton.LEFT: "left", MouseButton.MIDDLE: "middle", MouseButton.RIGHT: "right"}
_RENDERED_BY_DEFAULT = ("press", "click", "drag", "wheel")
DOUBLE_CLICK_SECONDS = 0.5  # pi-tui's DOUBLE_CLICK_INTERVAL_MS

#: The terminal cell of the mouse event being handled (0-based), set by :func:`mouse_bindings`.
screen_position: tuple[int, int] = (0, 0)
#: The router holding the current gesture (a handled press, until its release), if any.
held: MouseRouter | None = None
_last_click: tuple[float, int, object, tuple[int, int]] | None = None  # time, count, router, cell


@frozen
class ComponentMouseEvent:
    """``type``: press, release, move, drag, click or wheel; ``button``: left, middle,
    right or none; ``x``, ``y``: the cell within the component; ``width``, ``height``: its
    size; ``wheel_delta``: rows, negative up (wheel only); ``click_count`` (click only)."""

    type: str
    button: str
    x: int
    y: int
    width: int
    height: int
    shift: bool = False
    alt: bool = False
    ctrl: bool = False
    wheel_delta: int | None = None
    click_count: int | None = None
    screen_x: int = 0
    screen_y: int = 0


def _click_count(router: object, cell: tuple[int, int]) -> int:
    global _last_click
    now = time.monotonic()
    previous = _last_click
    count = 1
    if previous is not None and now - previous[0] <= DOUBLE_CLICK_SECONDS and previous[2] is router \
            and previous[3] == cell:
        count = previous[1] % 3 + 1
    _last_click = (now, count, router, cell)
    return count


class MouseRouter:
    """Turns prompt_toolkit's mouse events over a component's window into its events."""

    def __init__(self, component: Any, on_error, invalidate, on_focus=None) -> None:
        self.component, self.on_error, self.invalidate = component, on_error, invalidate
        self.on_focus = on_focus  # gives the component the keys (a ``focus`` answer)
        self._pressed_at: tuple[int, int] | None = None  # the press's terminal cell
        self._moved = False
        self._origin = (0, 0)  # the component's top-left terminal cell
        self._size = (1, 1)

    def wants_mouse(self) -> bool:
        return callable(getattr(self.component, "handle_mouse", None))

    def __call__(self, event: MouseEvent, width: int, height: int) -> Any:
        """An event over the component (prompt_toolkit's, in its cells)."""
        if not self.wants_mouse():
            return NotImplemented
        kind, button = _kind(event)
        if kind is None:
            return NotImplemented
        x, y = event.position.x, event.position.y
        screen_x, screen_y = screen_position
        self._origin, self._size = (screen_x - x, screen_y - y), (width, height)
        return self._dispatch(kind, button, event)

    def follow(self, event: MouseEvent) -> Any:
        """An event of the gesture this component holds, anywhere on the screen
        (``event.position``: the terminal's cell)."""
        kind, button = _kind(event)
        if kind is None:
            return None
        return self._dispatch(kind, button, event)

    def _dispatch(self, kind: str, button: str, event: MouseEvent) -> Any:
        global held
        screen_x, screen_y = screen_position
        x, y = screen_x - self._origin[0], screen_y - self._origin[1]
        width, height = self._size
        cell = (screen_x, screen_y)
        shift, alt = MouseModifier.SHIFT in event.modifiers, MouseModifier.ALT in event.modifiers
        ctrl = MouseModifier.CONTROL in event.modifiers
        delta = {"wheel_up": -1, "wheel_down": 1}.get(kind)

        def make(type_: str, wheel_delta: int | None = None, click_count: int | None = None) -> ComponentMouseEvent:
            return ComponentMouseEvent(type_, button, x, y, width, height, shift, alt, ctrl, wheel_delta,
                                       click_count, screen_x, screen_y)

        events = [make("wheel" if delta else kind, wheel_delta=delta)]
        if held is self and self._pressed_at is not None and cell != self._pressed_at:
            self._moved = True
        if kind == "release" and held is self:
            if not self._moved and self._pressed_at == cell:
                events.append(make("click", click_count=_click_count(self, cell)))
            held, self._pressed_at = None, None
        handled = render = False
        for one in events:
            try:
                answer = self.component.handle_mouse(one)
            except Exception as exc:  # a broken handler must not take the chat down
                held = None if held is self else held
                self.on_error(exc)
                return None
            answer = answer if isinstance(answer, dict) else {}
            took = bool(answer.get("handled") or answer.get("capture") or answer.get("focus"))
            handled = handled or took
            if answer.get("focus") and self.on_focus is not None:
                self.on_focus()
            if one.type == "press" and took:  # the gesture is this component's until the release
                held, self._pressed_at, self._moved = self, cell, False
            elif answer.get("capture") and one.type not in ("release", "click"):
                held = self
            render = render or bool(answer.get("render", one.type in _RENDERED_BY_DEFAULT))
        if render:
            self.invalidate()
        return None if handled or held is self else NotImplemented


def mouse_bindings() -> KeyBindings:
    """The chat's own reading of the terminal's mouse reports: each goes where
    prompt_toolkit sends it, noting the terminal cell (``screen_x``/``screen_y``); while a
    component holds the gesture, to that component wherever it happens."""
    from prompt_toolkit.key_binding.bindings.mouse import load_mouse_bindings

    default = next(b.handler for b in load_mouse_bindings().bindings if b.keys == (Keys.Vt100MouseEvent,))
    bindings = KeyBindings()

    @bindings.add(Keys.Vt100MouseEvent, eager=True)
    def _(event) -> Any:
        renderer = event.app.renderer
        grid = renderer.mouse_handlers.mouse_handlers
        renderer.mouse_handlers.mouse_handlers = _Cells(grid, held)
        try:
            return default(event)
        finally:
            renderer.mouse_handlers.mouse_handlers = grid

    return bindings


class _Cells:
    """prompt_toolkit's grid of mouse handlers, seen through: the cell is noted before its
    handler runs; a held gesture's router takes every cell."""

    def __init__(self, grid: Any, holder: MouseRouter | None) -> None:
        self.grid, self.holder = grid, holder

    def __getitem__(self, y: int) -> Any:
        grid, holder = self.grid, self.holder

        class Row:
            def __getitem__(self, x: int) -> Any:
                def handle(event: MouseEvent) -> Any:
                    global screen_position
                    screen_position = (x, y)
                    return holder.follow(event) if holder is not None else grid[y][x](event)

                return handle

        return Row()


def _kind(event: MouseEvent) -> tuple[str | None, str]:
    button = _BUTTONS.get(event.button, "none")
    kind = event.event_type
    if kind == MouseEventType.SCROLL_UP:
        return "wheel_up", "none"
    if kind == MouseEventType.SCROLL_DOWN:
        return "wheel_down", "none"
    if kind == MouseEventType.MOUSE_DOWN:
        return "press", button
    if kind == MouseEventType.MOUSE_UP:
        return "release", button
    if kind == MouseEventType.MOUSE_MOVE:
        return ("drag" if button != "none" else "move"), button
    return None, button
