"""The ``codemode`` tool result, in pi 1.6's shape: ``Script completed`` or ``Script
failed``, the wall time, then the output: text and image items in order (``==> text N/M
<==`` before each text when there are several), one ``<console_output>`` block, and for
a failure ``Script error:`` and the tool calls made before it. Output over
``max_output_tokens`` keeps its start and end; the whole text goes to a temp file.
"""

from __future__ import annotations

import base64
import math
from pathlib import Path
from typing import Any

from pi_core import ImageContent, TextContent, ToolResult
from pi_plugins.tools.output_files import write_output_file

DEFAULT_MAX_OUTPUT_TOKENS = 10_000
_SUFFIX = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}


def temp_file(suffix: str, data: bytes) -> Path:
    """A new output file only the user may read, named like pi's (``pi-codemode-<16 hex>``)."""
    return Path(write_output_file("pi-codemode", suffix, data))


def _size(count: int) -> str:
    if count < 1024:
        return f"{count}B"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f}KB"
    return f"{count / (1024 * 1024):.1f}MB"


def _joined(pieces: list[str]) -> str:
    """Pieces one per line: a piece that ends its own line needs no separator."""
    out = ""
    for index, piece in enumerate(pieces):
        if index and not out.endswith("\n"):
            out += "\n"
        out += piece
    return out


def _cut(body: str, max_tokens: int) -> str:
    tokens = math.ceil(len(body) / 4)
    if tokens <= max_tokens:
        return body
    half = max_tokens * 4 // 2
    path = temp_file(".txt", body.encode("utf-8"))
    lines = body.count("\n") + 1
    head, tail = body[:half], body[len(body) - half:] if half else ""
    return (f"Warning: truncated output (original token count: {tokens})\nTotal output lines: {lines}\n\n"
            f"{head}…{tokens - max_tokens} tokens truncated…{tail}\n\n"
            f"[Full output: {path} (read with offset/limit)]")


def script_result(*, ok: bool, seconds: float, output: list[tuple[str, Any]], error: str | None = None,
                  calls: list[tuple[str, str]] | None = None,
                  max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS) -> ToolResult:
    """The tool result for a script that ran: ``output`` as the sandbox reported it,
    ``calls`` the (tool, status) of each call it made, for a failure's last line."""
    texts = sum(1 for kind, _ in output if kind == "text")
    pieces: list[str] = []
    images: list[ImageContent] = []
    console: list[str] = []
    number = 0
    for kind, value in output:
        if kind == "text":
            number += 1
            pieces.append(f"==> text {number}/{texts} <==\n{value}" if texts > 1 else str(value))
        elif kind == "image":
            data = str(value.get("data", ""))
            mime = str(value.get("mimeType", "image/png"))
            try:
                raw = base64.b64decode(data, validate=False)
            except ValueError:
                raw = b""
            path = temp_file(_SUFFIX.get(mime, ".img"), raw)
            pieces.append(f"[Image saved to {path} ({mime}, {_size(len(raw))})]")
            images.append(ImageContent(data=data, mime_type=mime))
        else:
            console.append(str(value))
    if console:
        pieces.append("<console_output>\n" + "\n".join(console) + "\n</console_output>")
    if not ok:
        pieces.append(f"Script error:\n{error or 'Error: the script failed'}")
    body = _cut(_joined(pieces), max_output_tokens) if pieces else ""
    head = f"Script {'completed' if ok else 'failed'}\nWall time {seconds:.1f} seconds\nOutput:\n"
    text = head + ("\n" + body if body else "")
    if not ok:
        made = ", ".join(f"{name} ({status})" for name, status in calls or [])
        text += ("\n\nTool calls made before the failure (they are not undone): " + made if made
                 else "\n\nNo tool calls were made.")
    return ToolResult(content=[TextContent(text), *images], details={"ok": ok, "calls": len(calls or [])},
                      is_error=not ok)
