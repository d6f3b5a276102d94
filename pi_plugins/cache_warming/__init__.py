"""pi 1.6's prompt-cache warming (``cacheWarming``): while a run waits on a long tool and,
with ``"idle"`` (the default), for up to 30 minutes after it, the last request is sent
again with a one-token output cap shortly before the provider's cache entry would
expire, so the next real request reads the prompt from the cache instead of paying to
write it again. Only for a model that declares its cache lifetime (``promptCache``: pi
1.6's catalogue gives Anthropic's models one) and only when the refresh is expected to
save at least $0.05; plugins may overrule each decision (``cache_warming_decision``).

Hooks:

- ``message_start`` of an answer: a new session request was sent (the loop's
  ``last_request``): warming starts over from it;
- ``agent_settled``: the idle phase begins, or (``"streaming"``) warming stops;
- ``session_start``, ``session_shutdown``: another session, or none: warming stops.

Each refresh is a ``usage`` entry of kind ``cache_warm`` (counted in the session's
totals, never sent to the model) and an ``entry_appended`` event, which the chat shows
as ``Cache warmed: $0.012`` under ``showCacheMissNotices``. ``cacheWarming`` is read
from the global settings only, as pi reads it: warming costs money.
``-builtin:cache_warming`` turns it off.
"""

from __future__ import annotations

import weakref
from typing import Any, Literal

from pi_core import hookimpl
from pi_core.app import session_events
from pi_core.protocol.records import field, record
from pi_plugins.cache_warming.economics import Decision
from pi_plugins.cache_warming.warmer import Warmer

MODES = ("off", "streaming", "idle")
DEFAULT_MODE = "idle"

#: a ctx → its session's warmer
_WARMERS: weakref.WeakKeyDictionary[Any, Warmer] = weakref.WeakKeyDictionary()


@record
class CacheWarmingDecisionEvent:
    """pi 1.6's ``cache_warming_decision``: pi's estimates and its verdict, before a refresh."""

    type: Literal["cache_warming_decision"] = field(default="cache_warming_decision", init=False)
    warm_cost: float = 0.0  # the price of this refresh
    miss_cost: float = 0.0  # what the next request would pay more if the entry were lost
    continuation_probability: float = 0.0  # pi's estimate that a request comes in time
    action: str = "warm"  # pi's decision: "warm" or "stop"


def warming_mode(settings: Any) -> str:
    """``cacheWarming`` from the global settings.json only (pi 1.6); anything else: ``idle``."""
    scope = getattr(settings, "global_data", None)
    value = scope.get("cacheWarming") if isinstance(scope, dict) else None
    return value if value in MODES else DEFAULT_MODE


def chosen_action(result: Any, default: str) -> str:
    """A handler's answer (``{"action": ...}``, an object with ``action``, or the word
    itself) as ``warm``/``stop``; anything else keeps ``default``."""
    action = result.get("action") if isinstance(result, dict) else getattr(result, "action", result)
    return action if action in ("warm", "stop") else default


def warmer_of(ctx: Any) -> Warmer | None:
    """The warmer of ``ctx``'s session, made on first use (None without a session)."""
    warmer = _WARMERS.get(ctx)
    if warmer is None and getattr(ctx, "session", None) is not None and getattr(ctx, "agent", None) is not None:
        async def decide(decision: Decision) -> str:
            event = CacheWarmingDecisionEvent(warm_cost=decision.warm_cost, miss_cost=decision.miss_cost,
                                              continuation_probability=decision.continuation_probability,
                                              action=decision.action)
            result = await ctx.plugins.call("cache_warming_decision", event=event, ctx=ctx)
            return chosen_action(result, decision.action)

        async def warmed(entry: Any) -> None:
            await ctx.emit(session_events.EntryAppended(entry=entry))

        warmer = _WARMERS[ctx] = Warmer(ctx, lambda: warming_mode(ctx.settings), decide, warmed)
    return warmer


@hookimpl
def message_start(event, ctx):
    """An answer starts: if a new session request went out for it, keep that one warm."""
    if getattr(event.message, "role", None) != "assistant":
        return
    agent = getattr(ctx, "agent", None)
    request = getattr(agent, "last_request", None)
    warmer = warmer_of(ctx) if request is not None else None
    if warmer is not None and warmer.started_from is not request:
        warmer.start(request)


@hookimpl
def agent_settled(event, ctx):
    warmer = _WARMERS.get(ctx)
    if warmer is not None:
        warmer.settled()


@hookimpl
def session_start(event, ctx):
    warmer = _WARMERS.get(ctx)
    if warmer is not None:
        warmer.cancel()


@hookimpl
def session_shutdown(event, ctx):
    warmer = _WARMERS.get(ctx)
    if warmer is not None:
        warmer.cancel()
