"""A cache of the listing's facts for one sessions folder: each file's
:class:`FileFacts`, so a listing stats every file and rescans only the changed ones (their
new bytes). It lives in the cache folder (named for the sessions folder's path), never in
the sessions folder, which holds pi's files alone (an old ``.pi-session-index.json``
there is ignored). The JSONL files stay the truth: a missing, stale or unreadable index
is rebuilt from them; without a cache folder the listing goes without one.
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs

from pi_core.paths import session_side_file, write_file
from pi_core.protocol.codec import DecodeError, loads_json
from pi_plugins.session_listing.listing_scan import FileFacts, scan_file

INDEX_VERSION = 1


def listing_index_path(directory: Path) -> Path | None:
    """Where the listing's index of ``directory`` lives (None: no cache folder)."""
    found = session_side_file(directory, "listing.json")
    return Path(found) if found is not None else None


class SessionIndex:
    def __init__(self, directory: Path) -> None:
        self.path = listing_index_path(directory)
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
        if self.path is None or (not self._changed and self._seen.keys() == self._known.keys()):
            return
        data = json.dumps({"version": INDEX_VERSION,
                           "files": {name: attrs.asdict(f) for name, f in self._seen.items()}},
                          ensure_ascii=False, separators=(",", ":"))
        write_file(self.path, data.encode("utf-8"))  # can fail: list without an index

    def _load(self) -> dict[str, FileFacts]:
        if self.path is None:
            return {}
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
