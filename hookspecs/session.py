"""Hooks of the session: lifecycle, switching, forking, compaction, tree navigation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hookspecs.markers import chain, collect, decide, hookspec, notify

if TYPE_CHECKING:
    from pi_core.protocol.ctx import Ctx
    from pi_core.protocol.events import (
        AutoRetryEnd,
        AutoRetryStart,
        BeforeCompactEvent,
        BeforeTreeEvent,
        CancelDecision,
        CompactionDecision,
        CompactionEnd,
        CompactionStart,
        ForkEvent,
        ModelSelect,
        ResourcesDiscoverEvent,
        SessionCompactEvent,
        SessionShutdown,
        SessionStart,
        SessionTreeEvent,
        SwitchEvent,
        ThinkingLevelSelect,
        TreeDecision,
    )
    from pi_core.protocol.shell import Checkpointer


@hookspec
@notify
def session_start(event: SessionStart, ctx: Ctx) -> None:
    """Kind: notify. A session was loaded; ``event.reason`` is startup, new, resume,
    fork or reload and ``event.previous_session_file`` the file that was left, if any."""


@hookspec
@notify
def session_shutdown(event: SessionShutdown, ctx: Ctx) -> None:
    """Kind: notify. The session is about to be left; ``event.reason`` is new, resume,
    fork, quit (the process exits) or reload."""


@hookspec
@decide(result="pi_core.protocol.results:cancel_decision", guard=True)
def session_before_switch(event: SwitchEvent, ctx: Ctx) -> CancelDecision | dict | None:
    """Kind: decide. ``/new`` or ``/resume`` is about to switch sessions; a result with
    ``cancel=True`` keeps the current one."""


@hookspec
@decide(result="pi_core.protocol.results:cancel_decision", guard=True)
def session_before_fork(event: ForkEvent, ctx: Ctx) -> CancelDecision | dict | None:
    """Kind: decide. ``/fork`` (``event.position`` "before" ``event.entry_id``) or a
    clone ("at" it) is about to make a new session; ``cancel=True`` (or
    ``{"cancel": True}``) stops it."""


@hookspec
@chain("event")
def prepare_compaction(event: BeforeCompactEvent, ctx: Ctx) -> BeforeCompactEvent | None:
    """Kind: chain.

    Compaction is about to run: plan it. Return the event with ``preparation`` (the
    plan: what to summarise, where the kept part starts), ``reserve_tokens`` and
    ``keep_recent_tokens`` set, or ``None`` to keep it as it is; ``session_before_compact``
    then receives it. The built-in ``compaction`` plugin plans here; a plugin that
    replaces it (``-builtin:compaction``) plans here too, or leaves ``preparation`` None.
    """


@hookspec
@decide(result="pi_core.protocol.results:compaction_decision", guard=True)
def session_before_compact(event: BeforeCompactEvent, ctx: Ctx) -> CompactionDecision | dict | None:
    """Kind: decide.

    Compaction is about to run (``event.reason``: manual, threshold or overflow).
    ``event.preparation`` is the plan (:class:`pi_core.protocol.events.CompactionPreparation`:
    ``first_kept_entry_id``, ``tokens_before``, ``messages_to_summarize``, the previous
    summary, the files read and modified), exactly what the built-in summariser uses;
    ``None`` when there is nothing to summarise. Return ``cancel=True`` to stop it, or
    your own summary: a :class:`pi_core.protocol.events.CompactionDecision`, ``{"summary": ...}``
    or pi's ``{"compaction": {"summary": ..., "firstKeptEntryId": ...}}`` (left-out
    places come from the plan). A malformed result is reported and ignored.
    """


@hookspec
@notify
def session_compact(event: SessionCompactEvent, ctx: Ctx) -> None:
    """Kind: notify. A compaction entry was written (``event.entry``); ``event.reason``
    manual, threshold or overflow, ``event.will_retry`` whether the failed request is
    sent again now (pi 1.6)."""


@hookspec
@notify
def session_compact_failed(event: Any, ctx: Ctx) -> None:
    """Kind: notify. pi 1.6: a compaction ended without an entry, after its
    ``compaction_end``: ``event.reason``, ``event.error_message`` (pi 1.6's words: "Compaction
    failed: …", "Auto-compaction failed: …" or "Context overflow recovery failed: …"; None
    when it was cancelled or aborted), ``event.aborted`` (a plugin cancelled it, or the user),
    ``event.will_retry``, ``event.from_hook`` (a plugin's summary was being used)."""


@hookspec
@notify
def session_info_changed(event: Any, ctx: Ctx) -> None:
    """Kind: notify. pi 1.6: the session's display name changed (``event.name``, None
    when cleared), by ``/name``, RPC ``set_session_name`` or ``ctx.set_session_name``."""


@hookspec
@notify
def ui_prompt_start(event: Any, ctx: Ctx) -> None:
    """Kind: notify. pi 1.6: a plugin's dialog (``event.kind``: select, confirm, input,
    editor; ``event.title``) now waits for the user; nested dialogs make one span."""


@hookspec
@notify
def ui_prompt_end(event: Any, ctx: Ctx) -> None:
    """Kind: notify. The dialog span that ``ui_prompt_start`` opened is over."""


@hookspec
@decide(result="pi_core.protocol.results:tree_decision", guard=True)
def session_before_tree(event: BeforeTreeEvent, ctx: Ctx) -> TreeDecision | dict | None:
    """Kind: decide. ``/tree`` is about to move the leaf; return ``cancel=True`` to stay,
    or a result carrying the branch ``summary`` to use."""


@hookspec
@notify
def session_tree(event: SessionTreeEvent, ctx: Ctx) -> None:
    """Kind: notify. The leaf moved through ``/tree`` (``old_leaf_id``, ``new_leaf_id``)."""


@hookspec
@notify
def compaction_start(event: CompactionStart, ctx: Ctx) -> None:
    """Kind: notify. Compaction begins (``event.reason``)."""


@hookspec
@notify
def compaction_end(event: CompactionEnd, ctx: Ctx) -> None:
    """Kind: notify. Compaction ended (``reason``, ``result``, ``aborted``, ``will_retry``)."""


@hookspec
@notify
def auto_retry_start(event: AutoRetryStart, ctx: Ctx) -> None:
    """Kind: notify. A retryable provider failure will be retried after ``delay_ms``."""


@hookspec
@notify
def auto_retry_end(event: AutoRetryEnd, ctx: Ctx) -> None:
    """Kind: notify. Automatic retrying ended (``success``, ``attempt``)."""


@hookspec
@notify
def model_select(event: ModelSelect, ctx: Ctx) -> None:
    """Kind: notify. The model changed (``model``, ``previous_model``, ``source``: set,
    cycle or restore)."""


@hookspec
@notify
def thinking_level_select(event: ThinkingLevelSelect, ctx: Ctx) -> None:
    """Kind: notify. The thinking level changed (``level``, ``previous_level``)."""


@hookspec
@decide
def cache_warming_decision(event: Any, ctx: Ctx) -> dict | str | None:
    """Kind: decide. pi 1.6's ``cache_warming_decision``: a refresh of the provider's prompt
    cache is due (``event.warm_cost``, ``miss_cost``, ``continuation_probability``, and pi's
    ``action``, ``"warm"`` or ``"stop"``). Return ``{"action": "warm"}`` or
    ``{"action": "stop"}`` to overrule it (the last answer wins); ``"stop"`` ends warming
    until the next real request. A handler that raises leaves pi's decision."""


@hookspec
@collect
def resources_discover(event: ResourcesDiscoverEvent, ctx: Ctx) -> list[tuple[str, str]] | None:
    """Kind: collect (a plain list).

    At start-up and reload. Return extra resource paths as a list of
    ``(kind, path)`` pairs, kind being ``skill`` or ``prompt``.
    """


@hookspec
@decide
def workspace_checkpoints(ctx: Ctx) -> Checkpointer | str | None:
    """Kind: decide (the last plugin's answer wins).

    When ``harness.checkpoints()``, ``harness.restore_checkpoint()`` or a mode (RPC
    ``get_checkpoints`` / ``restore_checkpoint``, the chat's ``/tree`` and ``/fork``) needs
    the workspace's checkpoints. Return the object that keeps them
    (:class:`pi_core.protocol.shell.Checkpointer`: ``list()``, ``plan(entry_id)``,
    ``restore(entry_id)``), or a string saying why there are none here.
    """
