"""Images in the fullscreen transcript, placed as pi 1.6 places them on a terminal that
draws images (kitty's graphics protocol, iTerm2's inline images; :mod:`.terminal_images`).

A painted block with images gets, for each, a blank line and then the rows the image
takes, left empty (pi-tui's ``Spacer`` and ``Image``). After each frame the images in
view are placed on them: the cursor moved to the image's first row, the sequence written
with the cursor kept (kitty's ``C=1``) and the image's own id (``i=``, random, kept while
the chat runs, as pi-tui's ``Image``). A kitty image partly in view is cropped to the rows
that are, as 1.6's layout crops it (``y=``/``h=`` in the picture's pixels, ``r=`` rows);
iTerm2's images are placed only whole. When what is in view changes, every placement is
deleted first (kitty's ``a=d,d=a``, as 1.6 does before it draws again), so a scrolled
image does not stay behind. The reserved rows are the view's only: the exit's transcript
leaves them out (:func:`without_reserved`).
"""

from __future__ import annotations

import base64
import os
import re
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_plugins.interactive.transcript_view import TranscriptView

DELETE_PLACEMENTS = "\x1b_Ga=d,d=a,q=2\x1b\\"
DELETE_IMAGES = "\x1b_Ga=d,d=A,q=2\x1b\\"  # with their data: the first frame, as 1.6's
#: The controls a placement of an uploaded image keeps (pi-tui's KITTY_PLACEMENT_CONTROL_KEYS).
_PLACEMENT_KEYS = frozenset("CcrixywhXYpzPQUH")
#: Uploaded images kept out of view before the oldest is deleted (pi-tui's limit).
MAX_OFFSCREEN_UPLOADS = 16
_KITTY_HEADER = re.compile(r"\x1b_G([^;]*);")
#: Each image's kitty id, by (block, index in it); the oldest forgotten past this many.
_IDS: OrderedDict[tuple[int, int], int] = OrderedDict()
_MAX_IDS = 512


def _image_id(block: Any, index: int) -> int:
    from pi_plugins.interactive.terminal_images import new_image_id

    key = (id(block), index)
    if key not in _IDS:
        _IDS[key] = new_image_id()
        if len(_IDS) > _MAX_IDS:
            _IDS.popitem(last=False)
    return _IDS[key]


