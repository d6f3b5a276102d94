"""``--session-id ID``: this project's session with that id, created when it has none
(pi 1.6). The file is named as pi names it (``<timestamp>_<id>.jsonl``) and its header
holds the id, so pi 1.6 finds the same session with the same flag."""

from __future__ import annotations

import os
import re
from pathlib import Path

#: Letters, digits, ``.``, ``_`` and ``-``, starting and ending with a letter or digit.
_SESSION_ID = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


def valid_session_id(value: str) -> bool:
    return _SESSION_ID.fullmatch(value or "") is not None


def find_project_session(session_id: str, folder: Path) -> Path | None:
    """The project's session file whose header has exactly ``session_id``."""
    from pi_plugins.session_listing.listing import read_header

    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return None
    for name in names:
        if name.endswith(f"_{session_id}.jsonl"):
            header = read_header(folder / name)
            if header is not None and header.get("id") == session_id:
                return folder / name
    return None


def new_session_with_id(cwd: str, folder: Path | None, session_id: str, *,
                        parent_session: str | None = None, in_memory: bool = False):
    """A new, empty session of ``cwd`` whose id is ``session_id`` (written with its
    first answer, as every new session)."""
    from pi_core.protocol.entries import SessionHeader
    from pi_core.session import Session
    from pi_core.session.locations import session_dir_for, session_file_name
    from pi_core.session.tree import SessionTree

    header = SessionHeader(id=session_id, cwd=os.fspath(cwd), parent_session=parent_session)
    if in_memory:
        return Session(header, SessionTree(), cwd=header.cwd, file=None, sessions_dir=None)
    directory = Path(folder) if folder is not None else session_dir_for(cwd)
    return Session(header, SessionTree(), cwd=header.cwd, file=directory / session_file_name(header),
                   sessions_dir=directory)
