"""Images in the fullscreen transcript, placed as pi 1.6 places them on a terminal that
draws images (kitty's graphics protocol, iTerm2's inline images; :mod:`.terminal_images`).

A painted block with images gets, for each, a blank line and then the rows the image
takes, left empty (pi-tui's ``Spacer`` and ``Image``). After each frame the images whose
rows are wholly in view are placed on them: the cursor moved to the image's first row,
the sequence written with the cursor kept (kitty's ``C=1``). When what is in view
changes, every placement is deleted first (kitty's ``a=d,d=a``, as 1.6 does before it
draws again), so a scrolled image does not stay behind.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_plugins.interactive.transcript_view import TranscriptView

DELETE_PLACEMENTS = "\x1b_Ga=d,d=a,q=2\x1b\\"


def reserve(tui: Any, block: Any, width: int) -> tuple[list[str], list[tuple[int, int, str]]]:
    """The rows to add under a painted block for its images, and each image's place in
    them: (first row, rows, sequence). Nothing where the terminal draws no images or
    ``terminal.showImages`` is off."""
    images = block.images() if hasattr(block, "images") else []
    if not images or os.environ.get("TMUX"):
        return [], []  # inside tmux pi 1.6 places none (tmux does not keep them in place)
    settings = tui.settings
    if not settings.get("terminal.showImages", True):
        return [], []
    from pi_plugins.interactive.terminal_images import image_sequence

    columns = min(settings.get("terminal.imageWidthCells", 60) or 60, max(width - 2, 1))
    rows: list[str] = []
    places: list[tuple[int, int, str]] = []
    for image in images:
        drawn = image_sequence(getattr(image, "data", ""), getattr(image, "mime_type", ""), columns,
                               keep_cursor=True)
        if drawn is None:
            continue
        sequence, height = drawn
        rows.append("")  # the spacer above it
        places.append((len(rows), height, sequence))
        rows += [""] * height
    return rows, places


class FullscreenImages:
    """What the transcript has placed on the screen, to place again only on a change."""

    def __init__(self, tui: Any) -> None:
        self.tui = tui
        self._placed: tuple[tuple[int, int], ...] = ()  # (screen row, piece id) of each

    def after_render(self, view: TranscriptView) -> None:
        first, height = view.first_row(), view.height
        wanted: list[tuple[int, int, str]] = []
        for start, piece in view.lazy.painted_pieces():
            if start >= first + height:
                break
            for offset, rows, sequence in getattr(piece, "images", None) or ():
                top = start + offset - first
                if 0 <= top and top + rows <= height:
                    wanted.append((top, id(piece), sequence))
        key = tuple((top, ident) for top, ident, _ in wanted)
        if key == self._placed:
            return
        out = [DELETE_PLACEMENTS] if self._placed or wanted else []
        for top, _, sequence in wanted:
            out.append(f"\x1b7\x1b[{top + 1};1H{sequence}\x1b8")
        self._placed = key
        if out:
            self.tui.write_to_terminal("".join(out))
