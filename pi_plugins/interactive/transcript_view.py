"""The fullscreen chat's transcript: every block painted into one scrollable view above
the sticky editor (pi 1.6's ``tuiMode: "fullscreen"``), in place of the terminal's
scrollback that the regular mode prints into.

It stands in for :class:`.scrollback.Scrollback` (the same methods, so the rest of the
chat does not know which mode runs): finished blocks are painted once, at the view's
width, when first shown (:mod:`.lazy_lines`: a resumed 1 MB session shows its first frame
without painting what is out of view), and kept as lines; the blocks still streaming, the queue, widgets and the working
line (:mod:`.live_area`) follow them, painted each frame. The viewport follows the end
until the user scrolls up, and follows again at the bottom (``tui.altScreen.bottom``).
Search (:mod:`.transcript_search`) and mouse selection (:mod:`.selection_copy`) work on
the lines' plain text.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Any

from prompt_toolkit.layout.controls import UIContent, UIControl
from prompt_toolkit.layout.utils import explode_text_fragments
from prompt_toolkit.mouse_events import MouseButton, MouseEvent, MouseEventType, MouseModifier

from pi_plugins.interactive.blocks import (
    AssistantBlock,
    Block,
    paint_paragraph,
    split_paragraphs,
    stream_tail,
)
from pi_plugins.interactive.component_rows import PlacedComponents
from pi_plugins.interactive.controls import fragments
from pi_plugins.interactive.lazy_lines import LazyLines
from pi_plugins.interactive.paint import strip_ansi
from pi_plugins.interactive.selection_copy import Selection
from pi_plugins.interactive.streamed_paragraphs import StreamedParagraphs
from pi_plugins.interactive.transcript_search import TranscriptSearch

if TYPE_CHECKING:
    from prompt_toolkit.formatted_text import StyleAndTextTuples

    from pi_plugins.interactive.app import InteractiveApp

JUMP_HINT = "↓ Jump to latest message · Ctrl+End"
SCROLLBAR_TRACK, SCROLLBAR_THUMB = "│", "┃"
WHEEL_AUTO_MAX = 6  # "auto": fast wheel spins speed up to this many lines an event (pi 1.6)
MARGIN_ROWS = 4  # painted above and below the view, besides the rows shown
IDLE_PAUSE_SECONDS = 0.005  # between idle painting's slices: keys and frames go first
IDLE_SLICE_SECONDS = 0.02  # painting out of view at a time while the chat is idle
IDLE_WAIT_SECONDS = 0.25  # between looks while nothing is left to paint, or the chat is busy


class TranscriptView:
    """The transcript's lines, where the viewport stands, and what is selected or found."""

    def __init__(self, tui: InteractiveApp) -> None:
        self.tui = tui
        self._width: int | None = None
        self.lazy = LazyLines(tui, self._moved)  # the finished blocks, painted where shown
        from pi_plugins.interactive.fullscreen_images import FullscreenImages

        self.images = FullscreenImages(tui)
        self._stream: StreamedParagraphs | None = None  # the answer streaming, if any
        self._growing: dict[tuple[str, str, int], list[str]] = {}  # its last paragraph, painted
        self._live: list[str] = []
        self._live_plain: list[str] = []
        self.top = 0  # the first row shown, when not following
        self.follow = True
        self.height = 1  # the viewport's rows at the last frame
        self._changes = 0  # grows whenever the lines change (search recounts)
        self._finished = False
        self._printed = 0  # blocks printed after the chat ended
        self._wheel_last = 0.0
        self._wheel_streak = 0
        self.search = TranscriptSearch(self)
        self.selection = Selection(self)
        self.components = PlacedComponents(tui)  # widgets above the editor: their mouse and keys

    # ---------------------------------------------------------------- Scrollback's methods

    def changed(self) -> None:
        if self._finished:  # e.g. a plugin's goodbye at session shutdown: printed at once
            from pi_plugins.interactive.fullscreen_layout import print_lines

            blocks = self.tui.transcript.blocks
            fresh, self._printed = blocks[self._printed:], len(blocks)
            print_lines(self.tui, [line for block in fresh for line in self.tui.paint(block, self.tui.width)])
            return
        self.tui.invalidate()

    def reprint(self, blocks: list[Block] | None = None) -> None:
        """Paint the transcript again from its start (a new width, view or chat)."""
        self.tui.transcript.reset(blocks)
        self.lazy.clear(self._width or self.view_width())
        self._stream = None
        self._changes += 1
        self.changed()

    def flush_now(self) -> None:
        self._width = self.view_width()
        self._take_ready(self._width)

    async def flusher(self) -> None:
        """Nothing to print while the chat runs (the view is drawn frame by frame); while
        the chat waits for the user, the pieces out of view are painted a short slice at a
        time, so that the exit's transcript (and a search) finds them painted: quitting a
        resumed 1 MB session would otherwise paint it all then, for seconds."""
        pause = IDLE_PAUSE_SECONDS
        while not self._finished:
            await asyncio.sleep(pause)
            tui = self.tui
            if tui.working or self.search.open or self.selection.dragging:
                pause = IDLE_WAIT_SECONDS
                continue
            painted = self.lazy.painted
            left = self.lazy.paint_until(time.perf_counter() + IDLE_SLICE_SECONDS)
            if self.lazy.painted != painted:
                self._changes += 1
                tui.invalidate()  # the scrollbar's thumb follows the rows painted
            pause = IDLE_PAUSE_SECONDS if left else IDLE_WAIT_SECONDS

    def exit_lines(self) -> list[str]:
        """The whole transcript as the view shows it (at its width): the pieces painted
        while it ran, the rest painted now, then the blocks still live."""
        return [line for lines in self.exit_line_runs() for line in lines]

    def exit_line_runs(self) -> Iterator[list[str]]:
        """:meth:`exit_lines` a piece at a time, each as soon as it is painted (the
        exit prints the first while the rest are painted); what is left to paint is
        handed to other cores here, at once."""
        width = self._width or self.view_width()
        self._take_ready(width)
        return self._then_live(self.lazy.each_piece_lines(), width)

    def _then_live(self, pieces: Generator[list[str], None, None], width: int) -> Iterator[list[str]]:
        try:
            yield from pieces
        finally:
            pieces.close()
        for block in self.tui.transcript.live:
            yield self.tui.paint(block, width)

    def finish(self) -> None:
        """The chat ends: ``fullscreenExitOutput`` says what stays in the terminal after
        the alternate screen is gone: the transcript (pi 1.6's default) or only the hint
        to resume the session."""
        if self._finished:
            return
        self._finished = True
        self._printed = len(self.tui.transcript.blocks)
        from pi_plugins.interactive.fullscreen_layout import exit_output

        exit_output(self.tui)

    def before_render(self, _app) -> None:
        tui = self.tui
        width = self.view_width()
        if width != self._width:
            self._width = width
            self.reprint()
        tui.overlays.lay_out(tui.width, tui.rows)

    def after_render(self, _app) -> None:
        self.images.after_render(self)  # images placed on their rows (kitty, iTerm2)

    def backdrop_room(self) -> int:
        return 0

    def backdrop_lines(self, width: int) -> list[str]:
        return []

    # ---------------------------------------------------------------- the lines

    def view_width(self) -> int:
        """The width blocks are painted at: the terminal's, less the scrollbar's column."""
        hidden = self.tui.settings.get("fullscreenScrollbar", "auto") == "hidden"
        return max(self.tui.width - (0 if hidden else 1), 10)

    @property
    def version(self) -> tuple[int, int]:
        """Changes whenever the lines do (search recounts then)."""
        return self._changes, self.lazy.painted

    def _take_ready(self, width: int) -> None:
        for block in self.tui.transcript.take_ready():
            if self._stream is not None and self._stream.block is block:  # it finished streaming
                self.lazy.drop_last(block)
                self._stream = None
            self.lazy.add(block, width)
            self._changes += 1

    def refresh(self, width: int) -> None:
        """Before a frame: the finished blocks' lines (those in view painted), and the live
        part painted afresh; a search going on paints a little more of what it may match."""
        self._take_ready(width)
        live = self._streaming_lines(width)
        if live != self._live:
            self._live, self._live_plain = live, [strip_ansi(line) for line in live]
            self._changes += 1
        self.lazy.paint_rows(self._rows_in_view)
        if self.search.open:
            self.search.work()

    def _streaming_lines(self, width: int) -> list[str]:
        """The live part: an answer streaming at its head joins the transcript's pieces a
        paragraph at a time as each is whole (so scrolling up mid-answer shows all of it),
        with only the paragraph still growing painted here; then the rest."""
        live = self.tui.transcript.live
        head = live[0] if live else None
        if not isinstance(head, AssistantBlock) or head.final:
            return self._live_content([], width)
        if self._stream is None or self._stream.block is not head:
            if self._stream is not None:
                self.lazy.drop_last(self._stream.block)
            self._stream = StreamedParagraphs(head)
            self._growing = {}
        view = self.tui.view
        for text, style in self._stream.whole(view):
            self.lazy.add_paragraph(head, text, style, width)
            self._changes += 1
        lines: list[str] = []
        growing = self._stream.growing(view)
        used: dict[tuple[str, str, int], list[str]] = {}
        if growing is not None:
            text, style = growing
            chunks = [text] if style == "label" else split_paragraphs(stream_tail(text).strip())
            for chunk in chunks:
                key = (chunk, style, width)
                painted = self._growing.get(key)
                if painted is None:
                    painted = paint_paragraph(chunk, style, self.tui.painter, width, view)
                used[key] = painted
                lines += painted
        self._growing = used
        return self._live_content(lines, width, skip_head=True)

    def _live_content(self, before: list[str], width: int, skip_head: bool = False) -> list[str]:
        """``before`` and then the live area's lines, noting where its components are
        (widgets above the editor get the mouse there)."""
        live = self.tui.live
        lines = before + live.content_lines(width, skip_head=skip_head)
        rows = getattr(live, "component_rows", [])
        self.components.drawn([(component, len(before) + first, count) for component, first, count in rows])
        return lines

    def _rows_in_view(self) -> tuple[int, int]:
        first = self.first_row()
        return first - MARGIN_ROWS, min(first + self.height + MARGIN_ROWS, self.lazy.count)

    def _moved(self, old_end: int, delta: int) -> None:
        """A piece ending at ``old_end`` was painted ``delta`` rows taller than guessed:
        what stood below it moves with it (the view's top, the selection)."""
        if not self.follow and self.top >= old_end:
            self.top += delta
        self.selection.moved(old_end, delta)

    @property
    def line_count(self) -> int:
        return self.lazy.count + len(self._live)

    def line(self, index: int) -> str:
        committed = self.lazy.count
        if index < committed:
            return self.lazy.line(index)
        live = index - committed
        return self._live[live] if 0 <= live < len(self._live) else ""

    def plain(self, index: int) -> str:
        committed = self.lazy.count
        if index < committed:
            return self.lazy.plain(index)
        live = index - committed
        return self._live_plain[live] if 0 <= live < len(self._live_plain) else ""

    @property
    def live_plain(self) -> list[str]:
        """The live part's lines without colours (they follow the finished blocks' rows)."""
        return self._live_plain

    # ---------------------------------------------------------------- scrolling

    @property
    def bottom_top(self) -> int:
        return max(self.line_count - self.height, 0)

    def first_row(self) -> int:
        return self.bottom_top if self.follow else min(self.top, self.bottom_top)

    def scroll_to(self, top: int) -> None:
        """Show from row ``top``; at the end the view follows new output again."""
        self.top = max(min(top, self.bottom_top), 0)
        self.follow = self.top >= self.bottom_top
        self.tui.invalidate()

    def scroll_by(self, rows: int) -> None:
        self.scroll_to(self.first_row() + rows)

    def page(self, direction: int, fraction: float = 1.0) -> None:
        self.scroll_by(direction * max(int(self.height * fraction), 1))

    def to_top(self) -> None:
        self.scroll_to(0)

    def to_bottom(self) -> None:
        self.follow = True
        self.tui.invalidate()

    def reveal(self, row: int) -> None:
        """Scroll so that ``row`` is on screen (a third from the top when it was not)."""
        first = self.first_row()
        if not first <= row < first + self.height:
            self.scroll_to(row - self.height // 3)

    def jump_prompt(self, direction: int) -> None:
        """To the previous or next user message (pi's marked messages)."""
        first = self.first_row()
        prompts = self.lazy.prompt_rows()
        if direction < 0:
            earlier = [line for line in prompts if line < first]
            if earlier:
                self.scroll_to(earlier[-1])
        else:
            later = [line for line in prompts if line > first]
            if later:
                self.scroll_to(later[0])
            else:
                self.to_bottom()

    def wheel(self, direction: int, fast: bool = False) -> None:
        """A mouse-wheel event: ``fullscreenWheelScrollLines`` rows, or "auto": one row,
        more while the wheel spins fast (at most 6); Alt moves five times as far."""
        import time

        setting = self.tui.settings.get("fullscreenWheelScrollLines", "auto")
        if isinstance(setting, (int, float)) and not isinstance(setting, bool):
            rows = int(min(max(setting, 1), 100))
        else:
            now = time.monotonic()
            self._wheel_streak = self._wheel_streak + 1 if now - self._wheel_last < 0.05 else 0
            self._wheel_last = now
            rows = min(1 + self._wheel_streak // 2, WHEEL_AUTO_MAX)
        self.scroll_by(direction * rows * (5 if fast else 1))

    def scrollbar_shown(self) -> bool:
        setting = self.tui.settings.get("fullscreenScrollbar", "auto")
        if setting == "hidden":
            return False
        return setting == "always" or self.line_count > self.height

    def control(self) -> TranscriptControl:
        return TranscriptControl(self)


class TranscriptControl(UIControl):
    """The visible rows of the transcript, with the search's and the selection's marks,
    the scrollbar in the last column and the jump hint while scrolled up."""

    def __init__(self, view: TranscriptView) -> None:
        self.view = view
        self.focusable = False  # only while a widget above the editor has the keys
        view.components.control = self

    def is_focusable(self) -> bool:
        return self.focusable

    def get_key_bindings(self) -> Any:
        return self.view.components.key_bindings

    def preferred_height(self, width, max_available_height, wrap_lines, get_line_prefix) -> int | None:
        return max_available_height  # the transcript takes every row the editor leaves

    def create_content(self, width: int, height: int | None) -> UIContent:
        view = self.view
        rows = max(height or 1, 1)
        view.height = rows
        view.refresh(view.view_width())
        first = view.first_row()
        shown = [self._row(first + i) for i in range(min(rows, max(view.line_count - first, 0)))]
        shown += [[] for _ in range(rows - len(shown))]
        if not view.follow and view.first_row() < view.bottom_top:
            shown[-1] = self._jump_hint(shown[-1], width)
        if view.scrollbar_shown():
            bar = self._scrollbar(rows)
            padded_width = width - 1
            shown = [_pad(line, padded_width) + [(style, char)] for line, (style, char) in zip(shown, bar, strict=True)]
        return UIContent(get_line=lambda i: shown[i] if i < len(shown) else [], line_count=len(shown),
                         show_cursor=False)

    def _row(self, index: int) -> StyleAndTextTuples:
        view = self.view
        line = fragments(view.line(index))
        marks = view.search.marks(index) + view.selection.marks(index, len(view.plain(index)))
        if not marks:
            return line
        cells = explode_text_fragments(line)
        for start, end, style in marks:
            for column in range(start, min(end, len(cells))):
                cell = cells[column]
                cells[column] = (f"{cell[0]} {style}", cell[1])
        return cells

    def _jump_hint(self, line: StyleAndTextTuples, width: int) -> StyleAndTextTuples:
        hint = f" {JUMP_HINT} "
        left = max((width - len(hint)) // 2, 0)
        cells = _pad(explode_text_fragments(line), left)[:left]
        return cells + [("class:jump-hint reverse", hint)]

    def _scrollbar(self, rows: int) -> list[tuple[str, str]]:
        view = self.view
        total = max(view.line_count, 1)
        thumb = max(rows * rows // total, 1) if total > rows else rows
        start = (view.first_row() * (rows - thumb) // max(total - rows, 1)) if total > rows else 0
        return [("class:scrollbar.thumb", SCROLLBAR_THUMB) if start <= i < start + thumb
                else ("class:scrollbar.track fg:ansibrightblack", SCROLLBAR_TRACK) for i in range(rows)]

    def mouse_handler(self, mouse_event: MouseEvent) -> Any:
        view = self.view
        live_row = view.first_row() + mouse_event.position.y - view.lazy.count
        if live_row >= 0 and view.components.route(mouse_event, live_row, view.view_width()) is not NotImplemented:
            return None  # a widget above the editor took it
        kind = mouse_event.event_type
        fast = MouseModifier.ALT in mouse_event.modifiers
        if kind == MouseEventType.SCROLL_UP:
            view.wheel(-1, fast)
        elif kind == MouseEventType.SCROLL_DOWN:
            view.wheel(1, fast)
        elif mouse_event.button == MouseButton.LEFT and kind in (
                MouseEventType.MOUSE_DOWN, MouseEventType.MOUSE_MOVE, MouseEventType.MOUSE_UP):
            row = view.first_row() + mouse_event.position.y
            view.selection.mouse(kind, row, mouse_event.position.x)
        elif kind == MouseEventType.MOUSE_UP:  # some terminals report a release without its button
            row = view.first_row() + mouse_event.position.y
            view.selection.mouse(kind, row, mouse_event.position.x)
        else:
            return NotImplemented
        view.tui.invalidate()
        return None


def _pad(line: StyleAndTextTuples, width: int) -> StyleAndTextTuples:
    """The row filled with spaces to ``width`` cells (so that the scrollbar lines up)."""
    from prompt_toolkit.formatted_text import fragment_list_width

    missing = width - fragment_list_width(line)
    return list(line) + [("", " " * missing)] if missing > 0 else list(line)
