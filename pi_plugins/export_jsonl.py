"""``/export FILE.jsonl``: the current branch as a session file of its own.

As pi 1.6 writes it: a fresh header (the session's id and cwd, the time of the export),
then the entries from the root to the leaf, each ``parentId`` pointing at the entry
before it (the first ``null``), so the file opens as a one-branch session with ``pi
--session`` or ``/import``. The name defaults to ``session-<time>.jsonl`` in the current
directory; a relative name is taken from the current directory.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import orjson

from pi_core.protocol.codec import to_json
from pi_core.protocol.entries import SESSION_VERSION, iso_now
from pi_core.session import Session


def branch_jsonl(session: Session, trailing: Callable[[str | None, str], list[dict]] | None = None) -> str:
    """The header and the current branch, re-chained, as JSONL text; ``trailing`` makes
    export-only entries to end it with (given the last id and the export's time)."""
    timestamp = iso_now()
    header = {"type": "session", "version": SESSION_VERSION, "id": session.id,
              "timestamp": timestamp, "cwd": session.header.cwd}
    lines = [header]
    parent: str | None = None
    for entry in session.path():
        value = to_json(entry)
        value["parentId"] = parent  # in place: the key keeps its position, as in pi
        lines.append(value)
        parent = value["id"]
    lines += trailing(parent, timestamp) if trailing is not None else []
    return "".join(orjson.dumps(line).decode("utf-8") + "\n" for line in lines)


def export_jsonl(session: Session, output: str | os.PathLike | None = None) -> Path:
    """Write the branch to ``output`` (folders made as needed); the absolute path written."""
    if output is None:
        output = f"session-{iso_now().replace(':', '-').replace('.', '-')}.jsonl"
    path = Path(os.path.abspath(os.path.expanduser(os.fspath(output))))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(branch_jsonl(session), encoding="utf-8")
    return path
