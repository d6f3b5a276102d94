"""The pi-harness hook catalogue: the public contract between the core and its plugins.

Every decision point of the harness is one hook below. Each spec declares its dispatch
kind with a marker (:func:`notify`, :func:`decide`, :func:`chain` ``(arg)``,
:func:`collect` ``(key=...)``, from :mod:`hookspecs.markers`), so
``await plugins.call(name, **kwargs)`` dispatches by the spec; its docstring says when it
fires, what it receives and what its result means. Specs are typed as pytest's are
(imports under ``TYPE_CHECKING``; ``ctx`` is :class:`pi_core.protocol.ctx.Ctx`). The kinds:

- **notify**: every handler is called in load order; results are ignored.
- **decide**: handlers in load order; ``None`` means no opinion; a later result replaces
  an earlier one (last result wins); a result whose ``cancel`` or ``block`` is true stops
  dispatch at once.
- **chain**: each handler receives the value the previous one returned (middleware);
  returning ``None`` keeps the value; a result whose ``handled`` is true stops the chain.
- **collect**: results from all handlers are gathered; an item registered later under the
  same name replaces the earlier one (a user's ``read`` tool replaces the built-in).

Handlers may be plain functions or ``async def``; the dispatcher awaits them. Every hook
receives ``ctx``, the plugin's view of the running harness (cwd, ui, event bus, abort…),
and may leave out any argument it does not need, as pluggy allows.

Plugin authors import the marker from the core: ``from pi_core import hookimpl``.
"""

from hookspecs import app, cli, loop, providers, session, tools
from hookspecs.markers import PROJECT, chain, collect, decide, hookimpl, hookspec, notify

#: The spec modules, in the order the plugin manager adds them.
SPEC_MODULES = (loop, tools, session, providers, cli, app)

__all__ = ["PROJECT", "SPEC_MODULES", "chain", "collect", "decide", "hookimpl", "hookspec", "notify"]
