"""Checkpoints, as a plugin: every point of the session tree knows the state of the
workspace, bash side effects included, and the files can go back to it.

- ``agent_start``: before a prompt, record a checkpoint when the workspace differs from
  the branch's last one (or the branch has none yet);
- ``turn_end``: after a tool batch, record one when the batch changed the workspace
  (edit, write, or anything bash did: ``rm``, ``sed -i``, ``mv``, generated files); a
  batch of only read, grep, find and ls is not looked at;
- ``tool_execution_start``: in a batch run one tool after another, also between tools;
- ``workspace_checkpoints``: the :class:`Checkpointer` behind ``harness.checkpoints()``,
  ``harness.restore_checkpoint()``, the RPC commands and the chat's offers;
- ``register_commands``: ``/rewind`` lists the checkpoints and restores one.

On by default inside a git work tree, off elsewhere; the setting ``checkpoints.enabled``
(true or false) overrides that. ``checkpoints.maxFileBytes`` (default 1 MiB) leaves larger
files out. Snapshots live under ``<agent dir>/checkpoints``; see :mod:`.store`.
"""

from __future__ import annotations

import logging
import shutil
import weakref
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_core import hookimpl
from pi_core.commands import Command

if TYPE_CHECKING:
    from pi_plugins.checkpoints.checkpointer import Checkpoint, Checkpointer, RestoreResult

# The checkpointer and the store load on first use, not with every pi start.
__all__ = ["CUSTOM_TYPE", "Checkpoint", "CheckpointError", "Checkpointer", "RestoreResult"]
CUSTOM_TYPE = "checkpoint"


def __getattr__(name: str) -> Any:
    if name in ("Checkpoint", "CheckpointError", "Checkpointer", "RestoreResult"):
        from pi_plugins.checkpoints import checkpointer

        return getattr(checkpointer, name)
    raise AttributeError(name)


def _in_git_work_tree(cwd: str) -> bool:
    """A ``.git`` in the cwd or a folder above it (looked for, git is not run)."""
    path = Path(cwd).resolve()
    return any((folder / ".git").exists() for folder in (path, *path.parents))


log = logging.getLogger("pi.checkpoints")

#: harness → its checkpointer, or the reason checkpoints are off for it.
_STATE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def enabled(ctx) -> tuple[bool, str]:
    """Whether checkpoints run for ``ctx.cwd``, and why not."""
    setting = ctx.settings.get("checkpoints.enabled")
    if setting is False:
        return False, "checkpoints are off (settings checkpoints.enabled is false)"
    if shutil.which("git") is None:
        return False, "checkpoints need git, which is not installed"
    if setting is None and not _in_git_work_tree(ctx.cwd):
        return False, ("checkpoints are off outside a git work tree "
                       "(set checkpoints.enabled to true to use them here)")
    return True, ""


def checkpointer_for(ctx) -> "Checkpointer | str":
    """The harness's checkpointer, made on first use, or why there is none."""
    harness = getattr(ctx, "harness", None)
    if harness is None:
        return "checkpoints need a session"
    state = _STATE.get(harness)
    if state is None:
        on, why = enabled(ctx)
        if on:
            from pi_plugins.checkpoints.checkpointer import CheckpointError, open_checkpointer

            try:
                state = open_checkpointer(harness)
            except CheckpointError as exc:
                log.warning("%s", exc)
                state = str(exc)
        else:
            state = why
        _STATE[harness] = state
    return state


async def _record(ctx, reason: str) -> None:
    checkpointer = checkpointer_for(ctx)
    if isinstance(checkpointer, str):
        return
    from pi_plugins.checkpoints.store import StoreError

    try:
        await checkpointer.record(reason)
    except (StoreError, OSError) as exc:  # a snapshot that fails must not stop the agent
        ctx.plugins.report("checkpoints", reason, exc)


@hookimpl
async def agent_start(event, ctx):
    await _record(ctx, "prompt")


#: Built-in tools that only look: a batch of nothing else needs no snapshot.
READ_ONLY_TOOLS = frozenset({"read", "grep", "find", "ls"})


@hookimpl
async def tool_execution_start(event, ctx):
    # A batch run one tool after another stores each result before the next tool starts
    # (a parallel batch stores them all at its end): record the workspace at each.
    harness = getattr(ctx, "harness", None)
    message = getattr(harness.session.leaf, "message", None) if harness is not None else None
    if getattr(message, "role", None) != "toolResult":
        return
    if message.tool_name not in READ_ONLY_TOOLS:
        await _record(ctx, "tools")
        return
    checkpointer = checkpointer_for(ctx)
    if not isinstance(checkpointer, str):
        checkpointer.unchanged()  # a look-only tool: the workspace at it is the one before


@hookimpl
async def turn_end(event, ctx):
    results = getattr(event, "tool_results", None) or []
    if any(getattr(r, "tool_name", None) not in READ_ONLY_TOOLS for r in results):
        await _record(ctx, "tools")


@hookimpl
def workspace_checkpoints(ctx):
    return checkpointer_for(ctx)  # or the reason there is none


# ------------------------------------------------------------ /rewind


def describe(checkpoint: "Checkpoint") -> str:
    """One line of the ``/rewind`` list: turn, time, changed files."""
    try:
        when = datetime.fromisoformat(checkpoint.timestamp.replace("Z", "+00:00")).astimezone()
        clock = when.strftime("%H:%M:%S")
    except ValueError:
        clock = checkpoint.timestamp
    files = checkpoint.files
    shown = ", ".join(files[:3]) + (f" (+{len(files) - 3} more)" if len(files) > 3 else "")
    what = {"prompt": "before the prompt", "restore": "before a restore"}.get(checkpoint.reason, "")
    if not shown:
        shown = what or "no changes"
    elif what:
        shown = f"{shown} · {what}"
    turn = f"turn {checkpoint.turn}" if checkpoint.turn else "start"
    return f"{turn} · {clock} · {shown} [{checkpoint.entry_id}]"


async def rewind(args: str, ctx) -> None:
    """``/rewind [entry id]``: choose a checkpoint and restore the files to it."""
    checkpointer = checkpointer_for(ctx)
    if isinstance(checkpointer, str):
        ctx.ui.notify(checkpointer, "warning")
        return
    checkpoints = checkpointer.list()
    if not checkpoints:
        ctx.ui.notify("No checkpoints in this session yet", "info")
        return
    entry_id = args.strip()
    if not entry_id:
        options = {describe(c): c.entry_id for c in reversed(checkpoints)}
        chosen = await ctx.ui.select("Restore the files to which checkpoint?", list(options))
        if chosen is None:
            return
        entry_id = options[chosen]
    from pi_plugins.checkpoints.checkpointer import CheckpointError
    from pi_plugins.checkpoints.store import StoreError

    try:
        result = await checkpointer.restore(entry_id)
    except (CheckpointError, StoreError, OSError) as exc:
        ctx.ui.notify(f"Restore failed: {exc}", "error")
        return
    ctx.ui.notify(restored_message(result), "info")


def restored_message(result: "RestoreResult") -> str:
    count = len(result.files)
    text = (f"Restored {count} file{'s' if count != 1 else ''}"
            + (f": {', '.join(result.files[:5])}" + (" …" if count > 5 else "") if count else "")
            + f". /rewind {result.undo_entry_id} undoes it.")
    if result.skipped:
        text += f" Left alone: {', '.join(sorted(result.skipped))}."
    return text


@hookimpl
def register_commands(ctx):
    return [Command(name="rewind", description="Restore the files to a checkpoint of this session",
                    handler=rewind, argument_hint="[entry id]")]
