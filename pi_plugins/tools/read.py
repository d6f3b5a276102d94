"""``read``: a text file's lines (from ``offset``, at most ``limit``) within the output
budget, or an image as image content.

The file is read in blocks and only the lines that will be shown are kept, so a 50 MB
log costs one pass of counting newlines, not 50 MB of strings. When the budget or the
limit cuts the text, a closing notice tells the model the ``offset`` to read on from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_core.protocol.messages import ImageContent, TextContent
from pi_core.protocol.tools import Tool, ToolResult, ToolRun
from pi_plugins.tools.errors import ToolError, os_error
from pi_plugins.tools.lookup import environment_for
from pi_plugins.tools.truncation import MAX_BYTES, MAX_LINES, Truncation, format_size

if TYPE_CHECKING:
    from pi_core.protocol.environment import ExecutionEnvironment

BLOCK = 1024 * 1024
#: Base64 payload most providers accept for one image (pi's limit).
MAX_IMAGE_BASE64 = int(4.5 * 1024 * 1024)
MAX_IMAGE_SIDE = 2000

DESCRIPTION = (
    "Read a file. Text files come back as lines; images (png, jpeg, gif, webp) come back "
    f"as images. Text output stops at {MAX_LINES} lines or {MAX_BYTES // 1024}KB, whichever "
    "comes first, and then ends with a note giving the offset to continue from: use "
    "offset and limit to read a large file in parts."
)

PARAMETERS = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "The file to read, relative to the working directory or absolute"},
        "offset": {"type": "integer", "minimum": 1, "description": "First line to read, counting from 1"},
        "limit": {"type": "integer", "minimum": 1, "description": "How many lines to read at most"},
    },
    "required": ["path"],
}


def image_type(head: bytes) -> str | None:
    """The MIME type of an image the models accept, told by its first bytes."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def looks_binary(head: bytes) -> bool:
    """Git's test: a NUL byte in the first 8,000 bytes."""
    return b"\0" in head[:8000]


async def execute(args: dict, run: ToolRun) -> ToolResult:
    if run.signal.aborted:
        raise ToolError("Operation aborted")
    path = args["path"]
    env = await environment_for(run)
    full = env.resolve(path)
    try:
        info = await env.stat(full)
        if info.kind == "directory":
            raise IsADirectoryError(full)
        if info.kind != "file":
            raise ToolError(f"{path} is not a regular file (a device, socket or pipe), so read cannot show it.")
        first = await env.read_bytes(full, 0, BLOCK)
    except OSError as exc:
        raise os_error(exc, path, "reading") from None
    mime = image_type(first)
    if mime is not None:
        return await _read_image(env, full, path, mime, first, info.size, run)
    if looks_binary(first):
        raise ToolError(
            f"{path} is a binary file ({format_size(info.size)}), not text, so read cannot show "
            f"it. Inspect it with bash instead, e.g. `file {path}` or `xxd {path} | head`."
        )
    try:
        return await _read_text(env, full, path, first, args.get("offset"), args.get("limit"))
    except OSError as exc:
        raise os_error(exc, path, "reading") from None


# ---------------------------------------------------------------- text


