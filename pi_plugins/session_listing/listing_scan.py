"""What the session listing needs from one file, read without parsing the file.

Lines pi (and we) write start with ``{"type":"…"`` and a message's with ``{"role":"…"``,
so the message count is a byte count and only the header, the first user message, the
last ``session_info`` and the last user and assistant messages are parsed (a file not
written that way is parsed line by line, with the same result). Files only grow, so an
earlier scan is brought up to date from the bytes added since (same inode and header
line, a newline where it stopped); anything else is scanned from the start.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from pi_core.protocol.codec import DecodeError, loads_json
from pi_core.protocol.entries import iso_to_ms
from pi_core.protocol.records import record

_LINE = b'\n{"type":"'
_MESSAGE_LINE = b'\n{"type":"message",'
_INFO_LINE = b'\n{"type":"session_info",'
_USER = b'"message":{"role":"user"'
_ASSISTANT = b'"message":{"role":"assistant"'
_UNSET: Any = "\0unset"


@record
class FileFacts:
    """The listing's facts about one session file, and where its scan stopped."""

    size: int
    mtime_ns: int
    inode: int
    header_line: str  # the exact first line: a rewrite (migration) changes it
    scanned: int  # bytes scanned, up to a newline (else the next scan starts over)
    id: str
    cwd: str
    parent_session: str | None
    created: str | None  # the header's ISO timestamp
    name: str | None
    message_count: int
    first_message: str
    last_activity: int | None  # Unix ms of the latest user or assistant message


def scan_file(path: str | os.PathLike, previous: FileFacts | None = None) -> FileFacts | None:
    """The facts of ``path`` (None if it is no session file), reusing ``previous``."""
    try:
        stat = os.stat(path)
        if previous is not None and (stat.st_size, stat.st_mtime_ns, stat.st_ino) == (
                previous.size, previous.mtime_ns, previous.inode):
            return previous
        with open(path, "rb") as f:
            first = f.readline()
            header = parse_line(first)
            if not is_header(header):
                return None
            header_line = first.decode("utf-8", "replace")
            if (previous is not None and previous.inode == stat.st_ino
                    and previous.header_line == header_line
                    and len(first) < previous.scanned <= stat.st_size):
                f.seek(previous.scanned - 1)
                tail = f.read()
                if tail[:1] == b"\n":
                    return _grown(previous, tail, stat)
            f.seek(len(first) - 1 if first.endswith(b"\n") else len(first))
            rest = f.read()
    except OSError:
        return None
    facts = FileFacts(
        size=stat.st_size, mtime_ns=stat.st_mtime_ns, inode=stat.st_ino,
        header_line=header_line, scanned=len(first), id=header["id"],
        cwd=header["cwd"] if isinstance(header.get("cwd"), str) else "",
        parent_session=_str_or_none(header.get("parentSession")),
        created=_str_or_none(header.get("timestamp")), name=None, message_count=0,
        first_message="", last_activity=None,
    )
    if not first.endswith(b"\n"):
        return facts
    return _grown(facts, rest, stat)


def _grown(facts: FileFacts, tail: bytes, stat: os.stat_result) -> FileFacts:
    """``facts`` updated with ``tail``: the bytes after ``facts.scanned``, starting with
    the newline that ended the last line scanned."""
    end = _complete_end(tail)
    count, first_message, name, last_activity = _scan(tail, end)
    return FileFacts(
        size=stat.st_size, mtime_ns=stat.st_mtime_ns, inode=stat.st_ino,
        header_line=facts.header_line, scanned=facts.scanned + max(end - 1, 0),
        id=facts.id, cwd=facts.cwd, parent_session=facts.parent_session,
        created=facts.created, name=facts.name if name is _UNSET else name,
        message_count=facts.message_count + count,
        first_message=facts.first_message or first_message,
        last_activity=max(filter(None, (facts.last_activity, last_activity)), default=None),
    )


