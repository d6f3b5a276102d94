"""Images shown in the terminal, where it can: the kitty graphics protocol (kitty,
Ghostty, WezTerm, Rex …) or iTerm2's inline images (iTerm2), chosen as pi 1.6 chooses
(:mod:`.terminal_capabilities`). Settings: ``terminal.showImages``
(default on) and ``terminal.imageWidthCells`` (default 60). Inside tmux the sequence is
wrapped for tmux's passthrough (``set -g allow-passthrough on``).

In the regular mode images go into the scrollback, after the message that holds them is
final: the live part of the screen is redrawn by prompt_toolkit, which does not draw
images. The fullscreen transcript places them itself (:mod:`.fullscreen_images`).
"""

from __future__ import annotations

import base64
import math
import os
import random
import re
import struct

KITTY_CHUNK = 4096


def protocol(env=os.environ) -> str | None:
    """``"kitty"``, ``"iterm2"`` or None: what this terminal draws images with
    (:mod:`.terminal_capabilities`: detection, ``PI_IMAGE_PROTOCOL``, ``terminal.images``)."""
    from pi_plugins.interactive.terminal_capabilities import image_protocol

    return image_protocol(env)


def image_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) in pixels of a PNG, GIF or JPEG, read from its header."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        return struct.unpack(">II", data[16:24])
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        return struct.unpack("<HH", data[6:10])
    if data[:2] == b"\xff\xd8":
        index = 2
        while index + 9 < len(data):
            if data[index] != 0xFF:
                return None
            marker, length = data[index + 1], struct.unpack(">H", data[index + 2:index + 4])[0]
            if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                height, width = struct.unpack(">HH", data[index + 5:index + 9])
                return width, height
            index += 2 + length
    return None


def image_line(data_b64: str, mime: str, columns: int, env=os.environ) -> str | None:
    """One line that draws the image ``columns`` cells wide (its rows from its aspect
    ratio, cells being about twice as tall as wide), or None when it cannot be drawn."""
    drawn = image_sequence(data_b64, mime, columns, env)
    return " " + drawn[0] if drawn is not None else None


CELL_PIXELS = (9, 18)  # pi-tui's cell size until the terminal tells its own
#: pi 1.6 asks the terminal for its cell size in pixels at start where it draws images;
#: the answer is ``CSI 6 ; height ; width t``.
CELL_SIZE_QUERY = "\x1b[16t"
_CELL_SIZE_REPLY = re.compile(r"\x1b\[6;(\d+);(\d+)t")


def read_cell_size(data: str) -> tuple[str, bool]:
    """The input without the terminal's cell-size answer, and whether one changed
    :data:`CELL_PIXELS` (images are then sized again, as 1.6 does)."""
    global CELL_PIXELS
    if "\x1b[6;" not in data:
        return data, False
    changed = False

    def answer(match: re.Match) -> str:
        nonlocal changed
        global CELL_PIXELS
        height, width = int(match.group(1)), int(match.group(2))
        if height > 0 and width > 0 and (width, height) != CELL_PIXELS:
            CELL_PIXELS, changed = (width, height), True
        return ""

    return _CELL_SIZE_REPLY.sub(answer, data), changed


def new_image_id() -> int:
    """A kitty image id as pi-tui allocates them: random in [1, 0xffffffff]."""
    return random.randint(1, 0xFFFFFFFE)


def pi16_cells(size: tuple[int, int], max_columns: int) -> tuple[int, int]:
    """(columns, rows) pi 1.6 gives an image of ``size`` pixels at most ``max_columns``
    wide and half as many rows' worth of pixels high (pi-tui's ``calculateImageCellSize``)."""
    cell_w, cell_h = CELL_PIXELS
    max_rows = max(1, math.ceil(max_columns * cell_w / cell_h))
    width, height = max(1, size[0]), max(1, size[1])
    scale = min(max_columns * cell_w / width, max_rows * cell_h / height)
    columns = max(1, min(max_columns, math.ceil(width * scale / cell_w)))
    rows = min(max_rows, max(1, math.ceil(height * scale / cell_h)))
    return columns, rows


def image_sequence(data_b64: str, mime: str, columns: int, env=os.environ, *,
                   keep_cursor: bool = False, image_id: int | None = None) -> tuple[str, int] | None:
    """(the sequence that draws the image, the rows it takes), or None. ``keep_cursor``:
    kitty leaves the cursor where it was (``C=1``) and the size is pi 1.6's (:func:`pi16_cells`),
    as 1.6 places fullscreen images; ``image_id``: kitty's ``i=``. The header is pi-tui's:
    ``a=T,f=100,q=2[,C=1],c=,r=[,i=]``, with ``m=`` only when the data comes in chunks."""
    kind = protocol(env)
    if kind is None:
        return None
    try:
        raw = base64.b64decode(data_b64, validate=False)
    except ValueError:
        return None
    size = image_size(raw)
    columns = max(int(columns), 1)
    if keep_cursor and size is not None and size[0] > 0 and size[1] > 0:
        columns, rows = pi16_cells(size, columns)
    elif size is not None and size[0] > 0:
        columns = min(columns, max(1, math.ceil(size[0] / 8)))  # small images are not blown up
        rows = max(1, math.ceil(columns * size[1] / size[0] / 2))
    else:
        rows = max(1, columns // 2)
    if kind == "kitty":
        if mime != "image/png":
            return None  # kitty decodes PNG itself; other formats would need converting
        chunks = [data_b64[i:i + KITTY_CHUNK] for i in range(0, len(data_b64), KITTY_CHUNK)] or [""]
        parts = []
        first = ",".join(["a=T", "f=100", "q=2", *(["C=1"] if keep_cursor else []), f"c={columns}", f"r={rows}",
                          *([f"i={image_id}"] if image_id else [])])
        for index, chunk in enumerate(chunks):
            more = 1 if index < len(chunks) - 1 else 0
            if len(chunks) == 1:
                head = first
            else:
                head = f"{first},m={more}" if index == 0 else f"m={more}"
            parts.append(f"\x1b_G{head};{chunk}\x1b\\")
        sequence = "".join(parts)
    else:
        sequence = (f"\x1b]1337;File=inline=1;size={len(raw)};width={columns};height={rows};"
                    f"preserveAspectRatio=1:{data_b64}\x07")
    if env.get("TMUX"):
        sequence = "\x1bPtmux;" + sequence.replace("\x1b", "\x1b\x1b") + "\x1b\\"
    return sequence, rows