class _Window:
    """Keeps the lines of the requested window that fit the budget, while every line of
    the file is counted."""

    def __init__(self, start: int, limit: int | None):
        self.start, self.end = start, (start + limit if limit is not None else None)
        self.kept: list[bytes] = []
        self.kept_bytes = 0
        self.collecting = True
        self.truncated_by: str | None = None
        self.first_line_size: int | None = None  # set when the first line alone is too big
        self.index = 0  # the line being read
        self.newlines = 0
        self._line = bytearray()
        self._line_size = 0

    def feed(self, block: bytes) -> None:
        self.newlines += block.count(b"\n")
        if not self.collecting:
            return
        pos = 0
        if self.index < self.start:  # skip whole lines before the window cheaply
            before = block.count(b"\n")
            if self.index + before < self.start:
                self.index += before
                return
            while self.index < self.start:
                pos = block.index(b"\n", pos) + 1
                self.index += 1
        while self.collecting:
            newline = block.find(b"\n", pos)
            piece = block[pos:] if newline == -1 else block[pos:newline]
            self._line_size += len(piece)
            if self._line_size <= MAX_BYTES:
                self._line += piece
            if newline == -1:
                return
            self._complete()
            pos = newline + 1

    def close(self) -> None:
        """End of file: the last line (perhaps empty) is complete."""
        if self.collecting and self.index >= self.start:
            self._complete()

    def _complete(self) -> None:
        line, size = bytes(self._line), self._line_size
        self._line, self._line_size = bytearray(), 0
        self.index += 1
        if self.end is not None and self.index > self.end:
            self.collecting = False
        elif not self.kept and size > MAX_BYTES:
            self.first_line_size, self.truncated_by, self.collecting = size, "bytes", False
        elif len(self.kept) >= MAX_LINES:
            self.truncated_by, self.collecting = "lines", False
        elif self.kept_bytes + size + (1 if self.kept else 0) > MAX_BYTES:
            self.truncated_by, self.collecting = "bytes", False
        else:
            self.kept_bytes += size + (1 if self.kept else 0)
            self.kept.append(line)

    @property
    def total_lines(self) -> int:
        return self.newlines + 1


async def _read_text(
    env: ExecutionEnvironment, full: str, path: str, first: bytes,
    offset: int | None, limit: int | None,
) -> ToolResult:
    start = offset - 1 if offset else 0
    window = _Window(start, limit)
    block, pos = first, 0
    while block:
        window.feed(block)
        pos += len(block)
        if len(block) < BLOCK:
            break
        block = await env.read_bytes(full, pos, BLOCK)
    window.close()
    total = window.total_lines
    if start >= total:
        raise ToolError(
            f"offset {offset} is past the end of {path}, which has {total} lines. "
            f"Use an offset from 1 to {total}."
        )
    text = b"\n".join(window.kept).decode("utf-8", "replace")
    first_line = start + 1
    if window.first_line_size is not None:
        size = format_size(window.first_line_size)
        notice = (
            f"[Line {first_line} alone is {size}, more than the {format_size(MAX_BYTES)} a read "
            f"may return. Read a piece of it with bash: sed -n '{first_line}p' {path} | "
            f"head -c {MAX_BYTES}]"
        )
        return ToolResult.text(notice, {"truncation": _record(window, "").as_details()})
    if window.truncated_by is not None:
        last = start + len(window.kept)
        budget = f" ({format_size(MAX_BYTES)} budget)" if window.truncated_by == "bytes" else ""
        notice = (
            f"[Output cut after line {last}: showing lines {first_line}-{last} of {total}{budget}. "
            f"Call read with offset={last + 1} to continue.]"
        )
        return ToolResult.text(f"{text}\n\n{notice}", {"truncation": _record(window, text).as_details()})
    if window.end is not None and window.end < total:
        rest = total - window.end
        return ToolResult.text(
            f"{text}\n\n[{rest} more lines in the file. Call read with offset={window.end + 1} to continue.]"
        )
    return ToolResult.text(text)


def _record(window: _Window, text: str) -> Truncation:
    """What the model was shown of the selected lines, for ``details.truncation``."""
    selected_end = min(window.end, window.total_lines) if window.end is not None else window.total_lines
    return Truncation(
        content=text,
        truncated=True,
        truncated_by=window.truncated_by,
        total_lines=selected_end - window.start,
        total_bytes=None,  # past the budget lines are only counted
        output_lines=len(window.kept),
        output_bytes=len(text.encode("utf-8")),
        max_lines=MAX_LINES,
        max_bytes=MAX_BYTES,
        first_line_exceeds_limit=window.first_line_size is not None,
    )


# ---------------------------------------------------------------- images


