"""A session: its tree of entries, its file, and every operation the harness needs.

Files are pi's version 3 JSONL (``docs/sessions.md``). A new session's file appears with
its first message (pi waits for the first answer, losing a prompt interrupted before it),
the header and every entry so far in one write; after that each append is one line
(:mod:`pi_core.session.store`). A file deleted while open is written again, whole, before
the next entry. Entries a failing disk refused stay in the tree and are written, in
order, before the next one (:attr:`Session.unsaved`, :meth:`Session.save`). Versions 1
and 2 are migrated on open; a newer version opens read-only. Damaged lines are reported
in :attr:`Session.problems` while the rest opens (:mod:`pi_core.session.reader`).
"""

from __future__ import annotations

import errno
import gc
import logging
import os
from pathlib import Path
from typing import Any, TypeVar

from pi_core.protocol.codec import dumps
from pi_core.protocol.entries import (
    SESSION_VERSION,
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    Entry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionHeader,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
    UnknownEntry,
    new_entry_id,
    new_session_id,
)
from pi_core.protocol.messages import (
    AgentMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    SystemMessage,
    Usage,
)
from pi_core.session.context import SessionContext, build_session_context
from pi_core.session.locations import session_dir_for, session_file_name
from pi_core.session.migrate import migrate_lines
from pi_core.session.reader import (
    FileContents,
    Problem,
    SessionError,
    gc_paused,
    read_session_file,
    read_session_lines,
)
from pi_core.session.store import SessionFile, SessionWriteError
from pi_core.session.tree import SessionTree, TreeNode

log = logging.getLogger("pi.session")
_E = TypeVar("_E", bound=Entry)  # append gives back the entry it was given

FREEZE_AT = 5_000  # entries: from here on a loaded session's objects are frozen (gc.freeze)


