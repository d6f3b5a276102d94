"""prompt_toolkit controls that show painted lines (ANSI text) at the window's width."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prompt_toolkit.filters import FilterOrBool, to_filter
from prompt_toolkit.formatted_text import ANSI, StyleAndTextTuples, to_formatted_text
from prompt_toolkit.key_binding import KeyBindingsBase
from prompt_toolkit.layout.controls import UIContent, UIControl
from prompt_toolkit.layout.processors import Processor, Transformation, TransformationInput
from prompt_toolkit.layout.utils import explode_text_fragments

from pi_plugins.interactive.file_links import zero_width_links

_FRAGMENTS: dict[str, StyleAndTextTuples] = {}


def fragments(line: str) -> StyleAndTextTuples:
    """One painted line as prompt_toolkit fragments (memoised: the same lines are drawn
    again and again while the screen redraws)."""
    found = _FRAGMENTS.get(line)
    if found is None:
        if len(_FRAGMENTS) > 20000:
            _FRAGMENTS.clear()
        # an OSC 8 link (a tool's file) passes to the terminal as a zero-width escape
        found = to_formatted_text(ANSI(zero_width_links(line))) if "\x1b" in line else [("", line)]
        _FRAGMENTS[line] = found
    return found


class LinesControl(UIControl):
    """Shows ``get_lines(width)``; the window is as tall as the lines (no wrapping: the
    lines were painted for this width)."""

    def __init__(self, get_lines: Callable[[int], list[str]], *, focusable: bool = False,
                 key_bindings: KeyBindingsBase | None = None,
                 on_mouse: Callable[[Any, int, int], Any] | None = None) -> None:
        self.get_lines = get_lines
        self.focusable = focusable
        self.key_bindings = key_bindings
        #: (prompt_toolkit's mouse event, width, height) -> None or NotImplemented
        self.on_mouse = on_mouse
        self._last: tuple[int, list[str]] | None = None
        self._size = (0, 0)  # what was drawn last, for the mouse

    def _lines(self, width: int) -> list[str]:
        lines = self.get_lines(width)
        self._last = (width, lines)
        return lines

    def is_focusable(self) -> bool:
        return self.focusable

    def preferred_width(self, max_available_width: int) -> int | None:
        return None

    def preferred_height(self, width, max_available_height, wrap_lines, get_line_prefix) -> int | None:
        return len(self._lines(width))

    def create_content(self, width: int, height: int | None) -> UIContent:
        lines = self._last[1] if self._last and self._last[0] == width else self._lines(width)
        self._last = None
        painted = [fragments(line) for line in lines]
        self._size = (width, len(painted))
        return UIContent(get_line=lambda i: painted[i] if i < len(painted) else [],
                         line_count=len(painted), show_cursor=False)

    def get_key_bindings(self) -> KeyBindingsBase | None:
        return self.key_bindings

    def mouse_handler(self, mouse_event) -> Any:
        if self.on_mouse is None:
            return NotImplemented
        return self.on_mouse(mouse_event, *self._size)


class DrawnCursor(Processor):
    """The editor's cursor drawn as a reverse-video cell, for when the terminal's own is
    hidden (pi's default; ``showHardwareCursor`` brings the terminal's back)."""

    def __init__(self, enabled: FilterOrBool = True) -> None:
        self.enabled = to_filter(enabled)

    def apply_transformation(self, ti: TransformationInput) -> Transformation:
        document = ti.document
        if ti.lineno != document.cursor_position_row or not self.enabled():
            return Transformation(ti.fragments)
        fragments = explode_text_fragments(ti.fragments)
        column = ti.source_to_display(document.cursor_position_col)
        if column < len(fragments):
            fragment = fragments[column]
            if len(fragment) == 3:  # with a mouse handler
                fragments[column] = (f"{fragment[0]} reverse", fragment[1], fragment[2])
            else:
                fragments[column] = (f"{fragment[0]} reverse", fragment[1])
        else:
            fragments.append(("reverse", " "))
        return Transformation(fragments)
