"""Hooks of the session: lifecycle, switching, forking, compaction, tree navigation."""

from hookspecs.markers import hookspec


@hookspec
def session_start(event, ctx):
    """Kind: notify. A session was loaded; ``event.reason`` is startup, new, resume or
    fork and ``event.previous_session_file`` the file that was left, if any."""


@hookspec
def session_shutdown(event, ctx):
    """Kind: notify. The session is about to be left (switch, fork, new) or the
    process exits."""


@hookspec
def session_before_switch(event, ctx):
    """Kind: decide. ``/new`` or ``/resume`` is about to switch sessions; a result with
    ``cancel=True`` keeps the current one."""


@hookspec
def session_before_fork(event, ctx):
    """Kind: decide. ``/fork`` is about to fork from ``event.entry_id``; a result with
    ``cancel=True`` stops it."""


@hookspec
def session_before_compact(event, ctx):
    """Kind: decide.

    Compaction is about to run (``event.reason``: manual, threshold or overflow, with the
    messages to summarise and the previous summary). Return ``cancel=True`` to stop it,
    or a result carrying your own ``summary`` to replace the built-in summariser.
    """


@hookspec
def session_compact(event, ctx):
    """Kind: notify. A compaction entry was written (``event.entry``)."""


@hookspec
def session_before_tree(event, ctx):
    """Kind: decide. ``/tree`` is about to move the leaf; return ``cancel=True`` to stay,
    or a result carrying the branch ``summary`` to use."""


@hookspec
def session_tree(event, ctx):
    """Kind: notify. The leaf moved through ``/tree`` (``old_leaf_id``, ``new_leaf_id``)."""


@hookspec
def compaction_start(event, ctx):
    """Kind: notify. Compaction begins (``event.reason``)."""


@hookspec
def compaction_end(event, ctx):
    """Kind: notify. Compaction ended (``reason``, ``result``, ``aborted``, ``will_retry``)."""


@hookspec
def auto_retry_start(event, ctx):
    """Kind: notify. A retryable provider failure will be retried after ``delay_ms``."""


@hookspec
def auto_retry_end(event, ctx):
    """Kind: notify. Automatic retrying ended (``success``, ``attempt``)."""


@hookspec
def model_select(event, ctx):
    """Kind: notify. The model changed (``model``, ``previous_model``, ``source``: set,
    cycle or restore)."""


@hookspec
def thinking_level_select(event, ctx):
    """Kind: notify. The thinking level changed (``level``, ``previous_level``)."""


@hookspec
def resources_discover(event, ctx):
    """Kind: collect (a plain list).

    At start-up and reload. Return extra resource paths as a list of
    ``(kind, path)`` pairs, kind being ``skill`` or ``prompt``.
    """


@hookspec
def workspace_checkpoints(ctx):
    """Kind: decide (the last plugin's answer wins).

    When ``harness.checkpoints()``, ``harness.restore_checkpoint()`` or a mode (RPC
    ``get_checkpoints`` / ``restore_checkpoint``, the chat's ``/tree`` and ``/fork``) needs
    the workspace's checkpoints. Return the object that keeps them (the built-in
    :class:`pi_plugins.checkpoints.Checkpointer`: ``list()``, ``plan(entry_id)``,
    ``restore(entry_id)``), or a string saying why there are none here.
    """
