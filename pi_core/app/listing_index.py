"""A cache of the listing's facts, ``.pi-session-index.json`` beside the sessions: each
file's :class:`FileFacts`, so a listing stats every file and rescans only the changed
ones (their new bytes). The JSONL files stay the truth: a missing, stale or unreadable
index is rebuilt from them; a read-only folder is listed without one.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import attrs

from pi_core.app.listing_scan import FileFacts, scan_file
from pi_core.protocol.codec import DecodeError, loads_json

INDEX_NAME = ".pi-session-index.json"
INDEX_VERSION = 1


class SessionIndex:
    def __init__(self, directory: Path) -> None:
        self.path = directory / INDEX_NAME
        self._known = self._load()
        self._seen: dict[str, FileFacts] = {}
        self._changed = False

    def facts(self, session_file: Path) -> FileFacts | None:
        """The facts of one session file of the folder (None if it is no session)."""
        previous = self._known.get(session_file.name)
        facts = scan_file(session_file, previous)
        if facts is not previous:
            self._changed = True
        if facts is not None:
            self._seen[session_file.name] = facts
        return facts

    def save(self) -> None:
        """Write the index if anything changed; files not seen since are dropped."""
        if not self._changed and self._seen.keys() == self._known.keys():
            return
        try:
            if not stat.S_IMODE(self.path.parent.stat().st_mode) & 0o222:
                return  # a folder made read-only (even root honours that here)
        except OSError:
            return
        data = json.dumps({"version": INDEX_VERSION,
                           "files": {name: attrs.asdict(f) for name, f in self._seen.items()}},
                          ensure_ascii=False, separators=(",", ":"))
        temp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # private, as the sessions
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(data)
            os.replace(temp, self.path)
        except OSError:  # a read-only folder: list without an index
            temp.unlink(missing_ok=True)

    def _load(self) -> dict[str, FileFacts]:
        try:
            value = loads_json(self.path.read_bytes())
        except (OSError, DecodeError):
            return {}
        if not isinstance(value, dict) or value.get("version") != INDEX_VERSION:
            return {}
        known = {}
        for name, facts in (value.get("files") or {}).items():
            try:
                known[name] = FileFacts(**facts)
            except TypeError:
                continue
        return known
