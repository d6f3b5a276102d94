"""Reading a session file: every complete line kept, every bad one named by its number.

The reader never changes the file. It tells the caller what it found: the header, the
entries with their line numbers, the problems (unreadable lines, a second header), and
whether the file ends without a newline (a crash mid-write, or a complete line), so the
writer starts the next entry on a line of its own. Tree-level problems (missing parent,
cycles) are the tree's.

What pi reads, we read: invalid UTF-8 is decoded with U+FFFD in place of the bad bytes;
a line that cannot be used at all costs only itself, and where its id and parent can still
be made out (:data:`_TREE_KEYS`) the tree mends the chain past it. Lines before the header
that are not JSON (a torn fragment the header was written after) are skipped, as pi does.

Speed: a 50 MB file is parsed with orjson line by line, with the cyclic garbage
collector paused (it would otherwise rescan the growing heap of new objects over and
over, which more than doubles the load time). Entries stay parsed JSON
(:class:`UnreadEntry`) until someone asks for them; labels and session names, which the
tree indexes, are made into objects at once.
"""

from __future__ import annotations

import gc
import os
import re
from contextlib import contextmanager
from typing import Any, BinaryIO, Iterable, Iterator

from attrs import define, field

from pi_core.codec import DecodeError, line_from_json, loads_json
from pi_core.entries import SESSION_VERSION, Entry, SessionHeader, UnknownEntry


_SPACE = b" \t\r\n"


class SessionError(Exception):
    """A session cannot be opened, written or changed as asked; the message says why."""


@define
class Problem:
    """Something wrong on one line of a session file; the rest of the file still opens."""

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@define
class RawLine:
    """A line of an old-version file, kept as JSON (or as bytes when unreadable) until
    it is migrated."""

    number: int
    value: Any = None
    text: bytes = b""


@define
class FileContents:
    header: SessionHeader | None = None
    version: int = SESSION_VERSION
    entries: list[Entry] = field(factory=list)
    line_numbers: list[int] = field(factory=list)
    raw_lines: list[RawLine] = field(factory=list)  # only for files older than version 3
    problems: list[Problem] = field(factory=list)
    length: int = 0  # bytes read
    torn_line: int = 0  # the number of an incomplete last line (skipped), else 0
    missing_newline: bool = False  # the file does not end in a newline
    bridges: dict = field(factory=dict)  # id -> (parent id, line) of unusable lines


@contextmanager
def gc_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def read_session_file(path: str | os.PathLike) -> FileContents:
    """Read ``path``; raises :class:`SessionError` when it is not a session file at all
    (its first line is not a session header). An empty file gives no header."""
    with open(path, "rb", buffering=0) as f:
        return _read(_split_lines(f), os.fspath(path))


def read_session_lines(lines: Iterable[bytes], name: str = "session") -> FileContents:
    """Read a session file given as lines (each with its newline; the last may lack it)."""
    return _read(((line[:-1], True) if line.endswith(b"\n") else (line, False)
                  for line in lines), name)


def _split_lines(f: BinaryIO, size: int = 1 << 22) -> Iterator[tuple[memoryview, bool]]:
    """The lines of ``f`` without their newline, and whether each had one.

    Lines are views into one reused buffer, valid until the next line is asked for: no
    bytes object per line, so the heap holds little besides what the session keeps.
    """
    buffer = bytearray(size)
    view = memoryview(buffer)
    start = end = 0
    while True:
        newline = buffer.find(b"\n", start, end)
        if newline >= 0:
            yield view[start:newline], True
            start = newline + 1
            continue
        if start:
            buffer[: end - start] = buffer[start:end]
            end, start = end - start, 0
        if end == len(buffer):  # a line longer than the buffer: move to a bigger one
            bigger = bytearray(2 * len(buffer))
            bigger[:end] = buffer[:end]
            buffer, view = bigger, memoryview(bigger)
        read = f.readinto(view[end:])
        if not read:
            if end > start:
                yield view[start:end], False
            return
        end += read


def _read(lines: Iterable[tuple[memoryview | bytes, bool]], name: str) -> FileContents:
    out = FileContents()
    number = 0
    offset = 0
    header_seen = False
    skipped_before_header = 0
    with gc_paused():
        for raw, terminated in lines:
            number += 1
            offset += len(raw) + terminated
            if not raw or raw[0] in _SPACE and bytes(raw).isspace():
                continue  # blank lines are skipped, as pi does
            if not terminated:
                out.missing_newline = True
                if _is_torn(raw):
                    out.torn_line = number
                    out.problems.append(Problem(
                        number, f"incomplete last line ({len(raw)} bytes), the end of an "
                                "interrupted write; it is skipped and stays in the file"))
                    if header_seen and out.version < SESSION_VERSION:
                        out.raw_lines.append(RawLine(number, None, bytes(raw)))
                    continue
            if not header_seen:
                if _is_torn(raw):  # a fragment the header was written after, as pi skips
                    skipped_before_header += 1
                    out.problems.append(Problem(number, "not valid JSON before the session "
                                                        "header; the line is skipped"))
                    continue
                out.header, out.version = _read_header(name, raw, number)
                header_seen = True
            elif out.version < SESSION_VERSION:
                _keep_raw(out, raw, number)
            else:
                _read_entry(out, raw, number)
    if not header_seen and skipped_before_header:
        raise SessionError(f"{name}: no session header, only lines that are not JSON; "
                           "this is not a pi session file")
    out.length = offset
    return out


