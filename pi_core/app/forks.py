"""Forks, as pi's SessionManager makes them: ``fork`` (``/fork``) and ``clone`` copy a
branch of an open session; each new session names its source as parent. (``--fork``, a
whole file into another project, is the command line's:
:func:`pi_plugins.cli.sessions.fork_from`.)
"""

from __future__ import annotations

import attrs

from pi_core.protocol.entries import (
    Entry,
    LabelEntry,
    MessageEntry,
    UnknownEntry,
    new_entry_id,
    new_session_id,
)
from pi_core.protocol.messages import AssistantMessage
from pi_core.session import Session, SessionError


def fork(session: Session, leaf_id: str | None) -> Session:
    """A new session holding the path to ``leaf_id`` (``None``: empty) and its labels;
    written at once if it holds an assistant message, else with the first message."""
    path = session.path(leaf_id) if leaf_id is not None else []
    if leaf_id is not None and not path:
        raise SessionError(f"entry {leaf_id!r} is not in the session")
    if session.file is None:
        forked = Session.in_memory(session.cwd)
    else:
        forked = Session.create(session.cwd, session.sessions_dir, parent_session=str(session.file))
    entries: list[Entry] = []
    for entry in path:
        if not isinstance(entry, LabelEntry):
            # Labels are re-created below, so whatever hung under one is re-parented
            # (pi keeps the old parent id, which leaves that entry an orphan).
            entries.append(_with_parent(entry, entries[-1].id if entries else None))
    on_path = {e.id for e in entries}
    taken = set(on_path)
    for target, (label, stamp) in session.labels_with_timestamps().items():
        if target not in on_path:
            continue
        entries.append(LabelEntry(id=_unique_id(taken), parent_id=entries[-1].id,
                                  timestamp=stamp, target_id=target, label=label))
    forked.take_entries(entries, write=any(_is_assistant(e) for e in entries))
    return forked


def clone(session: Session) -> Session:
    """``/clone``: a new session holding the current branch (root to leaf)."""
    return fork(session, session.leaf_id)


def _unique_id(taken: set[str]) -> str:
    for _ in range(100):
        entry_id = new_entry_id()
        if entry_id not in taken:
            taken.add(entry_id)
            return entry_id
    return new_session_id()  # a whole UUID, as pi's fallback id


def _is_assistant(entry: Entry) -> bool:
    return isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage)


def _with_parent(entry: Entry, parent_id: str | None) -> Entry:
    """``entry`` itself, or a shallow copy hung under ``parent_id``."""
    if entry.parent_id == parent_id:
        return entry
    if isinstance(entry, UnknownEntry):
        return UnknownEntry({**entry.data, "parentId": parent_id})
    return attrs.evolve(entry, parent_id=parent_id)
