"""Checkpoints of one session: snapshots recorded as ``custom`` entries of its session,
listed, and restored.

A checkpoint is a ``custom`` entry (``customType`` ``checkpoint``; the real pi keeps it
and never sends it to the model) whose ``data`` holds the snapshot id and the paths that
changed since the previous checkpoint on its path. The workspace at any entry is the
snapshot of the nearest checkpoint at or before it on its path, which holds because a
checkpoint is recorded before each prompt (when the workspace differs from the branch's
last one) and after each tool batch that changed it. A tool result is the exception:
the workspace at it is the one its batch left (the checkpoint that follows it names it in
``after``).
"""

from __future__ import annotations

import asyncio
import builtins
from datetime import datetime
from typing import Any

from attrs import define, field

from pi_core.protocol.entries import CustomEntry
from pi_plugins.checkpoints import CUSTOM_TYPE
from pi_plugins.checkpoints.store import GitStore, StoreError


class CheckpointError(RuntimeError):
    """A checkpoint cannot be listed or restored; the text says why."""


@define
class Checkpoint:
    """A checkpoint entry of the session."""

    entry_id: str
    timestamp: str
    files: list[str]
    snapshot: str
    #: Why it was recorded: ``prompt`` (before a prompt), ``tools`` (after a tool batch),
    #: ``restore`` (the state a restore replaced).
    reason: str = ""
    #: The turn it belongs to: the number of user messages on its path (one more for a
    #: checkpoint recorded before a prompt).
    turn: int = 0

    def to_json(self) -> dict:
        return {"entryId": self.entry_id, "timestamp": self.timestamp, "files": list(self.files)}

    def describe(self) -> str:
        """One line for a list (``/rewind``): turn, local time, changed files, entry id."""
        try:
            when = datetime.fromisoformat(self.timestamp.replace("Z", "+00:00")).astimezone()
            clock = when.strftime("%H:%M:%S")
        except ValueError:
            clock = self.timestamp
        files = self.files
        shown = ", ".join(files[:3]) + (f" (+{len(files) - 3} more)" if len(files) > 3 else "")
        what = {"prompt": "before the prompt", "restore": "before a restore"}.get(self.reason, "")
        if not shown:
            shown = what or "no changes"
        elif what:
            shown = f"{shown} · {what}"
        turn = f"turn {self.turn}" if self.turn else "start"
        return f"{turn} · {clock} · {shown} [{self.entry_id}]"


@define
class RestoreResult:
    """What a restore did: the files it changed, the checkpoint recorded first (restore to
    it to undo), and the files it left alone with the reason."""

    files: list[str]
    undo_entry_id: str
    target_entry_id: str
    skipped: dict[str, str] = field(factory=dict)

    def to_json(self) -> dict:
        data: dict[str, Any] = {"files": list(self.files), "undoEntryId": self.undo_entry_id,
                                "checkpointEntryId": self.target_entry_id}
        if self.skipped:
            data["skipped"] = dict(self.skipped)
        return data


def _is_tool_result(entry: Any) -> bool:
    return getattr(getattr(entry, "message", None), "role", None) == "toolResult"


def is_checkpoint(entry: Any) -> bool:
    return (isinstance(entry, CustomEntry) and entry.custom_type == CUSTOM_TYPE
            and isinstance(entry.data, dict) and isinstance(entry.data.get("snapshot"), str))


