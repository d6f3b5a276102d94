"""What the terminal's scrollback holds of the chat.

Finished blocks are printed above the live area, once, where the terminal keeps them
(scrolling, selecting and copying work as in any program's output), as pi does; a new
width, view or conversation prints everything again. While overlays show, the chat is as
tall as the terminal and its last lines are drawn behind them (the backdrop) instead of
printed, so that they sit where the terminal would show them.
"""

from __future__ import annotations

import asyncio
import sys
from collections import deque
from typing import TYPE_CHECKING

from prompt_toolkit.application import run_in_terminal

from pi_plugins.interactive.blocks import Block

if TYPE_CHECKING:
    from pi_plugins.interactive.app import InteractiveApp


class Scrollback:
    def __init__(self, tui: InteractiveApp) -> None:
        self.tui = tui
        self._printed_width: int | None = None
        #: The live area's tallest height since the scrollback was last written (terminal.clearOnShrink).
        self._tallest_live = 0
        self._clear_screen = False
        self._flush_wanted = asyncio.Event()
        #: The chat's last printed lines, drawn behind overlays; while overlays show, the
        #: last ``_held_count`` of them are only there, not in the terminal's scrollback.
        self._printed_tail: deque[str] = deque(maxlen=300)
        self._backdrop_rows = 0
        self._held_count = 0
        self._finished = False

    def changed(self) -> None:
        """The chat changed: print what became final, redraw the rest."""
        if self._finished:  # e.g. a plugin's goodbye at session shutdown
            self.flush_now()
            return
        self._flush_wanted.set()
        self.tui.invalidate()

    def reprint(self, blocks: list[Block] | None = None) -> None:
        """Print the chat again from its start, cleared first (``blocks``: a new chat)."""
        self.tui.transcript.reset(blocks)
        self._clear_screen = True
        self.changed()

    def _write(self, lines: list[str], clear: bool = False) -> None:
        output = self.tui.terminal_output
        out = output.stdout if output is not None else sys.stdout
        if clear:
            out.write("\x1b[2J\x1b[H\x1b[3J")  # screen, home, scrollback
            self._printed_tail.clear()
        self._printed_tail.extend(line for line in lines if "\x1b_G" not in line and "\x1b]1337" not in line)
        if clear:
            # overlays open: the last lines are drawn behind them instead, where the
            # terminal would show them (the chat is then as tall as the terminal)
            self._held_count = min(self.backdrop_room(), len(lines)) if self.tui.overlays.showing else 0
            lines = lines[:len(lines) - self._held_count]
        if lines:
            out.write("\n".join(lines) + "\n")
        out.flush()

    def flush_now(self) -> None:
        """Print the committed blocks while the application is not drawing."""
        clear, self._clear_screen = self._clear_screen, False
        ready = self.tui.transcript.take_ready()
        width = self.tui.width
        self._printed_width = width
        self._tallest_live = 0  # prompt_toolkit sizes the live area afresh after this
        lines = [line for block in ready for line in (*self.tui.paint(block, width), *self._image_lines(block))]
        if lines or clear:
            self._write(lines, clear)

    async def flusher(self) -> None:
        """Prints blocks into the scrollback as they become final (one at a time, above
        the live area), and reprints everything after a reset."""
        transcript = self.tui.transcript
        while True:
            await self._flush_wanted.wait()
            self._flush_wanted.clear()
            if self._clear_screen or (transcript.live and transcript.live[0].final):
                if self.tui.overlays.showing and not self._clear_screen:
                    # behind overlays the last lines are held back: print it all again, in order
                    transcript.reset()
                    self._clear_screen = True
                await run_in_terminal(self.flush_now, in_executor=False)

    def finish(self) -> None:
        """The chat ends: print what the scrollback does not have yet; from now on what
        is added is printed at once."""
        if self._held_count:  # the lines drawn behind overlays are not in the scrollback yet
            held, self._held_count = list(self._printed_tail)[-self._held_count:], 0
            self._write(held)
        transcript = self.tui.transcript
        remaining = transcript.live
        transcript.committed = len(transcript.blocks)
        width = self.tui.width
        lines = [line for block in remaining for line in self.tui.paint(block, width)]
        if lines:
            self._write(lines)
        self._finished = True

    def _image_lines(self, block: Block) -> list[str]:
        """The block's images for the scrollback (kitty, iTerm2), as terminal.* say."""
        images = block.images()
        settings = self.tui.settings
        if not images or not settings.get("terminal.showImages", True):
            return []
        from pi_plugins.interactive.terminal_images import image_line

        columns = min(settings.get("terminal.imageWidthCells", 60) or 60, self.tui.width - 2)
        lines = [image_line(getattr(i, "data", ""), getattr(i, "mime_type", ""), columns) for i in images]
        return [line for line in lines if line]

    # ---------------------------------------------------------------- around each frame

    def before_render(self, _app) -> None:
        """A new width reprints the chat; overlays opening or closing reprint it too (the
        lines behind them, or all again)."""
        tui = self.tui
        width = tui.width
        if self._printed_width is not None and width != self._printed_width:
            self._printed_width = width
            self.reprint()
        was = tui.overlays.showing
        # overlays sit on terminal rows: the chat fills the terminal behind them
        self._backdrop_rows = self.backdrop_room() if tui.overlays.lay_out(width, tui.rows) else 0
        if tui.overlays.showing != was:
            self.reprint()

    def after_render(self, app) -> None:
        """pi's ``terminal.clearOnShrink``: prompt_toolkit keeps the live area as tall as it
        has been (a closed dialog leaves empty rows below the footer, pi's default); with
        the setting, a shorter live area reprints the chat, so the rows go (pi's full
        redraw on shrink, which may flicker). Not while a dialog or overlay is open."""
        tui = self.tui
        size = app.output.get_size()
        height = app.layout.container.preferred_height(size.columns, size.rows).preferred
        tallest, self._tallest_live = self._tallest_live, max(self._tallest_live, height)
        if (height < tallest and not self._clear_screen and tui.dialogs.current is None
                and not tui.overlays.entries and tui.settings.get("terminal.clearOnShrink", False) is True):
            self.reprint()

    def backdrop_room(self) -> int:
        """The rows above the live chat when the chat is as tall as the terminal."""
        tui = self.tui
        return max(tui.rows - len(tui.live.lines(tui.width)) - tui.layout.bottom_height(), 0)

    def backdrop_lines(self, width: int) -> list[str]:
        """Behind overlays: the chat's lines the scrollback holds back, where the terminal
        showed them (the newest if the room shrank), empty rows below them."""
        rows = self._backdrop_rows
        if not rows:
            return []
        held = list(self._printed_tail)[-self._held_count:] if self._held_count else []
        return held[-rows:] if len(held) >= rows else held + [""] * (rows - len(held))
