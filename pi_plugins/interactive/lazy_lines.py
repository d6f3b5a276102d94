"""The fullscreen transcript's finished blocks, painted only where someone looks.

Painting costs about 15 ms a kilobyte of Markdown, so a resumed 1 MB session painted
whole would keep the first frame waiting half a minute. Instead each finished block
becomes one or more *pieces* (a long answer: one a paragraph, as it was painted while it
streamed; anything else: the whole block), each standing in with a cheap estimate of its
height until a frame shows it, a search may match in it, or the exit prints it. Rows are
counted through the pieces' heights, painted or estimated; when a piece is painted and
its height changes, ``on_resize`` tells the view, which moves what stands below it (the
viewport's top, a selection) by as much, so the text in view does not jump.
"""

from __future__ import annotations

import re
import time
from bisect import bisect_right
from collections.abc import Callable, Generator, Iterator
from itertools import accumulate
from typing import TYPE_CHECKING

from pi_core.protocol.messages import TextContent, ThinkingContent
from pi_plugins.interactive.blocks import (
    AssistantBlock,
    Block,
    UserBlock,
    View,
    paint_paragraph,
    split_paragraphs,
)
from pi_plugins.interactive.paint import block_lines, strip_ansi

if TYPE_CHECKING:
    from pi_plugins.interactive.app import InteractiveApp

#: Answers longer than this are painted paragraph by paragraph; shorter ones whole, as
#: the regular mode prints them.
SPLIT_CHARS = 2500
_MARKUP = re.compile(r"[*_`~\\\[\]<>]")
_WORD = re.compile(r"[a-z0-9]*[a-z][a-z0-9]*")


class Piece:
    """A stretch of a block that paints on its own."""

    __slots__ = ("block", "text", "style", "source", "lines", "plain", "estimate", "prompt", "_searchable",
                 "unsplit", "images")

    def __init__(self, block: Block, text: str | None = None, style: str | None = None,
                 source: str | None = None, unsplit: bool = False) -> None:
        self.block = block
        self.text = text  # a paragraph's Markdown; None: the whole block
        self.style = style
        self.unsplit = unsplit  # a long answer not yet split into its paragraphs
        self.source = text if text is not None else source  # what its letters come from, if known
        self.lines: list[str] | None = None
        self.plain: list[str] = []
        self.estimate = 1
        self.prompt = isinstance(block, UserBlock)  # where a user message starts (jumps)
        self._searchable: str | None = None
        self.images: list[tuple[int, int, str, int]] = []  # (row, rows, sequence, pixels): :mod:`.fullscreen_images`

    @property
    def height(self) -> int:
        return len(self.lines) if self.lines is not None else self.estimate

    def may_contain(self, words: list[str]) -> bool:
        """False only when painting it cannot show every one of ``words`` (lower case):
        Markdown's marks are dropped from the source first (``li**ne**`` shows "line"),
        and a source with entities (``&amp;``) is always painted to be sure."""
        if not words:
            return True
        if self._searchable is None:
            source = self.source
            self._searchable = "&" if source is None or "&" in source else _MARKUP.sub("", source).lower()
        if self._searchable == "&":
            return True
        return all(word in self._searchable for word in words)


def search_words(query: str) -> list[str]:
    """The query's ASCII words with a letter: what a painted match must hold as written."""
    return _WORD.findall(query.lower())


