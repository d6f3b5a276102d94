"""Bringing version 1 and 2 session files to version 3, as pi does on load.

- 1 → 2: entries get ids and each the previous entry as parent (v1 was a list, not a
  tree); a compaction's ``firstKeptEntryIndex`` (an index into the file's readable
  lines, header included) becomes ``firstKeptEntryId``.
- 2 → 3: the message role ``hookMessage`` became ``custom``.

This is the one time a session file is rewritten. pi rewrites it in place; we write the
new file beside it and rename it over the old one, so a crash leaves one or the other
whole. Lines that could not be read are carried over unchanged, so nothing is lost.
"""

from __future__ import annotations

from pi_core.protocol.codec import dumps, to_json
from pi_core.protocol.entries import SESSION_VERSION, new_entry_id
from pi_core.session.reader import FileContents, RawLine


def migrate_lines(contents: FileContents) -> list[bytes]:
    """The version-3 lines (header first, each ending in a newline) for an old file."""
    header = contents.header
    lines = contents.raw_lines
    if contents.version < 2:
        _add_tree_links(lines)
    for raw in lines:
        if isinstance(raw.value, dict) and raw.value.get("type") == "message":
            message = raw.value.get("message")
            if isinstance(message, dict) and message.get("role") == "hookMessage":
                message["role"] = "custom"
    header_json = to_json(header)
    header_json["version"] = SESSION_VERSION
    out = [_line(header_json)]
    for raw in lines:
        if isinstance(raw.value, dict):
            out.append(_line(_tree_keys_first(raw.value)))
        else:
            out.append(raw.text if raw.text.endswith(b"\n") else raw.text + b"\n")
    return out


def _add_tree_links(lines: list[RawLine]) -> None:
    readable = [raw.value for raw in lines if raw.value is not None]
    indexable = [None, *readable]  # pi's index counts the header as entry 0
    ids: set[str] = set()
    previous = None
    for value in readable:
        if not isinstance(value, dict):
            continue
        entry_id = new_entry_id()
        while entry_id in ids:
            entry_id = new_entry_id()
        ids.add(entry_id)
        value["id"] = entry_id
        value["parentId"] = previous
        previous = entry_id
    for value in readable:
        if isinstance(value, dict) and value.get("type") == "compaction":
            index = value.pop("firstKeptEntryIndex", None)
            if isinstance(index, int) and 0 < index < len(indexable):
                target = indexable[index]
                if isinstance(target, dict) and "id" in target:
                    value["firstKeptEntryId"] = target["id"]


def _tree_keys_first(value: dict) -> dict:
    """pi's key order: type, id, parentId, then the rest as they were."""
    head = {k: value[k] for k in ("type", "id", "parentId") if k in value}
    return {**head, **{k: v for k, v in value.items() if k not in head}}


def _line(value: dict) -> bytes:
    return (dumps(value) + "\n").encode("utf-8")
