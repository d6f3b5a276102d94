"""pi 1.6's ``tool_search``, as a plugin: the model searches the tools not declared to it
and the matches are declared from its next request.

- ``register_tools``: ``tool_search``, off by default (``--tools +tool_search`` or
  ``"defaultTools": ["+tool_search"]`` turn it on); see :mod:`.tool`;
- ``turn_end``: what it loaded in the turn is recorded in the session, after the tool
  results, as pi 1.6 records a tool change (:mod:`.loadout`);
- ``session_start`` (resume, fork, new, reload) and ``session_tree``: the tools loaded on
  the branch now current are declared again, those of the branch left are withdrawn.

:mod:`.ranking` is the BM25 ranker, shared with codemode's ``searchTools()``. Drop the
plugin with ``-builtin:tool-search``.
"""

from __future__ import annotations

import weakref
from typing import Any

import attrs

from pi_core import hookimpl
from pi_core.protocol.records import record


@record
class _State:
    #: Names this plugin declared (loaded or restored), so a branch change can withdraw them.
    ours: set[str] = attrs.field(factory=set)
    #: Tools loaded in the turn under way, recorded at its end.
    pending: list = attrs.field(factory=list)


_states: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _state(ctx: Any) -> _State:
    found = _states.get(ctx)
    if found is None:
        found = _states[ctx] = _State()
    return found


def _loaded(ctx: Any, tools: list) -> None:
    state = _state(ctx)
    state.ours.update(t.name for t in tools)
    state.pending.extend(tools)


@hookimpl
def register_tools(ctx):
    from pi_plugins.tool_search.tool import make_tool

    return [make_tool(_loaded)]


@hookimpl
def turn_end(event, ctx):
    state = _states.get(ctx)
    if state is None or not state.pending or getattr(ctx, "session", None) is None:
        return
    from pi_plugins.tool_search.loadout import record

    tools, state.pending = state.pending, []
    record(ctx.session, tools)


def _sync(ctx: Any) -> None:
    from pi_plugins.tool_search.loadout import sync

    state = _state(ctx)
    state.pending = []
    state.ours = sync(ctx, state.ours)


@hookimpl
def session_start(event, ctx):
    _sync(ctx)


@hookimpl
def session_tree(event, ctx):
    _sync(ctx)