async def _read_image(
    env: ExecutionEnvironment, full: str, path: str, mime: str, first: bytes, size: int, run: ToolRun,
) -> ToolResult:
    import base64

    try:
        data = first if len(first) >= size else await env.read_bytes(full)
    except OSError as exc:
        raise os_error(exc, path, "reading") from None
    notes = [f"Read image {path} [{mime}, {format_size(len(data))}]"]
    settings = getattr(getattr(run, "ctx", None), "settings", None)
    model = getattr(getattr(run, "ctx", None), "model", None)
    if settings is None or settings.get("images.autoResize", True) is not False:
        fitted = fit_image(data, mime, getattr(model, "image_resize", None))
        if fitted is None:
            notes.append("[Image omitted: could not be resized below the inline image size limit.]")
            return ToolResult(content=[TextContent("\n".join(notes))])
        data, mime, note = fitted
        if note:
            notes.append(note)
    encoded = base64.b64encode(data).decode("ascii")
    if model is not None and not getattr(model, "accepts_images", True):
        notes.append("[The current model does not take images; the request will carry a placeholder instead.]")
    return ToolResult(content=[TextContent("\n".join(notes)), ImageContent(data=encoded, mime_type=mime)])


def _base64_size(size: int) -> int:
    return (size + 2) // 3 * 4


def fit_image(data: bytes, mime: str, limits: dict[str, int] | None = None) -> tuple[bytes, str, str | None] | None:
    """The image as pi's ``images.autoResize`` sends it: unchanged when it is within
    2000x2000 and 4.5 MB of base64; else scaled (Lanczos) to fit 2000x2000, as PNG or
    JPEG (quality 80, 85, 70, 55, 40), whichever first fits, then smaller by a quarter at
    a time; with the note that maps its coordinates to the original's. None: it cannot
    be made small enough. ``limits``: the model's ``inputLimits.images.resize`` (pi 1.6),
    in place of those defaults. Pillow is imported here, on the first image read."""
    import io

    from PIL import Image, ImageOps

    limits = limits or {}
    max_w, max_h = limits.get("maxWidth", MAX_IMAGE_SIDE), limits.get("maxHeight", MAX_IMAGE_SIDE)
    max_bytes = limits.get("maxBytes", MAX_IMAGE_BASE64)
    first_quality = limits.get("jpegQuality", 80)
    qualities = (first_quality, *(q for q in (85, 70, 55, 40) if q != first_quality))

    try:
        image = Image.open(io.BytesIO(data))
        oriented = ImageOps.exif_transpose(image)
        width, height = oriented.size
    except Exception:  # not decodable: sent as it is while it fits, as read it
        return (data, mime, None) if _base64_size(len(data)) < max_bytes else None
    if width <= max_w and height <= max_h and _base64_size(len(data)) < max_bytes:
        return data, mime, None
    target_w, target_h = width, height
    if target_w > max_w:
        target_w, target_h = max_w, round(target_h * max_w / target_w)
    if target_h > max_h:
        target_w, target_h = round(target_w * max_h / target_h), max_h
    try:
        oriented.load()
        while True:
            resized = oriented.resize((max(1, target_w), max(1, target_h)), Image.Resampling.LANCZOS)
            for encoded, kind in _encodings(resized, qualities):
                if _base64_size(len(encoded)) < max_bytes:
                    note = (f"[Image: original {width}x{height}, displayed at {resized.width}x{resized.height}. "
                            f"Multiply coordinates by {width / resized.width:.2f} to map to original image.]")
                    return encoded, kind, note
            smaller = (max(1, int(target_w * 0.75)), max(1, int(target_h * 0.75)))
            if smaller == (target_w, target_h):
                return None
            target_w, target_h = smaller
    except Exception:
        return None


def _encodings(image, qualities=(80, 85, 70, 55, 40)):
    """PNG, then JPEG at pi's qualities, one at a time (each is made only if needed)."""
    import io

    out = io.BytesIO()
    image.save(out, "PNG")
    yield out.getvalue(), "image/png"
    rgb = image if image.mode == "RGB" else image.convert("RGB")
    for quality in qualities:
        out = io.BytesIO()
        rgb.save(out, "JPEG", quality=quality)
        yield out.getvalue(), "image/jpeg"


read_tool = Tool(
    name="read",
    label="read",
    description=DESCRIPTION,
    parameters=PARAMETERS,
    function=execute,
    execution_mode="parallel",
)
