"""Output budgets and the truncation that keeps tool output within them.

Every tool's text goes to the model, so it is kept to pi's budgets: 2,000 lines or
50 KB, whichever comes first. ``truncate_head`` keeps the start (file reads, listings),
``truncate_tail`` the end (command output, where errors and results are). Both cut at
line boundaries; only a single last line longer than the whole budget is cut inside.
The :class:`Truncation` record goes into a result's ``details`` (pi's keys), so the UI and
the session know what the model did not see.
"""

from __future__ import annotations

from pi_core.protocol.records import record

MAX_LINES = 2000
MAX_BYTES = 50 * 1024
GREP_MAX_LINE_CHARS = 500


def format_size(size: int) -> str:
    """``512B``, ``50.0KB``, ``3.2MB``: how budgets and sizes are shown to the model."""
    if size < 1024:
        return f"{size}B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f}KB"
    return f"{size / (1024 * 1024):.1f}MB"


@record
class Truncation:
    """What a truncation kept of a text, in lines and UTF-8 bytes."""

    content: str
    truncated: bool
    truncated_by: str | None  # "lines", "bytes" or None
    total_lines: int
    total_bytes: int | None  # None: not measured (a read counts lines past the budget, not bytes)
    output_lines: int
    output_bytes: int
    max_lines: int
    max_bytes: int
    last_line_partial: bool = False
    first_line_exceeds_limit: bool = False

    def as_details(self) -> dict:
        """pi's ``details.truncation`` shape (camelCase keys, content included)."""
        return {
            "content": self.content,
            "truncated": self.truncated,
            "truncatedBy": self.truncated_by,
            "totalLines": self.total_lines,
            "totalBytes": self.total_bytes,
            "outputLines": self.output_lines,
            "outputBytes": self.output_bytes,
            "lastLinePartial": self.last_line_partial,
            "firstLineExceedsLimit": self.first_line_exceeds_limit,
            "maxLines": self.max_lines,
            "maxBytes": self.max_bytes,
        }


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _whole(text: str, lines: list[str], size: int, max_lines: int, max_bytes: int) -> Truncation:
    return Truncation(text, False, None, len(lines), size, len(lines), size, max_lines, max_bytes)


def truncate_head(text: str, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES) -> Truncation:
    """Keep the first complete lines that fit. When the first line alone is over the byte
    budget nothing is kept and ``first_line_exceeds_limit`` says why."""
    lines = text.split("\n")
    size = _size(text)
    if len(lines) <= max_lines and size <= max_bytes:
        return _whole(text, lines, size, max_lines, max_bytes)
    kept: list[str] = []
    used, by = 0, "lines"
    for line in lines[:max_lines]:
        cost = _size(line) + (1 if kept else 0)
        if used + cost > max_bytes:
            by = "bytes"
            break
        kept.append(line)
        used += cost
    content = "\n".join(kept)
    return Truncation(
        content, True, by, len(lines), size, len(kept), _size(content), max_lines, max_bytes,
        first_line_exceeds_limit=not kept and bool(lines) and _size(lines[0]) > max_bytes,
    )


def tail_of_line(line: str, max_bytes: int) -> str:
    """The end of ``line`` in at most ``max_bytes`` UTF-8 bytes, starting on a whole character."""
    data = line.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return line
    start = len(data) - max_bytes
    while start < len(data) and data[start] & 0xC0 == 0x80:
        start += 1
    return data[start:].decode("utf-8", "replace")


def truncate_tail(text: str, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES) -> Truncation:
    """Keep the last complete lines that fit; a last line longer than the whole budget is
    kept in part (its end), with ``last_line_partial`` set."""
    lines = text.split("\n")
    size = _size(text)
    if len(lines) <= max_lines and size <= max_bytes:
        return _whole(text, lines, size, max_lines, max_bytes)
    kept: list[str] = []
    used, by, partial = 0, "lines", False
    for line in reversed(lines):
        if len(kept) >= max_lines:
            break
        cost = _size(line) + (1 if kept else 0)
        if used + cost > max_bytes:
            by = "bytes"
            if not kept:
                kept.append(tail_of_line(line, max_bytes))
                partial = True
            break
        kept.append(line)
        used += cost
    kept.reverse()
    content = "\n".join(kept)
    return Truncation(
        content, True, by, len(lines), size, len(kept), _size(content), max_lines, max_bytes,
        last_line_partial=partial,
    )


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_CHARS) -> tuple[str, bool]:
    """One line cut to ``max_chars`` characters with a visible marker; (text, was cut)."""
    if len(line) <= max_chars:
        return line, False
    return f"{line[:max_chars]}... [line cut at {max_chars} chars]", True
