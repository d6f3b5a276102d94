"""Reading a session file: every complete line kept, every bad one named by its number.

The reader never changes the file. It reports the header, the entries with their line
numbers, the problems, and whether the file ends without a newline (so the writer starts
the next entry on a line of its own). What pi reads, we read: invalid UTF-8 becomes U+FFFD;
an unusable line costs only itself (where its id and parent can be made out, the tree
mends the chain past it); non-JSON lines before the header (a torn fragment) are skipped.

Speed: a line as pi (and we) write it starts ``{"type":…,"id":…,"parentId":…`` and ends
with ``}``: those keys are read from its first bytes (:data:`_TREE_KEYS`) and the entry
is kept as where its line is (:class:`UnreadEntry`), parsed when first asked for. Opening
a long session so costs a scan of its bytes (with :mod:`pi_core.session.offsets`, only of
those added since); the context parses just the path after the last compaction.
"""

from __future__ import annotations

import gc
import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from io import FileIO
from typing import Any, final

from pi_core.protocol.codec import DecodeError, line_from_json, loads_json
from pi_core.protocol.entries import SESSION_VERSION, Entry, SessionHeader, UnknownEntry
from pi_core.protocol.records import field, record

_SPACE = b" \t\r\n"


class SessionError(Exception):
    """A session cannot be opened, written or changed as asked; the message says why."""


@record
class Problem:
    """Something wrong on one line of a session file; the rest of the file still opens."""

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@record
class RawLine:
    """A line of an old-version file, kept until it is migrated."""

    number: int
    value: Any = None
    text: bytes = b""


@record
class FileContents:
    header: SessionHeader | None = None
    version: int = SESSION_VERSION
    entries: list[Entry | UnreadEntry] = field(factory=list)
    line_numbers: list[int] = field(factory=list)
    raw_lines: list[RawLine] = field(factory=list)  # only for files older than version 3
    problems: list[Problem] = field(factory=list)
    length: int = 0  # bytes read
    missing_newline: bool = False  # the file does not end in a newline
    bridges: dict = field(factory=dict)  # id -> (parent id, line) of unusable lines
    spans: list[tuple[int, int]] = field(factory=list)  # (offset, length) of each entry's line
    lines: int = 0  # lines read (the number of the last one)
    source: LineSource | None = None  # where unread entries are read back from
    scanned: int = 0  # bytes scanned now (the rest came from the offset index)


