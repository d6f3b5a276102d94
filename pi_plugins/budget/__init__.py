"""Budgets, as a plugin: spend limits checked before every model request.

- ``register_flags``: ``--max-cost``, ``--max-tokens``, ``--max-turns``;
  ``configuration_problems``: a limit that is not a number stops the start;
- ``session_start``: the session's budget, from its flags and settings (unless a caller
  gave one: :func:`attach`, as a subagent or a batch task gets its parent's);
- ``prepare_request``: past a limit, the request is not sent (``request.stop``), a
  ``budget_exceeded`` event goes out and the session records a ``budget_exceeded``
  custom entry; a model without prices is said once to count tokens and turns only.

Loaded before compaction, so a run past its budget does not compact either. What it
counts: :mod:`pi_plugins.budget.limits`. Drop it with ``-builtin:budget``.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Callable
from typing import Any

import attrs

from pi_core import hookimpl
from pi_core.protocol.commands import Flag
from pi_core.protocol.records import record

#: Each session's state (its ctx → :class:`_State`).
_states: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_FLAGS = {"cost": "max-cost", "tokens": "max-tokens", "turns": "max-turns"}


@record
class _State:
    budget: Any = None
    #: Why the last run stopped, if its budget stopped it.
    stop: Any = None
    #: Spend not on the path yet: the running subagents' (callables giving a Spent).
    sources: list[Callable[[], Any]] = attrs.field(factory=list)
    said_no_prices: bool = False


def _state(ctx) -> _State:
    found = _states.get(ctx)
    if found is None:
        found = _states[ctx] = _State()
    return found


def attach(ctx, budget) -> None:
    """Give the session of ``ctx`` this :class:`~pi_plugins.budget.limits.Budget`
    (before it starts), instead of the one its flags and settings would make."""
    _state(ctx).budget = budget


def budget_of(ctx):
    """The session's :class:`~pi_plugins.budget.limits.Budget`, or None before it starts."""
    found = _states.get(ctx)
    return found.budget if found is not None else None


def stop_of(ctx):
    """The :class:`~pi_plugins.budget.limits.BudgetExceeded` that ended the session's
    last run, or None."""
    found = _states.get(ctx)
    return found.stop if found is not None else None


def spent(ctx):
    """What the session's path has spent, with what its running subagents have so far."""
    from pi_plugins.budget.limits import spent_of

    total = spent_of(ctx.session.path()) if ctx.session is not None else spent_of(())
    for source in _state(ctx).sources:
        total = total.add(source())
    return total


def spend_source(ctx, source: Callable[[], Any]) -> Callable[[], None]:
    """Count ``source()`` (a Spent) as spent until the returned function is called."""
    sources = _state(ctx).sources
    sources.append(source)
    return lambda: sources.remove(source) if source in sources else None


def _from_config(ctx):
    from pi_plugins.budget.limits import Budget

    return Budget.from_settings(ctx.settings, {name: ctx.get_flag(flag) for name, flag in _FLAGS.items()})


@hookimpl
def register_flags():
    return [Flag("max-cost", "Stop before a request once the session has spent this much USD "
                 "(settings budget.maxCostUsd).", "string"),
            Flag("max-tokens", "Stop before a request once the session has used N input plus output "
                 "tokens (budget.maxTokens).", "string"),
            Flag("max-turns", "Stop before a request once the session has made N model requests "
                 "(budget.maxTurns).", "string")]


@hookimpl
def configuration_problems(ctx):
    from pi_plugins.budget.limits import BudgetError

    try:
        budget = _from_config(ctx)
    except BudgetError as exc:
        return [str(exc)]
    _state(ctx).budget = budget  # (a caller's attach, which comes later, replaces it)
    return None


@hookimpl
def session_start(event, ctx):
    from pi_plugins.budget.limits import BudgetError

    state = _state(ctx)
    if state.budget is None:
        try:
            state.budget = _from_config(ctx)
        except BudgetError:  # said at start-up (configuration_problems) where there is one
            pass


@hookimpl
def agent_start(event, ctx):
    _state(ctx).stop = None


@hookimpl
async def prepare_request(request, ctx):
    from pi_plugins.budget.limits import has_prices

    state = _state(ctx)
    budget = state.budget
    if budget is None or not budget.active or ctx.session is None:
        return None
    if budget.max_cost is not None and not has_prices(request.model) and not state.said_no_prices:
        state.said_no_prices = True
        said = (f"budget: {request.model.key} has no prices: its requests count tokens "
                "and turns only, no cost")
        if getattr(ctx.ui, "has_ui", False):  # the chat, an RPC or ACP client
            ctx.ui.notify(said, "warning")
        else:  # pi -p, --mode json: stdout is the answer's
            sys.stderr.write(said + "\n")
    hit = await budget.check(spent(ctx))
    if hit is None:
        return None
    state.stop = hit
    ctx.session.append_custom("budget_exceeded", {"limit": hit.limit, "spent": hit.spent, "max": hit.max})
    await ctx.emit(hit)
    return attrs.evolve(request, stop=True)
