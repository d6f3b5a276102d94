"""Mouse selection in the fullscreen transcript, and copying text out of the chat.

In fullscreen mode the chat owns the mouse, so the terminal's own selection is gone: a
drag with the primary button selects the transcript's text (shown in reverse video), and
on release it is copied when ``fullscreenCopyOnSelect`` is on (pi 1.6's default); with it
off, ``app.message.copy`` (Ctrl+X) copies the selection. Ctrl+X with nothing selected
copies the last answer, as ``/copy`` does.

Copies go to the platform's clipboard tool (:mod:`.clipboard`); OSC 52 goes to the
terminal when no tool took the text, over SSH, or when ``PI_CLIPBOARD_OSC52=1`` asks for
it (pi 1.6's rule).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from prompt_toolkit.mouse_events import MouseEventType
from prompt_toolkit.utils import get_cwidth

if TYPE_CHECKING:
    from pi_plugins.interactive.transcript_view import TranscriptView

SELECTED_STYLE = "class:selected reverse"
Point = tuple[int, int]  # (row, character index) in the transcript's plain text


class Selection:
    def __init__(self, view: TranscriptView) -> None:
        self.view = view
        self.anchor: Point | None = None
        self.head: Point | None = None
        self.dragging = False

    def clear(self) -> None:
        self.anchor = self.head = None
        self.dragging = False

    def moved(self, old_end: int, delta: int) -> None:
        """Rows from ``old_end`` on moved by ``delta`` (a piece above painted taller)."""
        if self.anchor is not None and self.anchor[0] >= old_end:
            self.anchor = (self.anchor[0] + delta, self.anchor[1])
        if self.head is not None and self.head[0] >= old_end:
            self.head = (self.head[0] + delta, self.head[1])

    def span(self) -> tuple[Point, Point] | None:
        if self.anchor is None or self.head is None or self.anchor == self.head:
            return None
        return (self.anchor, self.head) if self.anchor <= self.head else (self.head, self.anchor)

    def mouse(self, kind: MouseEventType, row: int, x: int) -> None:
        """A primary-button press, drag or release at screen column ``x`` of ``row``."""
        point = (row, _index_at(self.view.plain(row), x))
        if kind == MouseEventType.MOUSE_DOWN:
            self.anchor, self.head, self.dragging = point, point, True
        elif kind == MouseEventType.MOUSE_MOVE and self.dragging:
            self.head = point
            self._follow_edge(row)
        elif kind == MouseEventType.MOUSE_UP and self.anchor is not None:
            self.head, self.dragging = point, False
            text = self.text()
            tui = self.view.tui
            if text and tui.settings.get("fullscreenCopyOnSelect", True) is not False:
                tui.spawn(copy_text(tui, text, "Copied selection to clipboard"))

    def _follow_edge(self, row: int) -> None:
        """A drag past the top or bottom row scrolls the transcript along."""
        first = self.view.first_row()
        if row <= first:
            self.view.scroll_by(-1)
        elif row >= first + self.view.height - 1:
            self.view.scroll_by(1)

    def text(self) -> str:
        """The selected text, line by line, without trailing spaces."""
        span = self.span()
        if span is None:
            return ""
        (first_row, first_index), (last_row, last_index) = span
        lines = []
        for row in range(first_row, last_row + 1):
            text = self.view.plain(row)
            start = first_index if row == first_row else 0
            end = last_index if row == last_row else len(text)
            lines.append(text[start:end].rstrip())
        return "\n".join(lines).strip("\n")

    def marks(self, row: int, length: int) -> list[tuple[int, int, str]]:
        span = self.span()
        if span is None or not span[0][0] <= row <= span[1][0]:
            return []
        start = span[0][1] if row == span[0][0] else 0
        end = span[1][1] if row == span[1][0] else length
        return [(start, end, SELECTED_STYLE)] if end > start else []


def _index_at(text: str, x: int) -> int:
    """The character at screen column ``x`` of a line (wide characters take two)."""
    column = 0
    for index, char in enumerate(text):
        width = get_cwidth(char)
        if column + width > x:
            return index
        column += width
    return len(text)  # past the line's end: its end


def osc52_wanted(env=os.environ) -> bool:
    """OSC 52 besides a clipboard tool: over SSH, or when ``PI_CLIPBOARD_OSC52=1``."""
    return env.get("PI_CLIPBOARD_OSC52") == "1" or bool(env.get("SSH_CONNECTION") or env.get("SSH_TTY"))


async def copy_text(tui, text: str, done: str) -> bool:
    """Put ``text`` on the clipboard (a tool, and OSC 52 where pi 1.6 sends it); say so."""
    from pi_plugins.interactive.clipboard import copy_with_tools, osc52

    tool = await copy_with_tools(text)
    sequence = osc52(text) if tool is None or osc52_wanted() else None
    if sequence is not None:
        tui.write_to_terminal(sequence)
    if tool is None and sequence is None:
        tui.add_text("Could not copy: no clipboard tool, and the text is too long for OSC 52", "error")
        return False
    tui.add_text(done, "dim")
    return True


async def copy_message(tui) -> None:
    """``app.message.copy`` (Ctrl+X): the selection when copy-on-select is off and text is
    selected, else the last answer (as ``/copy``)."""
    from pi_plugins.interactive import commands

    view = getattr(tui.scrollback, "selection", None)
    selected = view.text() if view is not None else ""
    if selected and tui.settings.get("fullscreenCopyOnSelect", True) is False:
        await copy_text(tui, selected, "Copied selection to clipboard")
        return
    await commands.copy(tui, "")
