"""Mouse events for plugin components, as pi 1.6's fullscreen mode routes them: a component
with ``handle_mouse(event)`` gets each event over it as a :class:`ComponentMouseEvent`
(zero-based cells within the component) and answers with a dict, pi-tui's
``TuiMouseEventResult``: ``handled`` (the chat does nothing more with it), ``render``
(draw again; by default after a press, click, drag or wheel, not after a move or
release). A press and release on the same cell is followed by a ``click``. Regular mode
leaves the mouse to the terminal, which owns its scrollback, so nothing arrives there.
"""

from __future__ import annotations

from typing import Any

from attrs import frozen
from prompt_toolkit.mouse_events import MouseButton, MouseEvent, MouseEventType, MouseModifier

_BUTTONS = {MouseButton.LEFT: "left", MouseButton.MIDDLE: "middle", MouseButton.RIGHT: "right"}
_RENDERED_BY_DEFAULT = ("press", "click", "drag", "wheel")


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


class MouseRouter:
    """Turns prompt_toolkit's mouse events over a component's window into its events."""

    def __init__(self, component: Any, on_error, invalidate) -> None:
        self.component, self.on_error, self.invalidate = component, on_error, invalidate
        self._pressed_at: tuple[int, int] | None = None

    def wants_mouse(self) -> bool:
        return callable(getattr(self.component, "handle_mouse", None))

    def __call__(self, event: MouseEvent, width: int, height: int) -> Any:
        if not self.wants_mouse():
            return NotImplemented
        kind, button = _kind(event)
        if kind is None:
            return NotImplemented
        x, y = event.position.x, event.position.y
        modifiers = {"shift": MouseModifier.SHIFT in event.modifiers, "alt": MouseModifier.ALT in event.modifiers,
                     "ctrl": MouseModifier.CONTROL in event.modifiers}
        delta = {"wheel_up": -1, "wheel_down": 1}.get(kind)
        events = [ComponentMouseEvent("wheel" if delta else kind, button, x, y, width, height, **modifiers,
                                      wheel_delta=delta)]
        if kind == "press":
            self._pressed_at = (x, y)
        elif kind == "release":
            if self._pressed_at == (x, y):
                events.append(ComponentMouseEvent("click", button, x, y, width, height, **modifiers, click_count=1))
            self._pressed_at = None
        handled = render = False
        for one in events:
            try:
                answer = self.component.handle_mouse(one)
            except Exception as exc:  # a broken handler must not take the chat down
                self.on_error(exc)
                return None
            answer = answer if isinstance(answer, dict) else {}
            handled = handled or bool(answer.get("handled") or answer.get("capture") or answer.get("focus"))
            render = render or bool(answer.get("render", one.type in _RENDERED_BY_DEFAULT))
        if render:
            self.invalidate()
        return None if handled else NotImplemented


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
