"""Where an overlay (``ctx.ui.custom(..., overlay=True)``) lands: pi-tui's overlay options
and their layout, and the handle a plugin gets to hide, show and focus one.

``overlay_options`` (a dict, or a function returning one, asked once when the overlay
opens) takes pi-tui's keys in snake_case (pi's camelCase is accepted too):

- ``width`` (columns or ``"50%"`` of the terminal; default ``min(80, room)``), ``min_width``,
  ``max_height`` (rows or a percentage; longer components are cut);
- ``anchor``: ``center`` (default), ``top-left``, ``top-center``, ``top-right``,
  ``left-center``, ``right-center``, ``bottom-left``, ``bottom-center``, ``bottom-right``;
- ``row`` / ``col``: a cell, or a percentage of the room left (``"0%"`` top or left,
  ``"100%"`` bottom or right), instead of the anchor; ``offset_x`` / ``offset_y`` move it;
- ``margin``: rows and columns kept free at the edges (a number, or
  ``{"top", "right", "bottom", "left"}``);
- ``visible(columns, rows)``: asked at every redraw, the overlay shows only while it is true;
- ``non_capturing``: the overlay does not take the keys.

The layout is pi-tui's ``resolveOverlayLayout``, so a row or column means the same
terminal cell as in pi: while an overlay shows, the chat is drawn as tall as the terminal.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from attrs import define, field

ANCHORS = ("center", "top-left", "top-right", "bottom-left", "bottom-right", "top-center", "bottom-center",
           "left-center", "right-center")
_KEYS = {"width": "width", "minWidth": "min_width", "min_width": "min_width", "maxHeight": "max_height",
         "max_height": "max_height", "anchor": "anchor", "offsetX": "offset_x", "offset_x": "offset_x",
         "offsetY": "offset_y", "offset_y": "offset_y", "row": "row", "col": "col", "margin": "margin",
         "visible": "visible", "nonCapturing": "non_capturing", "non_capturing": "non_capturing"}
_PERCENT = re.compile(r"^(\d+(?:\.\d+)?)%$")


@define
class OverlayOptions:
    width: int | str | None = None
    min_width: int | None = None
    max_height: int | str | None = None
    anchor: str = "center"
    offset_x: int = 0
    offset_y: int = 0
    row: int | str | None = None
    col: int | str | None = None
    #: (top, right, bottom, left)
    margin: tuple[int, int, int, int] = (0, 0, 0, 0)
    visible: Callable[[int, int], bool] | None = None
    non_capturing: bool = False


def _size(name: str, value: Any) -> int | str | None:
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    if isinstance(value, str) and _PERCENT.match(value):
        return value
    raise ValueError(f'overlay_options: {name} must be a number of cells or a percentage like "50%", not {value!r}')


def _number(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"overlay_options: {name} must be a number, not {value!r}")
    return int(value)


def parse_options(raw: Any) -> OverlayOptions:
    """``overlay_options`` as given to ``custom()``; ValueError says what is wrong."""
    if raw is None:
        return OverlayOptions()
    if isinstance(raw, OverlayOptions):
        return raw
    if not isinstance(raw, dict):
        raise ValueError(f"overlay_options must be a dict (or a function returning one), not {type(raw).__name__}")
    unknown = [k for k in raw if k not in _KEYS]
    if unknown:
        raise ValueError(f"overlay_options: unknown {', '.join(map(repr, unknown))}; "
                         f"known: {', '.join(sorted(set(_KEYS.values())))}")
    given = {_KEYS[k]: v for k, v in raw.items() if v is not None}
    anchor = given.get("anchor", "center")
    if anchor not in ANCHORS:
        raise ValueError(f"overlay_options: anchor {anchor!r} is not one of {', '.join(ANCHORS)}")
    margin = given.get("margin", 0)
    if isinstance(margin, dict):
        margin = tuple(max(0, _number(f"margin.{side}", margin.get(side, 0)))
                       for side in ("top", "right", "bottom", "left"))
    else:
        margin = (max(0, _number("margin", margin)),) * 4
    visible = given.get("visible")
    if visible is not None and not callable(visible):
        raise ValueError("overlay_options: visible must be a function of (columns, rows)")
    return OverlayOptions(
        width=_size("width", given.get("width")),
        min_width=_number("min_width", given["min_width"]) if "min_width" in given else None,
        max_height=_size("max_height", given.get("max_height")), anchor=anchor,
        offset_x=_number("offset_x", given.get("offset_x", 0)), offset_y=_number("offset_y", given.get("offset_y", 0)),
        row=_size("row", given.get("row")), col=_size("col", given.get("col")), margin=margin, visible=visible,
        non_capturing=bool(given.get("non_capturing", False)))


def _cells(value: int | str | None, reference: int) -> int | None:
    if isinstance(value, str):
        return int(reference * float(value[:-1]) / 100)
    return value


#: Per anchor: where it sits in the rows and in the columns (near edge, middle, far edge).
_PLACES = {"center": ("middle", "middle"), "top-left": ("near", "near"), "top-center": ("near", "middle"),
           "top-right": ("near", "far"), "left-center": ("middle", "near"), "right-center": ("middle", "far"),
           "bottom-left": ("far", "near"), "bottom-center": ("far", "middle"), "bottom-right": ("far", "far")}


def _anchored(place: str, size: int, room: int, start: int) -> int:
    if place == "near":
        return start
    if place == "far":
        return start + room - size
    return start + (room - size) // 2


@define
class Placement:
    width: int
    row: int
    col: int
    max_height: int | None


def resolve_layout(options: OverlayOptions, height: int, columns: int, rows: int) -> Placement:
    """pi-tui's overlay layout: the width, the cell of the top-left corner, the most rows."""
    top, right, bottom, left = options.margin
    room_w, room_h = max(1, columns - left - right), max(1, rows - top - bottom)
    width = _cells(options.width, columns)
    width = min(80, room_w) if width is None else width
    if options.min_width is not None:
        width = max(width, options.min_width)
    width = max(1, min(width, room_w))
    max_height = _cells(options.max_height, rows)
    if max_height is not None:
        max_height = max(1, min(max_height, room_h))
    shown = min(height, max_height) if max_height is not None else height
    if isinstance(options.row, str):
        row = top + int(max(0, room_h - shown) * float(options.row[:-1]) / 100)
    elif options.row is not None:
        row = options.row
    else:
        row = _anchored(_PLACES[options.anchor][0], shown, room_h, top)
    if isinstance(options.col, str):
        col = left + int(max(0, room_w - width) * float(options.col[:-1]) / 100)
    elif options.col is not None:
        col = options.col
    else:
        col = _anchored(_PLACES[options.anchor][1], width, room_w, left)
    row = max(top, min(row + options.offset_y, rows - bottom - shown))
    col = max(left, min(col + options.offset_x, columns - right - width))
    return Placement(width, row, col, max_height)


