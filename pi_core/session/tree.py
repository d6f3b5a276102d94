"""The entries of one session as a tree: who is whose parent, where the leaf is, labels.

Entries keep the ``parent_id`` they were written with; the tree keeps its own view of each entry's parent,
which differs only where the file is damaged: an entry whose parent is missing, or that closes a parent
cycle, is treated as a root (and reported), so every walk towards the root ends. The leaf is the current
position: appending hangs the new entry under it; branching moves it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any, Literal, overload

import orjson

from pi_core.protocol.codec import line_from_json
from pi_core.protocol.entries import Entry, LabelEntry, MessageEntry, SessionInfoEntry, UnknownEntry
from pi_core.protocol.records import field, record
from pi_core.session.reader import LineSource, Problem, UnreadEntry, read_unread

log = logging.getLogger("pi.session")


@record
class TreeNode:
    """One entry in :meth:`SessionTree.nodes`, its children oldest first."""

    entry: Entry
    children: list[TreeNode] = field(factory=list)
    label: str | None = None
    label_timestamp: str | None = None


class SessionTree:
    """Entries read from a file may still be :class:`UnreadEntry` inside; every method
    that hands out entries reads them first, so callers only ever see entry classes."""

    def __init__(self, source: str = "session") -> None:
        self.source = source  # for log messages
        self.lines: LineSource | None = None  # the LineSource unread entries are read back from
        self.problems: list[Problem] = []  # where entries that cannot be read are reported
        self.unread = 0  # entries not yet made into objects
        self._entries: list[Entry | UnreadEntry] = []
        self._by_id: dict[str, Entry | UnreadEntry] = {}
        self._parent: dict[str, str | None] = {}
        self._children: dict[str | None, list[str]] | None = {}
        self._labels: dict[str, tuple[str, str]] = {}
        self._name: str | None = None
        self.leaf_id: str | None = None

    # ------------------------------------------------------------ building

    @classmethod
    def from_entries(
        cls, entries: Iterable[Entry | UnreadEntry], line_numbers: Iterable[int],
        bridges: dict[str, tuple[str | None, int]] | None = None,
    ) -> tuple[SessionTree, list[Problem]]:
        """A tree from a file's entries, with the problems found (duplicate ids, missing
        parents, cycles). ``bridges``: id → (parent id, line) of unusable lines; an entry
        whose parent was one hangs under the nearest ancestor that exists, so one bad
        line costs only itself."""
        tree = cls()
        problems: list[Problem] = []
        line_of: dict[str, int] = {}
        by_id, kept = tree._by_id, tree._entries
        for entry, number in zip(entries, line_numbers, strict=False):
            entry_id = entry.id
            if entry_id in by_id:
                problems.append(Problem(number, f"duplicate entry id {entry_id!r} (first on line "
                                                f"{line_of[entry_id]}); this line is ignored"))
                continue
            line_of[entry_id] = number
            if type(entry) is UnreadEntry:
                entry.position = len(kept)
            kept.append(entry)
            by_id[entry_id] = entry
        tree.unread = sum(1 for entry in kept if type(entry) is UnreadEntry)
        parents = tree._parent
        forward = False  # a parent on a later line: the only way a cycle can form
        for stored in kept:
            parent = stored.parent_id
            if parent is not None and parent not in parents:  # not an earlier entry's id
                if parent in by_id:
                    forward = True
                else:
                    try:
                        mended = _mend(parent, by_id, bridges or {})
                    except LookupError:
                        problems.append(Problem(line_of[stored.id], (
                            f"entry {stored.id!r} names parent {parent!r}, which is not in "
                            "the file; it is treated as a root")))
                        mended = None
                    else:
                        line = (bridges or {})[parent][1]
                        where = f"{mended!r}" if mended is not None else "the root"
                        problems.append(Problem(line_of[stored.id], (
                            f"entry {stored.id!r} names parent {parent!r}, whose line "
                            f"{line} could not be read; it now hangs under {where}")))
                        forward = forward or mended is not None and mended not in parents
                    parent = mended
            parents[stored.id] = parent
        if forward:
            problems.extend(tree._break_cycles(line_of))
        tree._children = None  # built when first asked for: a resume never needs them
        noted = (LabelEntry, SessionInfoEntry)
        for stored in tree._entries:
            if type(stored) is not UnreadEntry and isinstance(stored, noted):
                tree._note(stored)
        if tree._entries:
            tree.leaf_id = tree._entries[-1].id
        problems.sort(key=lambda p: p.line)
        return tree, problems

    def _break_cycles(self, line_of: dict[str, int]) -> list[Problem]:
        problems = []
        state: dict[str, int] = {}  # 1: on the walk now, 2: known to reach a root
        for entry in self._entries:
            walk = []
            current: str | None = entry.id
            while current is not None and current not in state:
                state[current] = 1
                walk.append(current)
                current = self._parent[current]
            if current is not None and state[current] == 1:
                cycle = walk[walk.index(current):]
                breaker = max(cycle, key=line_of.__getitem__)
                self._parent[breaker] = None
                problems.append(Problem(line_of[breaker], f"entry {breaker!r} closes a parent "
                                        f"cycle ({' → '.join(cycle)}); it is treated as a root"))
            for entry_id in walk:
                state[entry_id] = 2
        return problems

    def add(self, entry: Entry) -> None:
        """Append ``entry`` (its id new, its parent in the tree or None) and make it the leaf."""
        if entry.id in self._by_id:
            raise ValueError(f"entry id {entry.id!r} is already in the session")
        if entry.parent_id is not None and entry.parent_id not in self._by_id:
            raise ValueError(f"parent {entry.parent_id!r} is not in the session")
        self._entries.append(entry)
        self._by_id[entry.id] = entry
        self._parent[entry.id] = entry.parent_id
        if self._children is not None:
            self._children.setdefault(entry.parent_id, []).append(entry.id)
        self._note(entry)
        self.leaf_id = entry.id

    def _note(self, entry: Entry) -> None:
        if isinstance(entry, LabelEntry):
            if entry.label:
                self._labels[entry.target_id] = (entry.label, entry.timestamp)
            else:
                self._labels.pop(entry.target_id, None)
        elif isinstance(entry, SessionInfoEntry):
            self._name = (entry.name or "").strip() or None

    # ------------------------------------------------------------ reading

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._by_id

    def __iter__(self) -> Iterator[Entry]:
        for entry in self._entries:
            yield self._read(entry) if type(entry) is UnreadEntry else entry

    def get(self, entry_id: str | None) -> Entry | None:
        entry = self._by_id.get(entry_id) if entry_id is not None else None
        return self.read(entry) if entry is not None else None

    def read(self, entry: Entry | UnreadEntry) -> Entry:
        """``entry`` made into its entry class (for items of ``path(..., read=False)``)."""
        return self._read(entry) if type(entry) is UnreadEntry else entry

    def read_all(self, items: Sequence[Entry | UnreadEntry]) -> list[Entry]:
        """``items`` made into entries, the unread lines read in a few large reads."""
        pending = [e for e in items if type(e) is UnreadEntry and e.raw is None
                   and e.source is not None and self._by_id[e.id] is e]
        if len(pending) < 2 or any(e.source is not pending[0].source for e in pending):
            return [self.read(e) for e in items]
        by_id, entries = self._by_id, self._entries
        source = pending[0].source
        assert source is not None  # pending holds only lines with a source
        lines = source.read_spans([(e.offset, e.length) for e in pending])
        out: list[Entry] = []
        add = out.append
        for unread, raw in zip(pending, lines, strict=True):
            try:  # what _read does, spelled out for the line that reads cleanly
                value = orjson.loads(raw)
                entry = line_from_json(value) if type(value) is dict else None
            except Exception:  # _read reads it again, the careful way
                entry = None
            if type(entry) is not MessageEntry or entry.id != unread.id:
                add(self._read(unread, raw))  # any other entry, or with the problem it reports
                continue
            _share_strings(entry, unread)
            by_id[unread.id] = entries[unread.position] = entry
            self.unread -= 1
            add(entry)
        if len(out) == len(items):  # every item was one of these (a resume's whole path)
            return out
        return [self.read(e) for e in items]

    def _read(self, unread: UnreadEntry, raw: Any = None) -> Entry:
        done = self._by_id[unread.id]
        if done is not unread:  # read already, through another reference
            assert type(done) is not UnreadEntry
            return done
        entry, problem = read_unread(unread, raw)
        if problem is not None:
            self.problems.append(problem)
            log.warning("%s: %s", self.source, problem)
        elif type(entry) is MessageEntry:
            _share_strings(entry, unread)
        self._by_id[unread.id] = entry
        self._entries[unread.position] = entry
        self.unread -= 1
        return entry

    @overload
    def path(self, to_id: str | None, read: Literal[True] = True) -> list[Entry]: ...

    @overload
    def path(self, to_id: str | None, read: bool) -> list[Entry | UnreadEntry]: ...

    def path(self, to_id: str | None, read: bool = True) -> list[Entry] | list[Entry | UnreadEntry]:
        """The entries from the root down to ``to_id`` (empty for None or an unknown id);
        with ``read=False`` some may still be :class:`UnreadEntry`."""
        path: list[Entry | UnreadEntry] = []
        by_id, parents = self._by_id, self._parent
        current = to_id if to_id in by_id else None
        while current is not None:
            path.append(by_id[current])
            current = parents[current]
        path.reverse()
        if read:
            return [self._read(e) if type(e) is UnreadEntry else e for e in path]
        return path

    def children(self, parent_id: str | None) -> list[Entry]:
        """Direct children in file order; ``None`` gives the roots."""
        by_id = self._by_id
        return [self.read(by_id[i]) for i in self._children_map().get(parent_id, ())]

    def _children_map(self) -> dict[str | None, list[str]]:
        if self._children is None:
            children: dict[str | None, list[str]] = {}
            for entry_id, parent in self._parent.items():  # in file order, as added
                children.setdefault(parent, []).append(entry_id)
            self._children = children
        return self._children

    @property
    def labels(self) -> dict[str, str]:
        return {target: label for target, (label, _) in self._labels.items()}

    def labels_with_timestamps(self) -> dict[str, tuple[str, str]]:
        """Entry id → (label, when it was set)."""
        return dict(self._labels)

    def label(self, entry_id: str) -> str | None:
        found = self._labels.get(entry_id)
        return found[0] if found else None

    @property
    def name(self) -> str | None:
        return self._name

    def nodes(self) -> list[TreeNode]:
        """The whole tree: its roots, each child list sorted by timestamp (oldest first)."""
        made: dict[str, TreeNode] = {}
        for entry in self:
            label = self._labels.get(entry.id)
            made[entry.id] = TreeNode(entry, [], label[0] if label else None,
                                      label[1] if label else None)
        roots: list[TreeNode] = []
        for stored in self._entries:
            parent = self._parent[stored.id]
            (made[parent].children if parent is not None else roots).append(made[stored.id])
        for node in made.values():
            if len(node.children) > 1:
                node.children.sort(key=lambda n: _sort_time(n.entry))
        return roots


def _share_strings(entry: MessageEntry, unread: UnreadEntry) -> None:
    """Let a long session hold one copy of each id string: the tree's own."""
    if entry.id == unread.id:
        entry.id = unread.id
    if entry.parent_id is not None and entry.parent_id == unread.parent_id:
        entry.parent_id = unread.parent_id


def _mend(parent: str, by_id: dict, bridges: dict) -> str | None:
    """The nearest ancestor of missing ``parent`` that is in the tree, going up through
    unusable lines whose ids were made out (``None``: the chain reached a root); raises
    :class:`LookupError` when it cannot be followed."""
    current: str | None = parent
    for _ in range(len(bridges) + 1):
        if current is None or current in by_id:
            return current
        current = bridges[current][0]  # KeyError, a LookupError: not an unusable line
    raise LookupError(parent)  # the unusable lines name each other in a ring


def _sort_time(entry: Entry) -> float:
    stamp = entry.data.get("timestamp") if isinstance(entry, UnknownEntry) else entry.timestamp
    try:
        return datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()
    except (TypeError, ValueError):
        return 0.0
