"""Search in the fullscreen transcript (``tui.altScreen.search``): a box at the top right
where the query is typed; every match in the rendered transcript is underlined, the
selected one shown in reverse video and scrolled into view; ``searchNext`` and
``searchPrevious`` move between them and ``searchClose`` closes the box (pi 1.6).

Matching is case-insensitive on the lines' plain text, the text the user sees. The
transcript paints lazily (:mod:`.lazy_lines`), so a new query first lists the pieces not
painted yet that may hold it (by their source text) and paints them a slice at a time,
in the key's handler and before each frame, recounting as they come; the counter shows
``…`` until all are painted. A match found stays the current one while rows move.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Iterator
from typing import TYPE_CHECKING

from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.layout import Float, HSplit, VSplit, Window
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.layout.dimension import Dimension

from pi_plugins.interactive.keys import UnbindableKey, key_sequences
from pi_plugins.interactive.lazy_lines import search_words

if TYPE_CHECKING:
    from pi_plugins.interactive.lazy_lines import Piece
    from pi_plugins.interactive.transcript_view import TranscriptView

BOX_WIDTH = 40
MATCH_STYLE = "class:search-match underline"
CURRENT_STYLE = "class:search-match.current reverse bold"
SLICE_SECONDS = 0.012  # painting for the search, per key or frame


class TranscriptSearch:
    def __init__(self, view: TranscriptView) -> None:
        self.view = view
        self.open = False
        self.buffer = Buffer(multiline=False, on_text_changed=lambda _buffer: self._typed())
        self.matches: list[tuple[int, int, int]] = []  # (row, start, end), top to bottom
        self.current = -1
        self._current_key: tuple | None = None  # the current match, by where it is painted
        self._by_row: dict[int, list[tuple[int, int]]] = {}
        self._counted: tuple | None = None
        self._piece_matches: dict[int, tuple[Piece, list[tuple[int, int, int]]]] = {}
        self._piece_matches_for = ""
        self._pending: list[Piece] = []  # pieces still to paint for the query, last first
        self._pending_for: tuple | None = None
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
        self.work()
        self._find(select=not self.matches)
        tui.invalidate()

    def close(self) -> None:
        self.open = False
        self.view.tui.layout.refocus()

    def step(self, direction: int) -> None:
        self.work()
        self._find(select=False)
        if not self.matches:
            return
        self.current = (self.current + direction) % len(self.matches)
        self._current_key = self._key(self.matches[self.current])
        self._show_current()

    def _typed(self) -> None:
        self.work()
        self._find(select=True)

    # ---------------------------------------------------------------- painting for it

    def work(self, budget: float = SLICE_SECONDS) -> bool:
        """Paint, for about ``budget`` seconds, pieces the query may match in (those
        nearest the end first); True while some are left (and a frame is asked for)."""
        lazy = self.view.lazy
        query = self.buffer.text.lower()
        wanted = (query, self.view._changes, len(lazy.pieces))
        if wanted != self._pending_for:
            self._pending_for = wanted
            words = search_words(query)
            self._pending = [piece for piece in lazy.pieces
                             if piece.lines is None and piece.may_contain(words)] if query else []
        deadline = time.perf_counter() + budget
        while self._pending and time.perf_counter() < deadline:
            piece = self._pending.pop()
            lazy.paint(piece)
            if piece.lines is None:  # split into paragraphs: those that may hold it join
                self._pending_for = None
                return self.work(max(deadline - time.perf_counter(), 0.0))
        if self._pending:
            self.view.tui.invalidate()
        return bool(self._pending)

    @property
    def searching(self) -> bool:
        """Pieces that may hold the query are still to be painted (and counted)."""
        return bool(self._pending)

    def _find_kept(self) -> int | None:
        """Where the current match is in the new count, if it is still there."""
        if self._current_key is None:
            return None
        lazy = self.view.lazy
        where, offset, start = self._current_key
        if where == "live":
            row = lazy.count + offset
        else:
            index = lazy.index(where)
            if index is None:
                return None
            row = lazy.start(index) + offset
        found = bisect_left(self.matches, (row, start, -1))
        return found if found < len(self.matches) and self.matches[found][:2] == (row, start) else None

    def _key(self, match: tuple[int, int, int]) -> tuple:
        row, start, _ = match
        lazy = self.view.lazy
        if row < lazy.count:
            index, offset = lazy.locate(row)
            return (lazy.pieces[index], offset, start)
        return ("live", row - lazy.count, start)

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
            if self._piece_matches_for != query:
                self._piece_matches, self._piece_matches_for = {}, query
            for first, piece in self.view.lazy.painted_pieces():
                found = self._piece_matches.get(id(piece))
                if found is None or found[0] is not piece:  # counted once a piece, per query
                    found = self._piece_matches[id(piece)] = (piece, list(_find_in(piece.plain, query)))
                for offset, start, end in found[1]:
                    self.matches.append((first + offset, start, end))
            live = self.view.lazy.count
            self.matches += [(live + row, start, end) for row, start, end in _find_in(self.view.live_plain, query)]
            for row, start, end in self.matches:
                self._by_row.setdefault(row, []).append((start, end))
        kept = None if select else self._find_kept()
        if not self.matches:
            self.current = -1
        elif kept is not None:
            self.current = kept
        elif select or self.current >= len(self.matches):
            bottom = self.view.first_row() + self.view.height
            above = [i for i, (row, _, _) in enumerate(self.matches) if row < bottom]
            self.current = above[-1] if above else 0
            self._current_key = self._key(self.matches[self.current])
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
        more = "…" if self._pending else ""
        return f" {self.current + 1}/{len(self.matches)}{more} " if self.matches else f" 0/0{more} "

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


def _find_in(lines: list[str], query: str) -> Iterator[tuple[int, int, int]]:
    """(line, start, end) of every case-insensitive match of ``query`` (lower case)."""
    for index, text in enumerate(lines):
        lowered = text.lower()
        start = lowered.find(query)
        while start >= 0:
            yield index, start, start + len(query)
            start = lowered.find(query, start + len(query))


def _label(key: str) -> str:
    """``shift+enter`` → ``Shift+Enter``, as pi's hints spell keys."""
    return "+".join(part[:1].upper() + part[1:] for part in key.split("+"))
