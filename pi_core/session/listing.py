"""Listing sessions for ``/resume`` and ``pi -r``: name, first message, modified, count.

Reading only what the listing needs: a file is read as bytes and searched, not parsed.
Lines written by pi (and by us) start with ``{"type":"…"`` and a message entry's message
starts with ``{"role":"…"``, so the message count is a byte count, and only the header,
the first user message, the last ``session_info`` and the last user and assistant
messages are parsed. A file whose lines do not all have that shape is parsed line by
line instead, with the same result.

``modified`` is pi's: the time of the latest user or assistant message, else the
header's timestamp, else the file's mtime.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from attrs import define

from pi_core.codec import DecodeError, loads_json
from pi_core.session.locations import SESSION_SUFFIX, session_dir_for, sessions_root

NO_MESSAGES = "(no messages)"

_LINE = b'\n{"type":"'
_MESSAGE_LINE = b'\n{"type":"message",'
_INFO_LINE = b'\n{"type":"session_info",'
_ROLE = b'"message":{"role":"'
_USER = b'"message":{"role":"user"'
_ASSISTANT = b'"message":{"role":"assistant"'


@define(frozen=True)
class SessionInfo:
    path: Path
    id: str
    cwd: str
    name: str | None
    parent_session: str | None
    created: datetime
    modified: datetime
    message_count: int
    first_message: str


@define(frozen=True)
class FoundSession:
    """Where a ``--session`` / ``--fork`` argument led: ``scope`` is ``path`` (it was
    one), ``local`` (an id in this project) or ``global`` (an id in another project)."""

    path: Path
    scope: str
    cwd: str | None = None


def list_sessions(directory: str | os.PathLike) -> list[SessionInfo]:
    """The sessions in one folder, most recently modified first."""
    infos = [info for path in _session_files(Path(directory))
             if (info := read_session_info(path)) is not None]
    infos.sort(key=lambda info: info.modified, reverse=True)
    return infos


def list_all_sessions(root: str | os.PathLike | None = None) -> list[SessionInfo]:
    """The sessions of every project under ``root`` (``<agent dir>/sessions``)."""
    root = Path(root) if root is not None else sessions_root()
    infos = []
    try:
        folders = [entry.path for entry in os.scandir(root) if entry.is_dir()]
    except OSError:
        return []
    for folder in folders:
        infos.extend(info for path in _session_files(Path(folder))
                     if (info := read_session_info(path)) is not None)
    infos.sort(key=lambda info: info.modified, reverse=True)
    return infos


def most_recent_session(directory: str | os.PathLike) -> Path | None:
    """The session file in ``directory`` modified last (by mtime), for ``pi -c``."""
    best: tuple[int, Path] | None = None
    for path in _session_files(Path(directory)):
        try:
            mtime = path.stat().st_mtime_ns
        except OSError:
            continue
        if (best is None or mtime > best[0]) and read_header(path) is not None:
            best = (mtime, path)
    return best[1] if best else None


def find_session(
    arg: str,
    cwd: str | os.PathLike,
    sessions_dir: str | os.PathLike | None = None,
    root: str | os.PathLike | None = None,
) -> FoundSession | None:
    """Resolve a ``--session`` argument: a path (it has a separator or ends in
    ``.jsonl``), else the prefix of a session id, looked for in this project first."""
    if "/" in arg or "\\" in arg or arg.endswith(SESSION_SUFFIX):
        return FoundSession(Path(arg), "path")
    directory = Path(sessions_dir) if sessions_dir is not None else session_dir_for(cwd, root)
    for path in _session_files(directory):
        header = read_header(path)
        if header is not None and header["id"].startswith(arg):
            return FoundSession(path, "local", header.get("cwd"))
    for info in list_all_sessions(root):
        if info.id.startswith(arg):
            return FoundSession(info.path, "global", info.cwd)
    return None


def read_header(path: Path) -> dict | None:
    """The header of a session file, or None if it does not start with one."""
    try:
        with open(path, "rb") as f:
            value = loads_json(f.readline())
    except (OSError, DecodeError):
        return None
    return value if _is_header(value) else None


def read_session_info(path: str | os.PathLike) -> SessionInfo | None:
    """What the listing shows of one file, or None if it is not a session file."""
    path = Path(path)
    try:
        data = path.read_bytes()
        mtime = path.stat().st_mtime
    except OSError:
        return None
    first_end = data.find(b"\n")
    header = _parse(data[: first_end if first_end >= 0 else len(data)])
    if not _is_header(header):
        return None
    end = _complete_end(data)
    line_count = data.count(b"\n", first_end, end - 1) if first_end >= 0 else 0
    fast = (
        first_end >= 0
        and data.count(_LINE, first_end, end) == line_count
        and data.count(_ROLE, first_end, end) == data.count(_MESSAGE_LINE, first_end, end)
    )
    facts = _scan_fast(data, first_end, end) if fast else _scan_slow(data, first_end, end)
    count, first_message, name, last_activity = facts
    return SessionInfo(
        path=path,
        id=header["id"],
        cwd=header.get("cwd") if isinstance(header.get("cwd"), str) else "",
        name=name,
        parent_session=header.get("parentSession"),
        created=_iso(header.get("timestamp")) or datetime.fromtimestamp(mtime, timezone.utc),
        modified=_modified(last_activity, header, mtime),
        message_count=count,
        first_message=first_message or NO_MESSAGES,
    )


# ---------------------------------------------------------------- the two scans


def _scan_fast(data: bytes, start: int, end: int) -> tuple[int, str, str | None, int | None]:
    count = data.count(_MESSAGE_LINE, start, end)
    first_message = ""
    for value in _lines_with(data, _USER, start, end):
        first_message = _text(value)
        if first_message:
            break
    name = None
    for value in _lines_with(data, _INFO_LINE, start, end, backwards=True):
        name = _name(value)
        break
    last_activity = None
    for role in (_USER, _ASSISTANT):
        for value in _lines_with(data, role, start, end, backwards=True):
            stamp = _activity(value)
            if stamp is not None:
                last_activity = max(last_activity or 0, stamp)
                break
    return count, first_message, name, last_activity


def _scan_slow(data: bytes, start: int, end: int) -> tuple[int, str, str | None, int | None]:
    count, first_message, name, last_activity = 0, "", None, None
    for raw in data[max(start, 0):end].split(b"\n"):
        value = _parse(raw) if raw.strip() else None
        if not isinstance(value, dict):
            continue
        if value.get("type") == "session_info":
            name = _name(value)
        if value.get("type") != "message":
            continue
        count += 1
        if not first_message:
            first_message = _text(value)
        stamp = _activity(value)
        if stamp is not None:
            last_activity = max(last_activity or 0, stamp)
    return count, first_message, name, last_activity


def _lines_with(data: bytes, needle: bytes, start: int, end: int, backwards: bool = False
                ) -> Iterator[dict]:
    """The parsed lines holding ``needle``, first to last (or last to first)."""
    position = data.rfind(needle, start, end) if backwards else data.find(needle, start, end)
    while position >= 0:
        line_start = data.rfind(b"\n", start, position + 1) + 1
        line_end = data.find(b"\n", line_start, end)
        line_end = end if line_end < 0 else line_end
        value = _parse(data[line_start:line_end])
        if isinstance(value, dict):
            yield value
        if backwards:
            position = data.rfind(needle, start, line_start)
        else:
            position = data.find(needle, line_end, end)


# ---------------------------------------------------------------- facts from lines


def _text(value: dict) -> str:
    """The text of a user message entry (pi shows the first such message)."""
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
    return name.strip() or None if isinstance(name, str) else None


def _activity(value: dict) -> int | None:
    """When a user or assistant message happened, in Unix ms."""
    message = value.get("message")
    if value.get("type") != "message" or not isinstance(message, dict):
        return None
    if message.get("role") not in ("user", "assistant") or "content" not in message:
        return None
    stamp = message.get("timestamp")
    if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
        return int(stamp)
    moment = _iso(value.get("timestamp"))
    return int(moment.timestamp() * 1000) if moment else None


def _modified(last_activity: int | None, header: dict, mtime: float) -> datetime:
    if last_activity:
        return datetime.fromtimestamp(last_activity / 1000, timezone.utc)
    return _iso(header.get("timestamp")) or datetime.fromtimestamp(mtime, timezone.utc)


# ---------------------------------------------------------------- helpers


def _session_files(directory: Path) -> list[Path]:
    try:
        return [Path(entry.path) for entry in os.scandir(directory)
                if entry.name.endswith(SESSION_SUFFIX) and entry.is_file()]
    except OSError:
        return []


def _complete_end(data: bytes) -> int:
    """Where the complete lines end: an unreadable unterminated last line is left out."""
    if data.endswith(b"\n"):
        return len(data)
    last = data.rfind(b"\n") + 1
    return len(data) if _parse(data[last:]) is not None else last


def _parse(raw: bytes) -> Any:
    try:
        return loads_json(raw)
    except DecodeError:
        return None


def _is_header(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") == "session" and isinstance(
        value.get("id"), str)


def _iso(stamp: Any) -> datetime | None:
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
