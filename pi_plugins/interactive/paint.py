"""Painting: any rich renderable becomes lines of ANSI text at a given width.

The interactive mode draws everything this way, like pi's components that render to
lines: the same lines go to the terminal's scrollback when a message is done and into
prompt_toolkit's live area (through its ANSI parser) while it streams. One colour system
is chosen for both (:mod:`.terminal_capabilities`: 24-bit or 256 colours, as pi 1.6).
"""

from __future__ import annotations

import logging
import re
from typing import Literal

from rich.console import Console
from rich.theme import Theme

from pi_plugins.interactive.theme import STYLES

_ANSI = re.compile(r"\x1b\[[0-9;:?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
_TRAILING_SPACES = re.compile(r" +$")
log = logging.getLogger("pi.interactive")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


#: The colour systems rich paints in (its Console's ``color_system``).
ColorSystem = Literal["auto", "standard", "256", "truecolor", "windows"]


class Painter:
    """Paints renderables with the interactive theme; one console per width, reused."""

    def __init__(self, color_system: ColorSystem | None = "truecolor") -> None:
        self.color_system = color_system
        self.theme = Theme(STYLES)
        self._consoles: dict[int, Console] = {}

    def console(self, width: int) -> Console:
        console = self._consoles.get(width)
        if console is None:
            console = Console(
                width=max(width, 1), color_system=self.color_system, force_terminal=True,
                no_color=self.color_system is None, theme=self.theme, highlight=False,
                markup=False, emoji=False, legacy_windows=False, soft_wrap=False,
                force_jupyter=False, force_interactive=False,
            )
            self._consoles[width] = console
        return console

    def lines(self, renderable, width: int) -> list[str]:
        """The renderable as lines (no trailing empty line), each at most ``width`` wide."""
        console = self.console(width)
        with console.capture() as capture:
            console.print(renderable)
        text = capture.get()
        if text.endswith("\n"):
            text = text[:-1]
        # rich pads every line to the width; unstyled padding only makes copies messy
        return [_TRAILING_SPACES.sub("", line) for line in text.split("\n")] if text else []


def block_lines(block, painter: Painter, width: int, view, live: bool = False) -> list[str]:
    """A chat block's lines; one unpaintable message must not stop the chat."""
    try:
        return block.lines(painter, width, view, live=live)
    except Exception as exc:
        log.debug("painting %r failed", block, exc_info=True)
        return ["", f" [this message could not be shown: {type(exc).__name__}: {exc}]"]