class Checkpointer:
    """Records and restores the workspace of one session (``ctx``'s)."""

    def __init__(self, ctx: Any, store: GitStore) -> None:
        self.ctx = ctx
        self.store = store
        self._lock = asyncio.Lock()
        #: The leaf when the workspace was last snapshotted.
        self._looked_at: str | None = None

    @property
    def session(self):
        return self.ctx.session

    # ------------------------------------------------------------ reading the session

    def latest(self, entry_id: str | None = None) -> CustomEntry | None:
        """The nearest checkpoint at or before ``entry_id`` (None: the leaf) on its path."""
        if entry_id is None and self.session.leaf_id is None:
            return None
        for entry in reversed(self.session.path(entry_id)):
            if is_checkpoint(entry):
                return entry
        return None

    def list(self) -> list[Checkpoint]:
        """Every checkpoint of the session, in the order they were recorded."""
        found: builtins.list[Checkpoint] = []
        turns: dict[str | None, int] = {}
        for entry in self.session.entries:
            parent_turn = turns.get(entry.parent_id, 0)
            message = getattr(entry, "message", None)
            turns[entry.id] = parent_turn + (1 if getattr(message, "role", None) == "user" else 0)
            if is_checkpoint(entry):
                data = entry.data
                # A checkpoint before a prompt belongs to the turn that prompt starts.
                turn = turns[entry.id] + (1 if data.get("reason") == "prompt" else 0)
                found.append(Checkpoint(
                    entry_id=entry.id, timestamp=entry.timestamp,
                    files=[f for f in data.get("files") or [] if isinstance(f, str)],
                    snapshot=data["snapshot"], reason=str(data.get("reason") or ""),
                    turn=turn))
        return found

    # ------------------------------------------------------------ recording

    async def record(self, reason: str, *, force: bool = False, extra: dict | None = None):
        """Snapshot the workspace; append a checkpoint when it differs from the branch's
        last one (always with ``force``). Returns (entry or None, snapshot id). git runs
        in a worker thread; the session is only touched from the event loop's."""
        async with self._lock:
            last = self.latest()
            previous = last.data["snapshot"] if last is not None else None
            results = self._unlooked_results()
            try:
                tree, files = await asyncio.to_thread(self.store.checkpoint, previous)
            except StoreError:
                if previous is None:
                    raise
                # The branch's last snapshot was missing from the store (a new agent dir,
                # a session from elsewhere): compare with it if this snapshot made it
                # again, else start afresh, rather than fail at every turn.
                if not await asyncio.to_thread(self.store.has, previous):
                    previous = None
                tree, files = await asyncio.to_thread(self.store.checkpoint, previous)
            if previous == tree and not force:
                self._looked_at = self.session.leaf_id
                return None, tree
            data = {"snapshot": tree, "files": files, "reason": reason, **(extra or {})}
            if results:
                data["after"] = results
            entry = self.session.append_custom(CUSTOM_TYPE, data)
            self._looked_at = entry.id
            return entry, tree

    def unchanged(self) -> None:
        """The entries stored so far hold the workspace of the branch's last checkpoint
        (a tool that only reads ran): the next checkpoint does not stand for them."""
        self._looked_at = self.session.leaf_id

    def _unlooked_results(self) -> builtins.list[str]:
        """The tool results stored since the workspace was last looked at: the workspace
        is now what it was at each of them (a parallel batch stores its results once all
        its tools ran, a sequential one each before the next tool starts)."""
        found = []
        for entry in reversed(self.session.path()):
            if entry.id == self._looked_at or not _is_tool_result(entry):
                break
            found.append(entry.id)
        return found[::-1]

    # ------------------------------------------------------------ restoring

    def after_batch(self, entry: Any) -> CustomEntry | None:
        """For a tool result, the checkpoint of the workspace as its tool left it: the
        first checkpoint after it and the results stored with it, when that one names it
        (in ``after``); None when the tool changed nothing."""
        if not _is_tool_result(entry):
            return None
        node = entry
        while _is_tool_result(node):
            children = self.session.children(node.id)
            node = children[0] if children else None  # the first: what followed then
        if is_checkpoint(node) and entry.id in (node.data.get("after") or ()):
            return node
        return None

    def target(self, entry_id: str) -> CustomEntry:
        """The checkpoint holding the workspace at ``entry_id``."""
        entry = self.session.entry(entry_id)
        if entry is None:
            raise CheckpointError(f"no entry {entry_id!r} in this session")
        found = self.after_batch(entry) or self.latest(entry_id)
        if found is None:
            raise CheckpointError(f"no checkpoint at or before entry {entry_id!r}")
        if not self.store.has(found.data["snapshot"]):
            raise CheckpointError(f"the snapshot of checkpoint {found.id} is missing from "
                                  f"{self.store.git_dir}")
        return found

    async def plan(self, entry_id: str) -> builtins.list[str]:
        """The files a restore to ``entry_id`` would change (nothing is written)."""
        target = self.target(entry_id)
        async with self._lock:
            def changed() -> list[str]:
                now = self.store.snapshot()
                return [c.path for c in self.store.diff(now, target.data["snapshot"])]
            return await asyncio.to_thread(changed)

    async def restore(self, entry_id: str) -> RestoreResult:
        """Restore the workspace to its state at ``entry_id``, first recording the current
        state as a checkpoint (restoring to that one undoes this)."""
        if not self.ctx.is_idle():
            raise CheckpointError("wait for the agent to finish (or abort it) before restoring files")
        target = self.target(entry_id)
        undo, current = await self.record("restore", force=True,
                                          extra={"restoreTarget": target.id})
        async with self._lock:
            done = await asyncio.to_thread(self.store.restore, current, target.data["snapshot"])
        return RestoreResult(files=done.files, undo_entry_id=undo.id, target_entry_id=target.id,
                             skipped=done.skipped)


def open_checkpointer(ctx: Any) -> Checkpointer:
    """A checkpointer for the session of ``ctx`` over the store of its cwd's work tree."""
    try:
        limit = int(ctx.settings.get("checkpoints.maxFileBytes", 1 << 20))
    except (TypeError, ValueError):
        limit = 1 << 20
    store = GitStore(ctx.cwd, ctx.agent_dir, max_file_bytes=limit)
    try:
        store.open()
    except (StoreError, OSError) as exc:
        raise CheckpointError(f"cannot open the checkpoint store: {exc}") from exc
    return Checkpointer(ctx, store)
