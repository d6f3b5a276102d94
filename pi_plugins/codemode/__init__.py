"""The built-in ``codemode`` (pi 1.6's ``builtin:codemode``, docs/codemode.md): a tool
whose input is JavaScript run in a QuickJS sandbox, calling the other tools.

- ``register_tools``: the ``codemode`` tool, off until asked for (``--tools +codemode``,
  ``"defaultTools": ["+codemode"]``), its script written under a grammar by a model that
  takes grammar tools (:mod:`pi_plugins.providers.grammar_tools`);
- ``prepare_request``: while it is declared, ``codemode.mode`` decides how the other
  tools are shown: ``on`` (default) keeps them declared with a note on calling them
  from scripts; ``only`` hides them from the model and lists them in codemode's
  description instead, within ``codemode.inlineBudget`` estimated tokens (default 3000);
- ``session_shutdown``: idle sandbox workers go.

Drop it with ``-builtin:codemode``.
"""

from __future__ import annotations

import sys
from typing import Any

import attrs

from pi_core import Tool, hookimpl
from pi_plugins.codemode import declarations
from pi_plugins.codemode.declarations import NAME, make_tool

DEFAULT_INLINE_BUDGET = 3000


def _setting(ctx: Any, key: str, default: Any) -> Any:
    settings = getattr(ctx, "settings", None)
    value = settings.get(key) if settings is not None else None
    return default if value is None else value


TOOL = make_tool(declarations.INTRO)
_shown: dict[tuple[int, str], Tool] = {}  # (tool id, description) -> the tool as the model sees it


def _as(tool: Tool, description: str) -> Tool:
    """``tool`` with another description; kept, so its schema is compiled once."""
    key = (id(tool), description)
    shown = _shown.get(key)
    if shown is None or shown.parameters is not tool.parameters:
        if len(_shown) > 512:
            _shown.clear()
        shown = _shown[key] = attrs.evolve(tool, description=description)
    return shown


@hookimpl
def register_tools():
    from pi_plugins.providers import grammar_tools

    # a model that takes grammar tools writes the script as raw text, not a JSON string (pi 1.6)
    grammar_tools.declare(NAME, {"type": "grammar", "variants": {"openai_lark": declarations.GRAMMAR}})
    return [TOOL]


@hookimpl
def prepare_request(request, ctx):
    ours = next((t for t in request.tools if t.name == NAME), None)
    if ours is None:
        return None
    others = [t for t in request.tools if t.name != NAME]
    mode = _setting(ctx, "codemode.mode", "on")
    budget = _setting(ctx, "codemode.inlineBudget", DEFAULT_INLINE_BUDGET)
    budget = budget if isinstance(budget, int) and not isinstance(budget, bool) else DEFAULT_INLINE_BUDGET
    if mode == "only":
        return attrs.evolve(request, tools=[_as(ours, declarations.codemode_description(others, budget))])
    noted = iter([_as(t, t.description + declarations.script_note(t)) for t in others])
    return attrs.evolve(request, tools=[ours if t.name == NAME else next(noted) for t in request.tools])


@hookimpl
def session_shutdown():
    sandbox = sys.modules.get("pi_plugins.codemode.sandbox")  # never loaded: no worker to close
    if sandbox is not None:
        sandbox.close_idle()
