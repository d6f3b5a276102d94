"""The offset index of a long session file: where each entry's line is, so a resume reads the file's tail and
the lines its context needs, not the whole file.

The index lives in the cache folder (:func:`pi_core.paths.session_side_file`), never beside the session (an
old ``<name>.jsonl.idx`` there is ignored). It holds what the reader found in the file's first ``length``
bytes (each entry's offset, length, line, id, parent and type; the problems and mendable lines), with the
header line and a hash of the bytes just before ``length`` to tell whether it still describes the file.
Session files only grow, so a matching index covers the start and only the rest is scanned; any other is
ignored and written again. The JSONL file stays the source of truth: the index is a cache, written after a
scan of at least :data:`INDEX_AT` bytes, where a cache folder can be.
"""

from __future__ import annotations

import hashlib
import os

from pi_core.paths import session_side_file, write_file
from pi_core.protocol.codec import DecodeError, line_from_json, loads_json
from pi_core.protocol.entries import Entry, SessionHeader
from pi_core.session.reader import FileContents, LineSource, Problem, UnreadEntry, read_entry

INDEX_KIND = "idx"
INDEX_VERSION = 1
INDEX_AT = 1 << 20  # bytes scanned: below this a scan is cheaper than the index
_CHECKED = 4096  # bytes before the indexed length whose hash must match


def index_path(session_file: str) -> str | None:
    """The index's file in the cache folder (None: no cache folder)."""
    return session_side_file(session_file, INDEX_KIND)


def _fingerprint(source: LineSource, length: int) -> str:
    start = max(0, length - _CHECKED)
    return hashlib.blake2b(source.read(start, length - start), digest_size=16).hexdigest()


def load(session_file: str, source: LineSource) -> FileContents | None:
    """What the index knows of ``session_file``, or None when there is no index or it no
    longer matches the file (the header line and the bytes before its end)."""
    path = index_path(session_file)
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            value = loads_json(f.read())
        if not isinstance(value, dict) or value.get("version") != INDEX_VERSION:
            return None
        length = value["length"]
        header_line: str = value["header"]
        fd = source.fd
        if fd is None or os.fstat(fd).st_size < length:
            return None
        first = header_line.encode("utf-8", "surrogateescape")
        if (source.read(0, len(first) + 1) != first + b"\n"
                or _fingerprint(source, length) != value["check"]):
            return None
        out = FileContents()
        header = line_from_json(loads_json(first))
        if not isinstance(header, SessionHeader):
            return None
        out.header = header
        out.version = value["fileVersion"]
        out.lines = value["lines"]
        out.length = length
        entries, numbers, spans = out.entries, out.line_numbers, out.spans
        previous = None
        for offset, size, line, entry_id, parent, kind in value["entries"]:
            if parent == previous:  # mostly: one string for the id and its child's parent
                parent = previous
            previous = entry_id
            entry: Entry | UnreadEntry
            if kind in ("label", "session_info"):  # the tree indexes these: read them now
                entry = read_entry(loads_json(source.read(offset, size)), line)[0]
            else:  # (a problem reading one was found by the scan, and is stored below)
                entry = UnreadEntry(entry_id, parent, kind, line, offset, size, source, None)
            entries.append(entry)
            numbers.append(line)
            spans.append((offset, size))
        out.problems.extend(Problem(line, message) for line, message in value["problems"])
        out.bridges = {entry_id: (parent, line) for entry_id, parent, line in value["bridges"]}
        return out
    except (OSError, DecodeError, KeyError, TypeError, ValueError):
        return None


def save(session_file: str, contents: FileContents) -> None:
    """Write the index for what ``contents`` read of the file (its complete lines)."""
    import orjson

    source = contents.source
    assert source is not None  # an index is saved only for a file read from disk
    length, lines = contents.length, contents.lines
    count = len(contents.entries)
    if contents.missing_newline:  # the last line may still change: stop before it
        while count and contents.line_numbers[count - 1] >= lines:
            count -= 1
        if not count:
            return
        offset, size = contents.spans[count - 1]
        length, lines = offset + size + 1, contents.line_numbers[count - 1]
    rows = []
    for entry, line, (offset, size) in zip(contents.entries[:count], contents.line_numbers,
                                           contents.spans, strict=False):
        rows.append((offset, size, line, entry.id, entry.parent_id, entry.type))
    target = index_path(session_file)
    if target is None:
        return
    try:
        header_line = source.read(0, 1 << 16).split(b"\n", 1)[0]
        data = orjson.dumps({
            "version": INDEX_VERSION, "fileVersion": contents.version, "length": length,
            "lines": lines, "header": header_line.decode("utf-8", "surrogateescape"),
            "check": _fingerprint(source, length), "entries": rows,
            "problems": [(p.line, p.message) for p in contents.problems if p.line <= lines],
            "bridges": [(k, v[0], v[1]) for k, v in contents.bridges.items() if v[1] <= lines],
        })
    except (OSError, TypeError, ValueError):
        return
    write_file(target, data)