class Session:
    """Use the constructors: :meth:`create`, :meth:`open`, :meth:`in_memory`. Forks,
    clones and ``pi -c``'s most recent session are the app's (:mod:`pi_core.app.forks`,
    :func:`pi_plugins.session_listing.listing.continue_recent`), as pi's SessionManager is."""

    def __init__(
        self,
        header: SessionHeader,
        tree: SessionTree,
        *,
        cwd: str,
        file: Path | None,
        sessions_dir: Path | None,
        handle: SessionFile | None = None,
        on_disk: bool = False,
        read_only: bool = False,
        problems: list[Problem] | None = None,
    ) -> None:
        self.header, self.cwd, self.file = header, cwd, file
        self.sessions_dir, self.read_only = sessions_dir, read_only
        self._tree = tree
        if problems:
            tree.problems = problems
        self._handle, self._on_disk, self._closed = handle, on_disk, False
        # Lines a failed write left off the disk (the header first while the file has
        # none), in file order: written before the next entry.
        self._unsaved: list[tuple[Entry | SessionHeader, str]] = []

    # ------------------------------------------------------------ constructors

    @classmethod
    def create(
        cls,
        cwd: str | os.PathLike,
        sessions_dir: str | os.PathLike | None = None,
        *,
        parent_session: str | None = None,
    ) -> Session:
        """A new session for ``cwd``; its file (in ``sessions_dir``, by default the
        project's folder under ``<agent dir>/sessions``) appears with its first message."""
        cwd = os.fspath(cwd)
        directory = Path(sessions_dir) if sessions_dir is not None else session_dir_for(cwd)
        header = SessionHeader(cwd=cwd, parent_session=parent_session)
        return cls(header, SessionTree(), cwd=cwd, file=directory / session_file_name(header),
                   sessions_dir=directory)

    @classmethod
    def open(
        cls,
        path: str | os.PathLike,
        sessions_dir: str | os.PathLike | None = None,
        *,
        cwd: str | None = None,
        read_only: bool = False,
    ) -> Session:
        """Open a session file (for writing: locked, an old version migrated, a newer one
        refused). A missing or empty file starts a new session there, as pi's ``--session``."""
        path = Path(os.path.abspath(path))
        directory = Path(sessions_dir) if sessions_dir is not None else path.parent
        if not path.exists():
            if read_only:
                raise SessionError(f"{path}: no such session file")
            return cls._new_at(path, directory, cwd)
        handle = None if read_only else SessionFile.open(path)
        try:
            with gc_paused():  # see the reader: a load makes many objects at once
                return cls._load(path, directory, cwd, handle, read_only)
        except BaseException:
            if handle is not None:
                handle.close()
            raise

    @classmethod
    def in_memory(cls, cwd: str | os.PathLike | None = None) -> Session:
        """A session that is never written (``--no-session``)."""
        return cls._new_at(None, None, os.fspath(cwd) if cwd is not None else None)

    def take_entries(self, entries: list[Entry], *, write: bool = True) -> None:
        """Fill this new, empty session with ``entries`` as they are (ids, parents and
        timestamps kept: a fork's copy of another session's); with ``write`` its file is
        written now, else with its first message."""
        if len(self._tree) or self._on_disk:
            raise SessionError("only a new, empty session can take entries")
        self._tree, _ = SessionTree.from_entries(entries, range(2, len(entries) + 2))
        if write and self.file is not None:
            self._write_everything()

    # ------------------------------------------------------------ facts

    @property
    def id(self) -> str:
        return self.header.id

    @property
    def problems(self) -> list[Problem]:
        """What is wrong in the file, by line (found on open, or when an entry is first read)."""
        return self._tree.problems

    @property
    def on_disk(self) -> bool:
        """True once the file exists with the header and the entries (but :attr:`unsaved`)."""
        return self._on_disk

    @property
    def unsaved(self) -> list[Entry]:
        """The entries a failed write left off the disk, oldest first."""
        return [entry for entry, _ in self._unsaved if not isinstance(entry, SessionHeader)]

    @property
    def name(self) -> str | None:
        return self._tree.name

    @property
    def leaf_id(self) -> str | None:
        return self._tree.leaf_id

    @property
    def leaf(self) -> Entry | None:
        return self._tree.get(self._tree.leaf_id)

    @property
    def entries(self) -> list[Entry]:
        return list(self._tree)

    @property
    def labels(self) -> dict[str, str]:
        return self._tree.labels

    def labels_with_timestamps(self) -> dict[str, tuple[str, str]]:
        return self._tree.labels_with_timestamps()

    def __len__(self) -> int:
        return len(self._tree)

    def entry(self, entry_id: str) -> Entry | None:
        return self._tree.get(entry_id)

    def children(self, entry_id: str | None) -> list[Entry]:
        """``None``: the roots."""
        return self._tree.children(entry_id)

    def path(self, to_id: str | None = None) -> list[Entry]:
        """The entries from the root to ``to_id`` (None: the leaf), as pi's ``getBranch``."""
        return self._tree.path(to_id if to_id is not None else self._tree.leaf_id)

    def tree(self) -> list[TreeNode]:
        return self._tree.nodes()

    def label(self, entry_id: str) -> str | None:
        return self._tree.label(entry_id)

    def build_context(self) -> SessionContext:
        """The messages, model and thinking level for the model, from the leaf."""
        tree = self._tree
        path = tree.path(tree.leaf_id, read=False)
        unread = tree.unread
        with gc_paused():
            context = build_session_context(path, tree.read, tree.read_all)
            if unread - tree.unread >= FREEZE_AT:
                gc.freeze()  # as on open: these entries now live as long as the session
        return context

    # ------------------------------------------------------------ moving the leaf

    def branch(self, entry_id: str) -> None:
        if entry_id not in self._tree:
            raise SessionError(f"entry {entry_id!r} is not in the session")
        self._tree.leaf_id = entry_id

    def reset_leaf(self) -> None:
        self._tree.leaf_id = None

    def branch_with_summary(
        self, entry_id: str | None, summary: str, details: Any = None,
        from_hook: bool | None = None, usage: Usage | None = None,
    ) -> BranchSummaryEntry:
        """Move the leaf to ``entry_id`` and hang there a summary of the branch left (its
        leaf the ``fromId``, as pi 1.6 writes it)."""
        if entry_id is not None and entry_id not in self._tree:
            raise SessionError(f"entry {entry_id!r} is not in the session")
        self._check_writable()
        from_id, self._tree.leaf_id = self._tree.leaf_id or "root", entry_id
        return self.append(BranchSummaryEntry(from_id=from_id, summary=summary,
                                              details=details, usage=usage, from_hook=from_hook))

    # ------------------------------------------------------------ appending

    def append(self, entry: _E) -> _E:
        """Append ``entry`` under the leaf (its id made unique) and make it the leaf; its
        line is on disk when this returns (once the file exists; with no file, no JSON)."""
        self._check_writable()
        if isinstance(entry, (SessionHeader, UnknownEntry)):
            raise TypeError(f"cannot append a {type(entry).__name__}; append an entry type")
        if not entry.id or entry.id in self._tree:
            entry.id = self._unique_id()
        entry.parent_id = self._tree.leaf_id
        line = dumps(entry) + "\n" if self.file is not None else ""  # fails before anything changes
        self._tree.add(entry)
        if self._on_disk:
            self._unsaved.append((entry, line))
            self._save()
        elif self.file is not None and (_starts_file(entry) or self._unsaved):
            self._write_everything()
        return entry

    def save(self) -> None:
        """Write now the entries a failed write left in memory (:attr:`unsaved`)."""
        if not self._unsaved or self.file is None:
            return
        self._check_writable()
        if self._on_disk:
            self._save()
        else:
            self._write_everything()

    def append_message(self, message: AgentMessage) -> MessageEntry:
        if isinstance(message, (CompactionSummaryMessage, BranchSummaryMessage)):
            raise ValueError("summaries are entries of their own: use append_compaction() "
                             "or branch_with_summary()")
        return self.append(MessageEntry(message=message))

    def append_model_change(self, provider: str, model_id: str) -> ModelChangeEntry:
        return self.append(ModelChangeEntry(provider=provider, model_id=model_id))

    def append_thinking_level_change(self, thinking_level: str) -> ThinkingLevelChangeEntry:
        return self.append(ThinkingLevelChangeEntry(thinking_level=thinking_level))

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int,
        details: Any = None,
        from_hook: bool | None = None,
        usage: Usage | None = None,
        system_message: SystemMessage | None = None,
    ) -> CompactionEntry:
        return self.append(CompactionEntry(
            summary=summary, first_kept_entry_id=first_kept_entry_id, tokens_before=tokens_before,
            details=details, usage=usage, from_hook=from_hook, system_message=system_message))

    def append_custom(self, custom_type: str, data: Any = None) -> CustomEntry:
        return self.append(CustomEntry(custom_type=custom_type, data=data))

    def append_custom_message(
        self, custom_type: str, content: Any, display: bool = True, details: Any = None
    ) -> CustomMessageEntry:
        return self.append(CustomMessageEntry(custom_type=custom_type, content=content,
                                              display=display, details=details))

    def append_label(self, target_id: str, label: str | None) -> LabelEntry:
        """An empty or None label clears it."""
        if target_id not in self._tree:
            raise SessionError(f"entry {target_id!r} is not in the session")
        return self.append(LabelEntry(target_id=target_id, label=label or None))

    def append_session_info(self, name: str) -> SessionInfoEntry:
        return self.append(SessionInfoEntry(name=name.strip()))

    # ------------------------------------------------------------ closing

    def close(self) -> None:
        """Release the file and its lock. Entries before the first message are dropped;
        those a failed write left get one last write (the log names them if it fails)."""
        if self._unsaved and not self._closed and not self.read_only:
            try:
                self.save()
            except SessionWriteError as exc:  # the process is ending: say what is lost
                reason = os.strerror(exc.errno) if exc.errno else "the write failed"
                log.error("%s: the session could not be saved (%s); lost on closing: %s",
                          self.file, reason, _describe(self.unsaved))
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        if self._tree.lines is not None:
            self._tree.lines.close()  # entries never read are not read now
            self._tree.lines = None
        self._closed = True

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        where = self.file or "in memory"
        return f"<Session {self.id} {where} entries={len(self._tree)} leaf={self.leaf_id}>"

    # ------------------------------------------------------------ internals

    @classmethod
    def _new_at(cls, path: Path | None, directory: Path | None, cwd: str | None) -> Session:
        cwd = cwd or os.getcwd()
        return cls(SessionHeader(cwd=cwd), SessionTree(), cwd=cwd, file=path,
                   sessions_dir=directory)

    @classmethod
    def _load(cls, path: Path, directory: Path, cwd: str | None, handle, read_only) -> Session:
        contents = read_session_file(path)
        if contents.version > SESSION_VERSION and handle is not None:
            raise SessionError(
                f"{path}: session format version {contents.version} is newer than this pi "
                f"writes ({SESSION_VERSION}); it is not changed. Open it read-only to view "
                "or export it, or fork it into a new file")
        if contents.missing_newline and handle is not None:
            handle.expect_missing_newline()
        if contents.header is not None and contents.version < SESSION_VERSION:
            old = contents
            contents = cls._migrate(path, contents, handle)
            assert old.source is not None  # read from the file
            old.source.close()
        problems = list(contents.problems)
        if contents.header is None:
            if contents.source is not None:
                contents.source.close()
            session = cls._new_at(path, directory, cwd)
            session._handle = handle
            session.read_only = read_only
            session._tree.problems = problems
            _report(path, problems)
            return session
        tree, tree_problems = SessionTree.from_entries(contents.entries, contents.line_numbers,
                                                       contents.bridges)
        if len(tree) >= FREEZE_AT:
            # They live as long as the session: spare the collector rescanning them (0.3 s
            # at 20,000 entries). Without cycles, dropping the session still frees them.
            gc.freeze()
        problems = sorted(problems + tree_problems, key=lambda p: p.line)
        tree.source = str(path)
        tree.lines = contents.source
        _report(path, problems)
        header = contents.header
        return cls(header, tree, cwd=cwd or header.cwd or os.getcwd(), file=path,
                   sessions_dir=directory, handle=handle, on_disk=True,
                   read_only=read_only, problems=problems)

    @staticmethod
    def _migrate(path: Path, contents: FileContents, handle: SessionFile | None) -> FileContents:
        lines = migrate_lines(contents)
        if handle is not None:
            handle.replace_with(lines)
            log.info("%s: migrated from version %d to %d", path, contents.version, SESSION_VERSION)
        return read_session_lines(lines, str(path))

    def _unique_id(self) -> str:
        for _ in range(100):
            entry_id = new_entry_id()
            if entry_id not in self._tree:
                return entry_id
        return new_session_id()  # a whole UUID, as pi's fallback id

    def _check_writable(self) -> None:
        if self.read_only or self._closed:
            state = "closed" if self._closed else "open read-only"
            raise SessionError(f"session {self.file or self.id} is {state}; it cannot change")

    def _save(self) -> None:
        handle = self._handle
        assert handle is not None  # a session on disk holds its file open
        if handle.unlinked():
            log.warning("%s was deleted while the session was open; writing it again",
                        self.file)
            handle.close()
            self._handle = None
            self._on_disk = False
            self._write_everything()
            return
        try:
            handle.write_lines([line for _, line in self._unsaved])
        except SessionWriteError as exc:
            del self._unsaved[:exc.saved]
            raise self._not_saved(exc) from exc.__cause__
        self._unsaved.clear()

    def _write_everything(self) -> None:
        self._unsaved = [(self.header, dumps(self.header) + "\n"),
                         *((e, dumps(e) + "\n") for e in self._tree)]
        if self._handle is None:
            assert self.file is not None  # callers write only a session with a file
            try:
                handle = SessionFile.open(self.file, create=True)
            except SessionWriteError as exc:
                raise self._not_saved(exc) from exc.__cause__
            if handle.size():
                handle.close()
                raise SessionError(f"{self.file}: a session file of that name already has "
                                   "content")
            self._handle = handle
        self._on_disk = True
        self._save()

    def _not_saved(self, exc: SessionWriteError) -> SessionWriteError:
        exc.unsaved = self.unsaved
        remedy = {errno.ENOSPC: "the disk has room again", errno.EDQUOT: "the disk has room again",
                  errno.EROFS: "the file system is writable again"}.get(exc.errno or 0,
                                                                       "the disk works again")
        exc.args = (f"{exc.args[0]}. Not on disk: {_describe(exc.unsaved)}; they are kept "
                    f"in memory and written with the next entry once {remedy}",)
        return exc


def _starts_file(entry: Entry) -> bool:
    """A message (the user's prompt first of all) makes a new session's file appear."""
    return isinstance(entry, (MessageEntry, CustomMessageEntry))


def _describe(entries: list[Entry], most: int = 8) -> str:
    """``user message 1a2b3c4d, assistant message 5e6f7a8b and 3 more``."""
    names = [f"{entry.message.role} message {entry.id}" if isinstance(entry, MessageEntry)
             else f"{entry.type} {entry.id}" for entry in entries[:most]]
    if len(entries) > most:
        names[-1] += f" and {len(entries) - most} more"
    if not names:
        return "only the session header"
    count = f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}"
    return f"{count} ({', '.join(names)})"


def _report(path: Path, problems: list[Problem]) -> None:
    for problem in problems:
        log.warning("%s: %s", path, problem)
