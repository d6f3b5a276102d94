"""Checkpoints, as a plugin: every point of the session tree knows the state of the
workspace, bash side effects included, and the files can go back to it.

- ``agent_start``: before a prompt, record a checkpoint when the workspace differs from
  the branch's last one (or the branch has none yet);
- ``turn_end``: after a tool batch, record one when the batch changed the workspace
  (edit, write, or anything bash did: ``rm``, ``sed -i``, ``mv``, generated files); a
  batch of only read, grep, find and ls is not looked at;
- ``tool_execution_start``: in a batch run one tool after another, also between tools;
- ``workspace_checkpoints``: the :class:`Checkpointer` behind ``harness.checkpoints()``,
  ``harness.restore_checkpoint()``, the RPC commands and the chat's ``/rewind`` and its
  offers in ``/tree`` and ``/fork`` (built-in commands of the interactive mode, so RPC
  clients see the same command list as the real pi's).

On by default inside a git work tree, off elsewhere; the setting ``checkpoints.enabled``
(true or false) overrides that. ``checkpoints.maxFileBytes`` (default 1 MiB) leaves larger
files out. Snapshots live under ``<agent dir>/checkpoints``; see :mod:`.store`.
"""

from __future__ import annotations

import logging
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_core import hookimpl

if TYPE_CHECKING:
    from pi_plugins.checkpoints.checkpointer import Checkpointer

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

#: a session's ctx → its checkpointer, or the reason checkpoints are off for it.
_STATE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def enabled(ctx) -> tuple[bool, str]:
    """Whether checkpoints run for ``ctx.cwd``, and why not."""
    setting = ctx.settings.get("checkpoints.enabled")
    if setting is False:
        return False, "checkpoints are off (settings checkpoints.enabled is false)"
    if setting is None and not _in_git_work_tree(ctx.cwd):  # (before git is looked for: most runs stop here)
        return False, ("checkpoints are off outside a git work tree "
                       "(set checkpoints.enabled to true to use them here)")
    import shutil  # (with its archive modules: only where checkpoints may run)

    if shutil.which("git") is None:
        return False, "checkpoints need git, which is not installed"
    return True, ""


def checkpointer_for(ctx) -> Checkpointer | str:
    """The session's checkpointer, made on first use, or why there is none."""
    if ctx.session is None:
        return "checkpoints need a session"
    state = _STATE.get(ctx)
    if state is None:
        on, why = enabled(ctx)
        if on:
            from pi_plugins.checkpoints.checkpointer import CheckpointError, open_checkpointer

            try:
                state = open_checkpointer(ctx)
            except CheckpointError as exc:
                log.warning("%s", exc)
                state = str(exc)
        else:
            state = why
        _STATE[ctx] = state
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
    message = getattr(ctx.session.leaf, "message", None) if ctx.session is not None else None
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
