"""Search in the fullscreen transcript (``tui.altScreen.search``): a box at the top right
where the query is typed; every match in the rendered transcript is underlined, the
selected one shown in reverse video and scrolled into view; ``searchNext`` and
``searchPrevious`` move between them and ``searchClose`` closes the box (pi 1.6).

Matching is case-insensitive on the lines' plain text, the text the user sees.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.layout import Float, HSplit, VSplit, Window
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.layout.dimension import Dimension

from pi_plugins.interactive.keys import UnbindableKey, key_sequences

if TYPE_CHECKING:
    from pi_plugins.interactive.transcript_view import TranscriptView

BOX_WIDTH = 40
MATCH_STYLE = "class:search-match underline"
CURRENT_STYLE = "class:search-match.current reverse bold"


class TranscriptSearch:
    def __init__(self, view: TranscriptView) -> None:
        self.view = view
        self.open = False
        self.buffer = Buffer(multiline=False, on_text_changed=lambda _buffer: self._find(select=True))
        self.matches: list[tuple[int, int, int]] = []  # (row, start, end), top to bottom
        self.current = -1
        self._by_row: dict[int, list[tuple[int, int]]] = {}
        self._counted: tuple[str, int] | None = None
        self.window = Window(BufferControl(self.buffer, key_bindings=self._keys()), height=1,
                             style="class:transcript-search")
        self._float: Float | None = None

    # ---------------------------------------------------------------- what the keys do

    def start(self) -> None:
        """Open the box (again: with the last query, selected matches kept)."""
        tui = self.view.tui
        self.open = True
        if tui.app is not None:
            try:
                tui.app.layout.focus(self.window)
            except ValueError:
                pass
        self._find(select=not self.matches)
        tui.invalidate()

    def close(self) -> None:
        self.open = False
        self.view.tui.layout.refocus()

    def step(self, direction: int) -> None:
        self._find(select=False)
        if not self.matches:
            return
        self.current = (self.current + direction) % len(self.matches)
        self._show_current()

    # ---------------------------------------------------------------- finding

    def _find(self, select: bool) -> None:
        """Count the matches again when the query or the transcript changed; ``select``:
        choose the last match at or above the bottom of the view."""
        query = self.buffer.text.lower()
        key = (query, self.view.version)
        if self._counted == key and not select:
            return
        self._counted = key
        self.matches, self._by_row = [], {}
        if query:
            for row, text in enumerate(self.view.plain_lines()):
                lowered = text.lower()
                start = lowered.find(query)
                while start >= 0:
                    self.matches.append((row, start, start + len(query)))
                    self._by_row.setdefault(row, []).append((start, start + len(query)))
                    start = lowered.find(query, start + len(query))
        if not self.matches:
            self.current = -1
        elif select or self.current >= len(self.matches):
            bottom = self.view.first_row() + self.view.height
            above = [i for i, (row, _, _) in enumerate(self.matches) if row < bottom]
            self.current = above[-1] if above else 0
            self._show_current()
        self.view.tui.invalidate()

    def _show_current(self) -> None:
        if 0 <= self.current < len(self.matches):
            self.view.reveal(self.matches[self.current][0])
        self.view.tui.invalidate()

    def marks(self, row: int) -> list[tuple[int, int, str]]:
        """The row's matches as (start, end, style), while the box is open."""
        if not self.open or not self._by_row:
            return []
        self._find(select=False)
        found = self._by_row.get(row)
        if not found:
            return []
        current = self.matches[self.current] if 0 <= self.current < len(self.matches) else None
        return [(start, end, CURRENT_STYLE if current == (row, start, end) else MATCH_STYLE)
                for start, end in found]

    # ---------------------------------------------------------------- the box

    def counter(self) -> str:
        self._find(select=False)
        if not self.buffer.text:
            return ""
        return f" {self.current + 1}/{len(self.matches)} " if self.matches else " 0/0 "

    def float(self) -> Float:
        """The box, a float at the top right of the transcript while search is open."""
        if self._float is None:
            keys = self.view.tui.keybindings
            hint = f" ↑ {_label(keys.hint('tui.altScreen.searchPrevious', first=True))} · " \
                   f"↓ {_label(keys.hint('tui.altScreen.searchNext', first=True))} "
            box = HSplit([
                Window(FormattedTextControl(lambda: [("class:transcript-search.border", "┌" + "─" * (BOX_WIDTH - 2) + "┐")]),
                       height=1),
                VSplit([Window(FormattedTextControl([("class:transcript-search.border", "│ ")]), width=2),
                        self.window,
                        Window(FormattedTextControl(lambda: [("class:transcript-search.count fg:ansibrightblack", self.counter())]),
                               width=Dimension(max=12), dont_extend_width=True),
                        Window(FormattedTextControl([("class:transcript-search.border", "│")]), width=1)]),
                Window(FormattedTextControl(lambda: [("class:transcript-search.border", "└" + "─" * max(
                    BOX_WIDTH - 3 - len(hint), 0)), ("class:transcript-search.hint fg:ansibrightblack", hint), ("class:transcript-search.border", "─┘")]),
                       height=1),
            ], width=BOX_WIDTH)
            from prompt_toolkit.layout import ConditionalContainer

            self._float = Float(ConditionalContainer(box, filter=Condition(lambda: self.open)), top=0, right=1)
        return self._float

    def _keys(self) -> KeyBindings:
        """In the box: next, previous and close, as keybindings.json says."""
        kb = KeyBindings()
        keybindings = self.view.tui.keybindings
        for action, handler in (("tui.altScreen.searchNext", lambda event: self.step(1)),
                                ("tui.altScreen.searchPrevious", lambda event: self.step(-1)),
                                ("tui.altScreen.searchClose", lambda event: self.close())):
            for spec in keybindings.keys(action):
                try:
                    for keys in key_sequences(spec):
                        kb.add(*keys, eager=True)(handler)
                except UnbindableKey:
                    continue
        return kb


def _label(key: str) -> str:
    """``shift+enter`` → ``Shift+Enter``, as pi's hints spell keys."""
    return "+".join(part[:1].upper() + part[1:] for part in key.split("+"))
