"""Events pi 1.6 added to the session's stream (and to the plugins' hooks of the same
name): kept in the application, since the harness is what knows them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pi_core.protocol.records import field, record


@record
class AgentSettled:
    """Nothing more will happen on its own (no retry, no compaction and retry, no queued
    message): what pi 1.6's ``RpcClient.waitForIdle`` waits for. ``aborted``: the run
    ended because it was aborted."""

    type: Literal["agent_settled"] = field(default="agent_settled", init=False)
    aborted: bool = False


if TYPE_CHECKING:  # the types of what __getattr__ below gives
    from pi_core.app.rare_session_events import *  # noqa: F403


def __getattr__(name: str) -> Any:
    """The events a plain prompt never emits, from :mod:`rare_session_events` on first use."""
    if not name.startswith("_"):  # not the import system's questions (``__path__`` …)
        from pi_core.app import rare_session_events

        if hasattr(rare_session_events, name):
            value = globals()[name] = getattr(rare_session_events, name)
            return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