@contextmanager
def gc_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class LineSource:
    """A read-only descriptor on a session file, kept while its entries may be read back
    (a file deleted meanwhile stays readable). Once closed, a read opens it again."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd: int | None = None
        self._open()

    def _open(self) -> int:
        self.fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        return self.fd

    def _descriptor(self) -> int:
        if self.fd is not None:
            return self.fd
        try:
            return self._open()
        except OSError as exc:
            raise SessionError(f"{self.path}: the session file cannot be read "
                               f"again ({exc.strerror})") from None

    def read(self, offset: int, length: int) -> bytes:
        fd = self._descriptor()
        data = _pread(fd, length, offset)
        while len(data) < length:  # a short read: only on odd file systems
            more = _pread(fd, length - len(data), offset + len(data))
            if not more:
                break
            data += more
        return data

    def read_spans(self, spans: list[tuple[int, int]]) -> Iterator[memoryview]:
        """The bytes of each (offset, length) span; close spans come from one read into
        one reused buffer (a call and a buffer per line cost a resume a fifth of its
        time). A view is valid until the next one is taken."""
        buffer = bytearray(_BLOCK) if hasattr(os, "preadv") else None
        i, count = 0, len(spans)
        while i < count:
            start, length = spans[i]
            end, j = start + length, i + 1
            while j < count:  # take the next spans while they lie just after this block
                offset, size = spans[j]
                if offset < end or offset - end > _GAP or offset + size - start > _BLOCK:
                    break
                end, j = offset + size, j + 1
            block = (self._read_into(buffer, start, end - start)
                     if buffer is not None and end - start <= _BLOCK else
                     memoryview(self.read(start, end - start)))
            for offset, size in spans[i:j]:
                yield block[offset - start:offset - start + size]
            i = j

    def _read_into(self, buffer: bytearray, offset: int, length: int) -> memoryview:
        fd = self._descriptor()
        view = memoryview(buffer)[:length]
        done = 0
        while done < length:
            got = os.preadv(fd, [view[done:]], offset + done)
            if not got:
                break
            done += got
        return view[:done]

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


_BLOCK = 1 << 20  # bytes read at once by read_spans
_GAP = 1 << 14  # bytes between two spans that read_spans reads over rather than seek past


def _seek_read(fd: int, length: int, offset: int) -> bytes:  # pragma: no cover - Windows
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, length)


_pread = getattr(os, "pread", _seek_read)


def read_session_file(path: str | os.PathLike, *, use_index: bool = True) -> FileContents:
    """Read ``path`` (:class:`SessionError`: not a session file; an empty one has no
    header). With ``use_index`` the offset index supplies the file's start, if it still
    matches, and only the rest is scanned; a long scan writes the index again."""
    from pi_core.session import offsets

    name = os.fspath(path)
    source = LineSource(name)
    try:
        out = offsets.load(name, source) if use_index else None
        start = out.length if out is not None else 0
        if out is None:
            out = FileContents()
        with open(os.dup(source._descriptor()), "rb", buffering=0) as f:
            f.seek(start)
            _read(_split_lines(f), name, out, source, start)
        out.source = source
        if use_index and out.version >= SESSION_VERSION and out.scanned >= offsets.INDEX_AT:
            offsets.save(name, out)
    except BaseException:
        source.close()
        raise
    return out


def read_session_lines(lines: Iterable[bytes], name: str = "session") -> FileContents:
    """Read a session file given as lines (each with its newline, but maybe the last)."""
    out = FileContents()
    _read(((line[:-1], True) if line.endswith(b"\n") else (line, False) for line in lines),
          name, out, None, 0)
    return out


def _split_lines(f: FileIO, size: int = 1 << 22) -> Iterator[tuple[memoryview, bool]]:
    """The lines of ``f`` without their newline, and whether each had one: views into one
    reused buffer (valid until the next), no bytes object per line."""
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


def _read(lines: Iterable[tuple[memoryview | bytes, bool]], name: str, out: FileContents,
          source: LineSource | None, offset: int) -> None:
    """Read ``lines`` (starting at byte ``offset``, after ``out.lines`` lines) into ``out``."""
    number = out.lines
    header_seen = out.header is not None
    skipped_before_header = 0
    start = offset
    match = _TREE_KEYS.match
    types = _TYPES
    with gc_paused():
        for raw, terminated in lines:
            number += 1
            at = offset
            offset += len(raw) + terminated
            if not raw or raw[0] in _SPACE and bytes(raw).isspace():
                continue  # blank lines are skipped, as pi does
            if not terminated:
                out.missing_newline = True
                if _is_torn(raw):
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
                found = match(raw)
                if (found is not None and raw[-1] == 125  # "}": a whole line, as written
                        and found.group(1) not in _INDEXED_LINES):
                    parent = found.group(3)
                    kind = found.group(1)
                    entry = UnreadEntry(
                        found.group(2).decode("utf-8", "replace"),
                        None if parent is None else parent.decode("utf-8", "replace"),
                        types.get(kind) or kind.decode("utf-8", "replace"), number, at,
                        len(raw), source, None if source is not None else bytes(raw))
                    out.entries.append(entry)
                    out.line_numbers.append(number)
                    out.spans.append((at, len(raw)))
                else:
                    _read_entry(out, raw, number, at)
    if not header_seen and skipped_before_header:
        raise SessionError(f"{name}: no session header, only lines that are not JSON; "
                           "this is not a pi session file")
    out.lines = number
    out.length = offset
    out.scanned = offset - start


def _is_torn(raw) -> bool:
    try:
        loads_json(raw)
    except DecodeError:
        return True
    return False


def _read_header(name: str, raw: memoryview | bytes, number: int) -> tuple[SessionHeader, int]:
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
    assert isinstance(header, SessionHeader)  # its type is "session", checked above
    return header, version


# The start of a line as pi (and we) write it: type, id and parent, without parsing it.
_TREE_KEYS = re.compile(
    rb'\{"type":"([^"\\]*)","id":"([^"\\]+)","parentId":(?:"([^"\\]+)"|null)[,}]')
_INDEXED_TYPES = frozenset({"label", "session_info"})  # the tree indexes these: read them at once
_INDEXED_LINES = frozenset(t.encode() for t in _INDEXED_TYPES)
_TYPES = {t.encode(): t for t in ("message", "model_change", "thinking_level_change",
                                  "compaction", "branch_summary", "custom", "custom_message")}


def _salvage(out: FileContents, raw, number: int) -> None:
    """Note the id and parent of an unusable line, so the chain can be mended past it."""
    found = _TREE_KEYS.match(raw)
    if found is not None:
        parent = found.group(3)
        out.bridges.setdefault(found.group(2).decode("utf-8", "replace"), (
            parent.decode("utf-8", "replace") if parent is not None else None, number))


def _parse(out: FileContents, raw: memoryview | bytes, number: int) -> dict | None:
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


def _read_entry(out: FileContents, raw: memoryview | bytes, number: int, at: int) -> None:
    value = _parse(out, raw, number)
    if value is None:
        return
    if not isinstance(value.get("id"), str):
        out.problems.append(Problem(number, "entry without an id; the line is skipped"))
        return
    entry: Entry | UnreadEntry
    if value.get("type") in _INDEXED_TYPES:
        entry, problem = read_entry(value, number)
        if problem is not None:
            out.problems.append(problem)
    else:
        parent = value.get("parentId")
        kind = value.get("type")
        entry = UnreadEntry(value["id"], parent if isinstance(parent, str) else None,
                            kind if isinstance(kind, str) else None, number, 0, 0, None, value)
    out.entries.append(entry)
    out.line_numbers.append(number)
    out.spans.append((at, len(raw)))


@final  # never subclassed: the tree tells it apart by ``type(x) is UnreadEntry``
class UnreadEntry:
    """An entry not yet parsed (see the module docstring): where its line is, its type,
    id and parent; ``raw`` its bytes (or JSON) when there is no file to read back from."""

    __slots__ = ("id", "parent_id", "type", "line", "offset", "length", "source", "raw",
                 "position")

    def __init__(self, entry_id: str, parent_id: str | None, kind: str | None, line: int,
                 offset: int, length: int, source: LineSource | None, raw: Any) -> None:
        self.id, self.parent_id, self.type, self.line = entry_id, parent_id, kind, line
        self.offset, self.length, self.source, self.raw = offset, length, source, raw
        self.position = -1  # index in the tree's entry list, set by the tree

    def value(self, raw: Any = None) -> dict:
        """The line's JSON (from ``raw``, its bytes, when the caller has read them)."""
        if raw is None:
            raw = self.raw
        if raw is None:
            assert self.source is not None  # raw is kept whenever there is no source
            raw = self.source.read(self.offset, self.length)
        elif isinstance(raw, dict):
            return raw
        value = loads_json(raw)
        if not isinstance(value, dict):
            raise DecodeError("not a JSON object")
        return value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UnreadEntry) and (
            self.id, self.parent_id, self.type, self.line, self.offset, self.length) == (
            other.id, other.parent_id, other.type, other.line, other.offset, other.length)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"UnreadEntry(line={self.line}, id={self.id!r})"


