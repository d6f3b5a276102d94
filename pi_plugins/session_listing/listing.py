"""Listing sessions for ``/resume`` and ``pi -r``: name, first message, modified, count,
read through each folder's index (:mod:`pi_plugins.session_listing.listing_index`), so only the new
bytes of changed files are read. ``modified`` is pi's: the latest user or assistant
message, else the header's timestamp, else the file's mtime.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pi_core.protocol.records import record
from pi_core.session.locations import SESSION_SUFFIX, session_dir_for, sessions_root
from pi_plugins.session_listing.listing_index import SessionIndex
from pi_plugins.session_listing.listing_scan import FileFacts, is_header, parse_line, scan_file

NO_MESSAGES = "(no messages)"


@record(frozen=True)
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


@record(frozen=True)
class FoundSession:
    """Where a ``--session`` / ``--fork`` argument led: ``scope`` is ``path`` (it was
    one), ``local`` (an id in this project) or ``global`` (an id in another project)."""

    path: Path
    scope: str
    cwd: str | None = None


def list_sessions(directory: str | os.PathLike) -> list[SessionInfo]:
    """The sessions in one folder, most recently modified first."""
    infos = _list_folder(Path(directory))
    infos.sort(key=lambda info: info.modified, reverse=True)
    return infos


def list_all_sessions(root: str | os.PathLike | None = None) -> list[SessionInfo]:
    """The sessions of every project under ``root`` (``<agent dir>/sessions``)."""
    root = Path(root) if root is not None else sessions_root()
    try:
        folders = [Path(entry.path) for entry in os.scandir(root) if entry.is_dir()]
    except OSError:
        return []
    infos = [info for folder in folders for info in _list_folder(folder)]
    infos.sort(key=lambda info: info.modified, reverse=True)
    return infos


def _list_folder(directory: Path) -> list[SessionInfo]:
    files = _session_files(directory)
    if not files:
        return []
    index = SessionIndex(directory)
    infos = [_info(path, facts) for path in files if (facts := index.facts(path)) is not None]
    index.save()
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


def continue_recent(cwd: str | os.PathLike, sessions_dir: str | os.PathLike | None = None):
    """The most recently modified session of ``cwd`` opened (``pi -c``), or a new one."""
    from pi_core.session import Session

    cwd = os.fspath(cwd)
    directory = Path(sessions_dir) if sessions_dir is not None else session_dir_for(cwd)
    recent = most_recent_session(directory)
    if recent is None:
        return Session.create(cwd, directory)
    return Session.open(recent, directory, cwd=cwd)


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
            value = parse_line(f.readline())
    except OSError:
        return None
    return value if is_header(value) else None


def read_session_info(path: str | os.PathLike) -> SessionInfo | None:
    """What the listing shows of one file, or None if it is not a session file."""
    path = Path(path)
    facts = scan_file(path)
    return _info(path, facts) if facts is not None else None


def _info(path: Path, facts: FileFacts) -> SessionInfo:
    mtime = datetime.fromtimestamp(facts.mtime_ns / 1e9, UTC)
    created = _iso(facts.created)
    if facts.last_activity:
        modified = datetime.fromtimestamp(facts.last_activity / 1000, UTC)
    else:
        modified = created or mtime
    return SessionInfo(
        path=path, id=facts.id, cwd=facts.cwd, name=facts.name,
        parent_session=facts.parent_session, created=created or mtime, modified=modified,
        message_count=facts.message_count, first_message=facts.first_message or NO_MESSAGES,
    )


def _session_files(directory: Path) -> list[Path]:
    try:
        return [Path(entry.path) for entry in os.scandir(directory)
                if entry.name.endswith(SESSION_SUFFIX) and entry.is_file()]
    except OSError:
        return []


def _iso(stamp: Any) -> datetime | None:
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