def crop(sequence: str, pixel_height: int, rows: int, hidden: int, shown: int) -> str | None:
    """The kitty sequence drawing only rows ``hidden`` to ``hidden + shown`` of an image
    ``rows`` rows and ``pixel_height`` pixels high (pi-tui's ``cropKittyImageLine``); None
    for a sequence that is not kitty's."""
    match = _KITTY_HEADER.search(sequence)
    if match is None or pixel_height <= 0:
        return None
    shown = min(shown, rows - hidden)
    top = pixel_height * hidden // rows
    end = -(-pixel_height * (hidden + shown) // rows)
    height = max(1, min(pixel_height, end) - top)
    controls = [c for c in match.group(1).split(",") if not re.match(r"[yhr]=", c)]
    controls += [f"y={top}", f"h={height}", f"r={shown}"]
    return f"{sequence[:match.start()]}\x1b_G{','.join(controls)};{sequence[match.end():]}"


def placement(sequence: str) -> tuple[int, str] | None:
    """(kitty image id, the sequence placing that uploaded image again without its data:
    ``a=p``), as 1.6 reuses an upload; None for a sequence with no id."""
    match = _KITTY_HEADER.search(sequence)
    if match is None:
        return None
    controls = match.group(1).split(",")
    ids = [c[2:] for c in controls if c.startswith("i=")]
    if not ids or not ids[0].isdigit():
        return None
    kept = [c for c in controls if c.split("=", 1)[0] in _PLACEMENT_KEYS]
    return int(ids[0]), f"\x1b_Ga=p,q=2,{','.join(kept)}\x1b\\"


def without_reserved(lines: list[str], images: list) -> list[str]:
    """A painted piece's lines without the rows left for its images (and their spacers)."""
    return lines[:images[0][0] - 1] if images else lines


def reserve(tui: Any, block: Any, width: int) -> tuple[list[str], list[tuple[int, int, str, int]]]:
    """The rows to add under a painted block for its images, and each image's place in
    them: (first row, rows, sequence, the picture's height in pixels). Nothing where the
    terminal draws no images or ``terminal.showImages`` is off."""
    images = block.images() if hasattr(block, "images") else []
    if not images or os.environ.get("TMUX"):
        return [], []  # inside tmux pi 1.6 places none (tmux does not keep them in place)
    settings = tui.settings
    if not settings.get("terminal.showImages", True):
        return [], []
    from pi_plugins.interactive.terminal_images import image_sequence, image_size

    columns = min(settings.get("terminal.imageWidthCells", 60) or 60, max(width - 2, 1))
    rows: list[str] = []
    places: list[tuple[int, int, str, int]] = []
    for index, image in enumerate(images):
        data = getattr(image, "data", "")
        drawn = image_sequence(data, getattr(image, "mime_type", ""), columns, keep_cursor=True,
                               image_id=_image_id(block, index))
        if drawn is None:
            continue
        sequence, height = drawn
        try:
            size = image_size(base64.b64decode(data[:1024]))  # the header is enough
        except ValueError:
            size = None
        rows.append("")  # the spacer above it
        places.append((len(rows), height, sequence, size[1] if size else 0))
        rows += [""] * height
    return rows, places


class FullscreenImages:
    """What the transcript has placed on the screen, to place again only on a change."""

    def __init__(self, tui: Any) -> None:
        self.tui = tui
        self._placed: tuple[tuple[int, int, int, int], ...] | None = None  # (row, image, hidden, shown)
        self._uploaded: OrderedDict[int, None] = OrderedDict()  # kitty ids, least recently placed first

    def after_render(self, view: TranscriptView) -> None:
        first, height = view.first_row(), view.height
        wanted: list[tuple[tuple[int, int, int, int], int, str]] = []
        for start, piece in view.lazy.painted_pieces():
            if start >= first + height:
                break
            for offset, rows, sequence, pixels in getattr(piece, "images", None) or ():
                top = start + offset - first
                hidden, shown = max(0, -top), min(rows, height - top)
                if shown - hidden <= 0:
                    continue
                if hidden or shown < rows:  # partly in view: kitty's cropped, iTerm2's not at all
                    cropped = crop(sequence, pixels, rows, hidden, shown - hidden)
                    if cropped is None:
                        continue
                    sequence = cropped
                wanted.append(((max(top, 0), id(piece) + offset, hidden, shown), max(top, 0), sequence))
        key = tuple(place for place, _, _ in wanted)
        if key == self._placed:
            return
        first_frame = self._placed is None
        out = [DELETE_IMAGES] if first_frame and self._kitty() else []
        if self._placed or wanted:
            out.append(DELETE_PLACEMENTS)
        shown_ids = set()
        for _, top, sequence in wanted:
            again = placement(sequence)
            if again is not None:
                shown_ids.add(again[0])
                if again[0] in self._uploaded:
                    self._uploaded.move_to_end(again[0])
                    sequence = again[1]
                else:
                    self._uploaded[again[0]] = None
            out.append(f"\x1b7\x1b[{top + 1};1H{sequence}\x1b8")
        out += self._evict(shown_ids)
        self._placed = key
        if out:
            self.tui.write_to_terminal("".join(out))

    def _kitty(self) -> bool:
        from pi_plugins.interactive.terminal_images import protocol

        return protocol() == "kitty" and not os.environ.get("TMUX")

    def _evict(self, shown: set[int]) -> list[str]:
        """Deletions (with their data: ``d=I``) of the uploads least recently placed,
        past :data:`MAX_OFFSCREEN_UPLOADS` out of view, as 1.6 bounds its cache."""
        away = [ident for ident in self._uploaded if ident not in shown]
        deletions = []
        for ident in away[:max(0, len(away) - MAX_OFFSCREEN_UPLOADS)]:
            del self._uploaded[ident]
            deletions.append(f"\x1b_Ga=d,d=I,i={ident},q=2\x1b\\")
        return deletions