def _scan(data: bytes, end: int) -> tuple[int, str, Any, int | None]:
    """(messages, first user text, last name or _UNSET, last activity) of the lines
    in ``data[:end]``, which starts with a newline."""
    lines = data.count(b"\n", 0, max(end - 1, 0))
    if data.count(_LINE, 0, end) == lines:
        facts = _scan_fast(data, end)
        if facts is not None:
            return facts
    return _scan_slow(data, end)


def _scan_fast(data: bytes, end: int) -> tuple[int, str, Any, int | None] | None:
    count = data.count(_MESSAGE_LINE, 0, end)
    first_message = ""
    users = 0
    for value in _lines_with(data, _USER, end):
        users += 1
        first_message = _user_text(value)
        if first_message:
            break
    if count and not users and data.find(_ASSISTANT, 0, end) < 0:
        return None  # messages whose role is not their first key: read line by line
    name = _UNSET
    for value in _lines_with(data, _INFO_LINE, end, backwards=True):
        name = _name(value)
        break
    last_activity = None
    for needle in (_USER, _ASSISTANT):
        for value in _lines_with(data, needle, end, backwards=True):
            stamp = _activity(value)
            if stamp is not None:
                last_activity = max(last_activity or 0, stamp)
                break
    return count, first_message, name, last_activity


def _scan_slow(data: bytes, end: int) -> tuple[int, str, Any, int | None]:
    count, first_message, name, last_activity = 0, "", _UNSET, None
    for raw in data[:end].split(b"\n"):
        value = parse_line(raw) if raw.strip() else None
        if not isinstance(value, dict):
            continue
        if value.get("type") == "session_info":
            name = _name(value)
        if value.get("type") != "message":
            continue
        count += 1
        if not first_message:
            first_message = _user_text(value)
        stamp = _activity(value)
        if stamp is not None:
            last_activity = max(last_activity or 0, stamp)
    return count, first_message, name, last_activity


def _lines_with(data: bytes, needle: bytes, end: int, backwards: bool = False
                ) -> Iterator[dict]:
    """The parsed lines holding ``needle``, first to last (or last to first)."""
    position = data.rfind(needle, 0, end) if backwards else data.find(needle, 0, end)
    while position >= 0:
        line_start = data.rfind(b"\n", 0, position + 1) + 1
        line_end = data.find(b"\n", line_start, end)
        line_end = end if line_end < 0 else line_end
        value = parse_line(data[line_start:line_end])
        if isinstance(value, dict):
            yield value
        if backwards:
            position = data.rfind(needle, 0, line_start)
        else:
            position = data.find(needle, line_end, end)


def _user_text(value: dict) -> str:
    """The text of a user message entry (pi shows the first non-empty one)."""
    message = value.get("message")
    if value.get("type") != "message" or not isinstance(message, dict):
        return ""
    if message.get("role") != "user":
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(block.get("text", "") for block in content
                        if isinstance(block, dict) and block.get("type") == "text")
    return ""


def _name(value: dict) -> str | None:
    name = value.get("name")
    return (name.strip() or None) if isinstance(name, str) else None


def _activity(value: dict) -> int | None:
    """When a user or assistant message happened, in Unix ms (pi's rule)."""
    message = value.get("message")
    if value.get("type") != "message" or not isinstance(message, dict):
        return None
    if message.get("role") not in ("user", "assistant") or "content" not in message:
        return None
    stamp = message.get("timestamp")
    if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
        return int(stamp)
    stamp = value.get("timestamp")
    return (iso_to_ms(stamp) or None) if isinstance(stamp, str) else None


def _complete_end(data: bytes) -> int:
    """Where the complete lines end: an unreadable unterminated last line is left out."""
    if data.endswith(b"\n"):
        return len(data)
    last = data.rfind(b"\n") + 1
    return len(data) if parse_line(data[last:]) is not None else last


def parse_line(raw: bytes) -> Any:
    """One JSON line, or None where it is not JSON."""
    try:
        return loads_json(raw)
    except DecodeError:
        return None


def is_header(value: Any) -> bool:
    """A session file's first line: ``{"type": "session", "id": ...}``."""
    return isinstance(value, dict) and value.get("type") == "session" and isinstance(
        value.get("id"), str)


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None