def read_unread(unread: UnreadEntry, raw: Any = None) -> tuple[Entry, Problem | None]:
    """The entry of an unread line (``raw``: its bytes, if already read), as :func:`read_entry`."""
    try:
        value = unread.value(raw)
    except DecodeError as exc:
        value = {"type": unread.type, "id": unread.id, "parentId": unread.parent_id}
        return UnknownEntry(value), Problem(
            unread.line, f"{unread.type} entry {unread.id!r} is not valid JSON ({exc}); it "
                         "stays in the tree but is left out of the context")
    return read_entry(value, unread.line)


def read_entry(value: dict, line: int) -> tuple[Entry, Problem | None]:
    """The entry of a parsed line; one that does not have its type's shape is kept as an
    :class:`UnknownEntry` (it stays in the tree, out of the context) with a problem."""
    try:
        entry = line_from_json(value)
    except DecodeError as exc:
        return UnknownEntry(value), Problem(
            line, f"{value.get('type')} entry {value['id']!r} cannot be read ({exc}); "
                  "it stays in the tree but is left out of the context")
    if isinstance(entry, SessionHeader):  # a header with a parentId, among the entries
        return UnknownEntry(value), Problem(
            line, f"a second session header {value['id']!r}; it stays in the tree but is "
                  "left out of the context")
    return entry, None


def _keep_raw(out: FileContents, raw: memoryview | bytes, number: int) -> None:
    try:
        value = loads_json(raw)
    except DecodeError as exc:
        out.problems.append(Problem(number, f"{exc}; the line is skipped"))
        value = None
    out.raw_lines.append(RawLine(number, value, bytes(raw)))