@define(eq=False)
class Overlay:
    """One open overlay: the plugin's dialog, where it goes, and its state."""

    dialog: Any
    options: OverlayOptions
    focus_order: int
    hidden: bool = False
    removed: bool = False
    #: What the last redraw drew (the component's lines at its width, cut to its height).
    lines: list[str] = field(factory=list)
    float: Any = None

    def visible(self, columns: int, rows: int) -> bool:
        if self.hidden or self.removed:
            return False
        if self.options.visible is None:
            return True
        try:
            return bool(self.options.visible(columns, rows))
        except Exception:
            return False

    @property
    def capturing(self) -> bool:
        return not self.options.non_capturing


class OverlayHandle:
    """What ``on_handle`` receives (pi-tui's ``OverlayHandle``): ``hide()`` takes the
    overlay away for good (``custom()`` still waits for ``done``), ``set_hidden(bool)``
    hides or shows it again, ``focus()`` brings it to the front with the keys,
    ``unfocus()`` gives the keys back; ``is_hidden()``, ``is_focused()``."""

    def __init__(self, host: Any, overlay: Overlay) -> None:
        self._host, self._overlay = host, overlay

    def hide(self) -> None:
        self._host.remove_overlay(self._overlay)

    def set_hidden(self, hidden: bool) -> None:
        self._host.set_overlay_hidden(self._overlay, bool(hidden))

    def is_hidden(self) -> bool:
        return self._overlay.hidden

    def focus(self) -> None:
        self._host.focus_overlay(self._overlay)

    def unfocus(self) -> None:
        self._host.unfocus_overlay(self._overlay)

    def is_focused(self) -> bool:
        return self._host.focused_overlay is self._overlay