class LazyLines:
    def __init__(self, tui: InteractiveApp, on_resize: Callable[[int, int], None]) -> None:
        self.tui = tui
        self.on_resize = on_resize  # (the piece's old end row, the change in its height)
        self.pieces: list[Piece] = []
        self._starts: list[int] = [0]  # each piece's first row; the last: the row count
        self._index: dict[int, int] = {}  # a piece's place in the list, by its id
        self._index_stale = False
        self._stale = False
        self.painted = 0  # pieces painted since the last clear (tests and the bench read it)
        self._width = 80
        self._unpainted_from = 0  # every piece above this one is painted (idle painting's place)

    def clear(self, width: int) -> None:
        self.pieces, self._starts, self._stale, self.painted, self._width = [], [0], False, 0, width
        self._unpainted_from = 0

    def add(self, block: Block, width: int) -> None:
        """A finished block, as pieces with estimated heights (nothing painted yet)."""
        view, self._width = self.tui.view, width
        if isinstance(block, AssistantBlock):
            source = _answer_source(block, view)
            piece = Piece(block, source=source, unsplit=len(source) > SPLIT_CHARS)
        else:
            piece = Piece(block, source=block.text if isinstance(block, UserBlock) else None)
        piece.estimate = _estimate(piece, width, view.pad)
        self.pieces.append(piece)
        self._stale = True

    def add_paragraph(self, block: Block, text: str, style: str, width: int) -> None:
        """A whole paragraph of an answer still streaming (:mod:`.streamed_paragraphs`)."""
        self._width = width
        piece = Piece(block, text, style, unsplit=len(text) > SPLIT_CHARS and "\n\n" in text)
        piece.estimate = _estimate(piece, width, self.tui.view.pad)
        self.pieces.append(piece)
        self._stale = True

    def drop_last(self, block: Block) -> None:
        """Forget the pieces of ``block`` at the end (its paragraphs while it streamed)."""
        while self.pieces and self.pieces[-1].block is block:
            self.pieces.pop()
            self._stale = True
        self._unpainted_from = min(self._unpainted_from, len(self.pieces))

    def _split(self, index: int) -> None:
        """A long answer becomes its paragraphs (when a part of it is first wanted)."""
        piece = self.pieces[index]
        if piece.text is not None:  # many paragraphs of an answer still streaming
            parts = [Piece(piece.block, text, piece.style) for text in split_paragraphs(piece.text)]
        else:
            parts = [Piece(piece.block, text, style) for text, style in piece.block.paragraphs(self.tui.view)]  # type: ignore[attr-defined]
        for part in parts:
            part.estimate = _estimate(part, self._width, self.tui.view.pad)
        old_end = self.start(index) + piece.estimate
        self.pieces[index:index + 1] = parts
        self._stale = True
        self.on_resize(old_end, sum(part.estimate for part in parts) - piece.estimate)

    # ---------------------------------------------------------------- rows

    def _rows(self) -> list[int]:
        if self._stale:
            self._starts = [0, *accumulate(piece.height for piece in self.pieces)]
            self._stale, self._index_stale = False, True
        return self._starts

    def index(self, piece: Piece) -> int | None:
        self._rows()
        if self._index_stale:  # built only when asked: painting piece after piece needs none
            self._index = {id(piece): i for i, piece in enumerate(self.pieces)}
            self._index_stale = False
        return self._index.get(id(piece))

    @property
    def count(self) -> int:
        return self._rows()[-1]

    def locate(self, row: int) -> tuple[int, int]:
        """(the piece holding ``row``, the row within it)."""
        starts = self._rows()
        index = min(max(bisect_right(starts, row) - 1, 0), max(len(self.pieces) - 1, 0))
        return index, row - starts[index]

    def start(self, index: int) -> int:
        return self._rows()[index]

    def line(self, row: int) -> str:
        index, offset = self.locate(row)
        lines = self.pieces[index].lines if self.pieces else None
        return lines[offset] if lines is not None and 0 <= offset < len(lines) else ""

    def plain(self, row: int) -> str:
        index, offset = self.locate(row)
        piece = self.pieces[index] if self.pieces else None
        return piece.plain[offset] if piece is not None and 0 <= offset < len(piece.plain) else ""

    def prompt_rows(self) -> list[int]:
        """Where each user message's box begins (the blank line above it skipped)."""
        starts = self._rows()
        return [starts[i] + 1 for i, piece in enumerate(self.pieces) if piece.prompt]

    def painted_pieces(self) -> Iterator[tuple[int, Piece]]:
        """(first row, piece) of every painted piece, top to bottom."""
        starts = self._rows()
        for index, piece in enumerate(self.pieces):
            if piece.lines is not None:
                yield starts[index], piece

    # ---------------------------------------------------------------- painting

    def paint(self, piece: Piece) -> None:
        """Paint one piece (if it is not; a long answer is split into its paragraphs
        instead); its height change goes to ``on_resize``."""
        index = self.index(piece)
        if index is None or piece.lines is not None:
            return
        self._paint_at(index, piece)

    def _paint_at(self, index: int, piece: Piece) -> None:
        if piece.unsplit:
            self._split(index)
            return
        tui, width = self.tui, self._width
        if piece.text is None:
            lines = tui.paint(piece.block, width)
            from pi_plugins.interactive.fullscreen_images import reserve

            rows, places = reserve(tui, piece.block, width)  # room for its images, placed after each frame
            if places:
                piece.images = [(len(lines) + row, rows_, sequence, pixels) for row, rows_, sequence, pixels in places]
                lines = lines + rows
        else:
            try:
                lines = paint_paragraph(piece.text, piece.style or "none", tui.painter, width, tui.view)
            except Exception as exc:  # one unpaintable paragraph must not stop the chat
                lines = block_lines(_Broken(exc), tui.painter, width, tui.view)
        old_end = self.start(index) + piece.height
        piece.lines, piece.plain = lines, [strip_ansi(line) for line in lines]
        self._stale = True
        self.painted += 1
        if len(lines) != piece.estimate:
            self.on_resize(old_end, len(lines) - piece.estimate)

    def unpainted_in(self, first: int, last: int) -> Piece | None:
        """The first piece not painted yet among those holding rows ``first`` to ``last``
        (exclusive)."""
        if not self.pieces or last <= first:
            return None
        start, _ = self.locate(max(first, 0))
        end, _ = self.locate(max(last - 1, 0))
        return next((self.pieces[i] for i in range(start, end + 1) if self.pieces[i].lines is None), None)

    def paint_until(self, deadline: float) -> bool:
        """Paint the pieces not painted yet, from the top, until ``time.perf_counter()``
        reaches ``deadline`` (the chat's idle moments, or all of them at exit); True while
        some are left."""
        while self._unpainted_from < len(self.pieces):
            piece = self.pieces[self._unpainted_from]
            if piece.lines is None:
                if time.perf_counter() >= deadline:
                    return True
                self._paint_at(self._unpainted_from, piece)  # a long answer splits: its first paragraph next
                continue
            self._unpainted_from += 1
        return False

    def all_lines(self) -> list[str]:
        """Every finished piece's lines, top to bottom (the exit's transcript)."""
        return [line for lines in self.each_piece_lines() for line in lines]

    def each_piece_lines(self) -> Generator[list[str], None, None]:
        """Every finished piece's lines, top to bottom, a piece at a time as soon as it
        is ready (the exit prints them meanwhile): those painted are reused; the rest
        are painted on every core (:mod:`.exit_painting`, whose children start now), a
        long answer not split yet whole (a third faster than by its paragraphs), and
        nothing is kept (the chat has ended)."""
        from pi_plugins.interactive.exit_painting import paint_each

        pieces = list(self.pieces)
        left = [piece for piece in pieces if piece.lines is None]
        painted = paint_each([len(piece.source or "") + 100 for piece in left],
                             lambda i: self._exit_piece_lines(left[i]))
        return _in_order(pieces, painted)

    def _exit_piece_lines(self, piece: Piece) -> list[str]:
        """A piece's lines, painted as the view would (split or not), leaving it as it is."""
        tui, width = self.tui, self._width
        if piece.text is None:
            return tui.paint(piece.block, width)
        texts = split_paragraphs(piece.text) if piece.unsplit else [piece.text]
        lines: list[str] = []
        for text in texts:
            try:
                lines += paint_paragraph(text, piece.style or "none", tui.painter, width, tui.view)
            except Exception as exc:  # one unpaintable paragraph must not cost the transcript
                lines += block_lines(_Broken(exc), tui.painter, width, tui.view)
        return lines

    def paint_rows(self, rows: Callable[[], tuple[int, int]]) -> None:
        """Paint until the rows that ``rows()`` names are painted, asking again after each
        piece (a piece painted or split moves the rows below it)."""
        for _ in range(10_000):
            piece = self.unpainted_in(*rows())
            if piece is None:
                return
            self.paint(piece)