def _is_torn(raw) -> bool:
    try:
        loads_json(raw)
    except DecodeError:
        return True
    return False


def _read_header(name: str, raw: bytes, number: int) -> tuple[SessionHeader, int]:
    try:
        value = loads_json(raw)
    except DecodeError as exc:
        raise SessionError(f"{name}: line {number} should be the session header "
                           f"but is not valid JSON ({exc})") from None
    if not isinstance(value, dict) or value.get("type") != "session" or not isinstance(
        value.get("id"), str
    ):
        raise SessionError(
            f"{name}: line {number} is not a session header "
            '({"type":"session","id":...}); this is not a pi session file'
        )
    version = value.get("version", 1)
    if not isinstance(version, int):
        version = 1
    try:
        header = line_from_json(value)
    except DecodeError as exc:
        raise SessionError(f"{name}: line {number}: unreadable header ({exc})") from None
    return header, version


# The start of a line as pi (and we) write it: enough to see where an unusable line sat.
_TREE_KEYS = re.compile(
    rb'\{"type":"[^"\\]*","id":"([^"\\]+)","parentId":(?:"([^"\\]+)"|null)[,}]')


def _salvage(out: FileContents, raw, number: int) -> None:
    """Note the id and parent of an unusable line, so the chain can be mended past it."""
    found = _TREE_KEYS.match(raw)
    if found is not None:
        parent = found.group(2)
        out.bridges.setdefault(found.group(1).decode("utf-8", "replace"), (
            parent.decode("utf-8", "replace") if parent is not None else None, number))


def _parse(out: FileContents, raw: bytes, number: int) -> dict | None:
    try:
        value = loads_json(raw)
    except DecodeError as exc:
        out.problems.append(Problem(number, f"{exc}; the line is skipped"))
        _salvage(out, raw, number)
        return None
    if not isinstance(value, dict):
        out.problems.append(Problem(number, "not a JSON object; the line is skipped"))
        return None
    if value.get("type") == "session":
        out.problems.append(Problem(number, "a second session header; it is ignored"))
        return None
    return value


def _read_entry(out: FileContents, raw: bytes, number: int) -> None:
    value = _parse(out, raw, number)
    if value is None:
        return
    if not isinstance(value.get("id"), str):
        out.problems.append(Problem(number, "entry without an id; the line is skipped"))
        return
    if value.get("type") in _INDEXED:
        entry, problem = read_entry(value, number)
        if problem is not None:
            out.problems.append(problem)
    else:
        entry = UnreadEntry(value, number)
    out.entries.append(entry)
    out.line_numbers.append(number)


_INDEXED = frozenset({"label", "session_info"})  # the tree indexes these: read them at once


class UnreadEntry:
    """An entry parsed from its line but not yet made into objects.

    The tree turns it into its entry class the first time anyone asks for it (see
    :meth:`SessionTree.get`), so opening a long session builds only what is used: the
    path from the leaf, usually shortened by a compaction.
    """

    __slots__ = ("value", "line", "id", "parent_id", "type", "position")

    def __init__(self, value: dict, line: int) -> None:
        self.value = value
        self.line = line
        self.id: str = value["id"]
        self.parent_id = value.get("parentId")
        self.type = value.get("type")
        self.position = -1  # index in the tree's entry list, set by the tree

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UnreadEntry) and (self.value, self.line) == (
            other.value, other.line)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"UnreadEntry(line={self.line}, id={self.id!r})"


def read_entry(value: dict, line: int) -> tuple[Entry, Problem | None]:
    """The entry of a parsed line; one that does not have its type's shape is kept as an
    :class:`UnknownEntry` (it stays in the tree, out of the context) with a problem."""
    try:
        return line_from_json(value), None
    except DecodeError as exc:
        return UnknownEntry(value), Problem(
            line, f"{value.get('type')} entry {value['id']!r} cannot be read ({exc}); "
                  "it stays in the tree but is left out of the context")


def _keep_raw(out: FileContents, raw: bytes, number: int) -> None:
    try:
        value = loads_json(raw)
    except DecodeError as exc:
        out.problems.append(Problem(number, f"{exc}; the line is skipped"))
        out.raw_lines.append(RawLine(number, None, bytes(raw)))
        return
    out.raw_lines.append(RawLine(number, value, bytes(raw)))