class OverlayStack:
    """The open overlays of the chat, drawn over it as pi-tui composites them: each at its
    place (:func:`resolve_layout`), the most recently focused on top. The newest visible
    capturing one has the keys unless another was focused.

    While one shows, the chat is drawn as tall as the terminal, with the chat's last
    lines behind the overlays (as pi composites them over the chat); the app reprints the
    scrollback when the first shows, when a message is finished behind them, and when the
    last goes."""

    def __init__(self, on_change: Callable[[], None]) -> None:
        self.entries: list[Overlay] = []
        self._waiting: list[Overlay] = []  # until done(), hidden for good or not
        self.focused_overlay: Overlay | None = None
        self._counter = 0
        self._on_change = on_change
        self.floats: list = []
        self.showing = False  # any overlay was drawn at the last redraw

    # ------------------------------------------------------------ opening and closing

    async def show(self, dialog: Any, options: OverlayOptions, on_handle: Callable | None = None) -> Any:
        from prompt_toolkit.layout import Float

        from pi_plugins.interactive.components import component_window

        self._counter += 1
        entry = Overlay(dialog, options, self._counter)
        # every overlay can take the keys (a non-capturing one when its handle focuses it)
        window = component_window(dialog.component, dialog._key, lines=lambda width: entry.lines,
                                  on_mouse=dialog.mouse)
        dialog.focus_target = dialog.container = window
        entry.float = Float(window, top=0, left=0, width=1, height=1)
        self.entries.append(entry)
        self._waiting.append(entry)
        if entry.capturing and entry.visible(*_size_now()):
            self.focused_overlay = entry
        self._on_change()
        if on_handle is not None:
            on_handle(OverlayHandle(self, entry))
        try:
            return await dialog.future
        finally:
            self._waiting.remove(entry)
            self.remove_overlay(entry)

    def remove_overlay(self, entry: Overlay) -> None:
        if entry not in self.entries:
            return
        self.entries.remove(entry)
        entry.removed = True
        if self.focused_overlay is entry:
            self.focused_overlay = self._topmost()
        self._on_change()

    def set_overlay_hidden(self, entry: Overlay, hidden: bool) -> None:
        if entry.hidden == hidden or entry.removed:
            return
        entry.hidden = hidden
        if hidden and self.focused_overlay is entry:
            self.focused_overlay = self._topmost()
        elif not hidden and entry.capturing and entry.visible(*_size_now()):
            self._counter += 1
            entry.focus_order = self._counter
            self.focused_overlay = entry
        self._on_change()

    def focus_overlay(self, entry: Overlay) -> None:
        if entry.removed or not entry.visible(*_size_now()):
            return
        self._counter += 1
        entry.focus_order = self._counter
        self.focused_overlay = entry
        self._on_change()

    def unfocus_overlay(self, entry: Overlay) -> None:
        if self.focused_overlay is entry:
            top = self._topmost()
            self.focused_overlay = top if top is not entry else None
            self._on_change()

    def _topmost(self) -> Overlay | None:
        """The newest visible overlay that takes keys (pi-tui's ``getTopmostVisibleOverlay``)."""
        size = _size_now()
        for entry in reversed(self.entries):
            if entry.capturing and entry.visible(*size):
                return entry
        return None

    def cancel_all(self) -> None:
        """The chat ends: every ``custom()`` still waiting returns None."""
        for entry in list(self._waiting):
            entry.dialog.done(None)

    # ------------------------------------------------------------ drawing

    def lay_out(self, columns: int, rows: int) -> bool:
        """Before a redraw: each visible overlay's lines and place; the floats in front
        order. A focused overlay that stopped being visible gives the keys on (as pi-tui
        does when the next key comes). True while any overlay shows."""
        from pi_plugins.interactive.components import component_lines

        shown = [e for e in self.entries if e.visible(columns, rows)]
        if self.focused_overlay is not None and self.focused_overlay not in shown:
            self.focused_overlay = self._topmost()
            self._on_change()
        for entry in shown:
            first = resolve_layout(entry.options, 0, columns, rows)
            lines = component_lines(entry.dialog.component, first.width)
            lines = lines[:min(first.max_height or len(lines), rows)]
            place = resolve_layout(entry.options, len(lines), columns, rows)
            entry.lines = lines
            entry.float.top, entry.float.left = place.row, place.col  # the chat fills the terminal
            entry.float.width, entry.float.height = place.width, max(len(lines), 1)
        floats = [e.float for e in sorted(shown, key=lambda e: e.focus_order)]
        if floats != self.floats:  # a window just joined the layout: it may take the keys now
            self.floats[:] = floats
            self._on_change()
        self.showing = bool(shown)
        return self.showing


def _size_now() -> tuple[int, int]:
    from prompt_toolkit.application import get_app

    try:
        size = get_app().output.get_size()
        return size.columns, size.rows
    except Exception:
        return 80, 24