def _in_order(pieces: list[Piece], painted: Generator[list[str], None, None]) -> Generator[list[str], None, None]:
    from pi_plugins.interactive.fullscreen_images import without_reserved

    try:
        for piece in pieces:
            yield without_reserved(piece.lines, piece.images) if piece.lines is not None else next(painted)
    finally:
        painted.close()  # its children ended, should the caller stop early


class _Broken(Block):
    def __init__(self, exc: Exception) -> None:
        super().__init__()
        self.exc = exc

    def renderable(self, view, live: bool = False):
        raise self.exc


def _answer_source(block: AssistantBlock, view: View) -> str:
    """What :meth:`AssistantBlock.paragraphs` holds, joined, without splitting it."""
    parts = []
    for content in block.message.content:
        if isinstance(content, ThinkingContent) and content.thinking.strip():
            parts.append(view.thinking_label if view.hide_thinking else content.thinking.strip())
        elif isinstance(content, TextContent) and content.text.strip():
            parts.append(content.text.strip())
    ending = block.ending()
    if ending is not None:
        parts.append(ending.plain)
    return "\n\n".join(parts)


def _estimate(piece: Piece, width: int, pad: int) -> int:
    """The piece's height guessed from its source: wrapped lines and the blank above."""
    if piece.text is not None and piece.style in ("label", "error"):
        return 2
    source = piece.source
    if source is None:
        return 3
    usable = max(width - 2 * pad, 1)
    if piece.unsplit or len(source) > 4 * usable:  # the quick guess: its lines and its wrapping, roughly
        return source.count("\n") + len(source) // usable + 2
    rows = sum(max(1, -(-len(line) // usable)) for line in source.strip().split("\n"))
    return rows + (3 if piece.prompt else 1)  # a user message's box adds a row above and below
