"""The pluggy markers for project ``pi`` and the dispatch-kind markers of its specs.

Each spec names its dispatch kind with one of :func:`notify`, :func:`decide`,
:func:`chain` or :func:`collect`, so ``ctx.plugins.call(name, **kwargs)`` dispatches by
what the spec declares instead of every call site choosing by hand::

    @hookspec
    @chain("message", result="pi_core.protocol.results:same_role_message")
    def message_end(message, ctx): ...

``result`` names a function (``"module:function"``, imported on first use) that turns a
handler's result into the documented object; it accepts the object or its dict shape
and raises ``TypeError``/``ValueError`` for anything else, which the dispatcher reports
with the plugin's name and treats as "no opinion". ``guard`` marks a decide hook that
guards an action (the action should not happen when a guard fails).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar

import pluggy

PROJECT = "pi"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

#: The attribute a dispatch marker sets on a spec function.
DISPATCH_ATTR = "pi_dispatch"

Kind = Literal["notify", "decide", "chain", "collect"]
F = TypeVar("F", bound=Callable[..., Any])


class Dispatch:
    """How a hook's handlers are called and their results combined."""

    __slots__ = ("kind", "arg", "key", "result", "guard", "stop")

    def __init__(self, kind: Kind, *, arg: str | None = None, key: Any = None,
                 result: str | Callable | None = None, guard: bool = False,
                 stop: str | None = None) -> None:
        self.kind = kind
        self.arg = arg  # chain: the argument passed from handler to handler
        self.key = key  # collect: attribute name or function an override is keyed by
        self.result = result  # "module:function" or a function coercing one result
        self.guard = guard  # decide: the hook guards an action
        self.stop = stop  # the result flag that ends dispatch (decide: cancel/block)

    def describe(self) -> str:
        """The kind as the docs table writes it: ``chain(message)``, ``collect(name)``."""
        if self.kind == "chain":
            return f"chain({self.arg})"
        if self.kind == "collect":
            return f"collect({self.key})" if isinstance(self.key, str) else "collect"
        return self.kind

    def coercer(self) -> Callable | None:
        """The result coercion function, imported on first use."""
        result = self.result
        if isinstance(result, str):
            import importlib

            module, _, name = result.partition(":")
            result = self.result = getattr(importlib.import_module(module), name)
        return result

    def __repr__(self) -> str:
        return f"<Dispatch {self.describe()}>"


def _mark(dispatch: Dispatch) -> Callable[[F], F]:
    def mark(function: F) -> F:
        setattr(function, DISPATCH_ATTR, dispatch)
        return function

    return mark


def notify(function: F) -> F:
    """Every handler is called in load order; results are ignored."""
    return _mark(Dispatch("notify"))(function)


def decide(function: F | None = None, *, result: str | Callable | None = None,
           guard: bool = False) -> Any:
    """Handlers in load order; ``None`` is no opinion; the last result wins; a result
    with ``cancel`` or ``block`` set stops dispatch at once."""
    mark = _mark(Dispatch("decide", result=result, guard=guard))
    return mark(function) if function is not None else mark


def chain(arg: str, *, result: str | Callable | None = None) -> Callable[[F], F]:
    """Each handler receives (as ``arg``) what the previous one returned; ``None`` keeps
    the value; a result with ``handled`` set ends the chain."""
    return _mark(Dispatch("chain", arg=arg, result=result))


def collect(function: F | None = None, *, key: Any = None,
            result: str | Callable | None = None) -> Any:
    """Every handler's items are gathered (one item or a list); with ``key``, a later
    item with the same key replaces an earlier one in its place."""
    mark = _mark(Dispatch("collect", key=key, result=result))
    return mark(function) if function is not None else mark


def dispatch_of(spec_function: Any) -> Dispatch | None:
    return getattr(spec_function, DISPATCH_ATTR, None)
