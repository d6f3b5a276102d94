"""The plugin manager: pluggy's registry plus load order, awaiting and four dispatch kinds.

pluggy gives the registry, spec validation and markers. On top of it this module calls
the implementations itself, in **load order** (registration order; ``tryfirst`` and
``trylast`` move a handler to the front or back), awaits ``async def`` handlers, isolates
failures (a handler that raises is reported with its plugin and hook, then skipped) and
gives each hook kind its meaning: :meth:`Plugins.notify`, :meth:`Plugins.decide`,
:meth:`Plugins.chain`, :meth:`Plugins.collect`.

Guards fail closed: a decide hook that guards an action (``before_tool_call``,
``user_bash``, ``session_before_*``) and raises blocks the action instead of letting it
through (:class:`GuardFailure`); a permission plugin with a bug must not open the door.

The implementation list of each hook is cached, so firing a hook nobody implements costs
a dict lookup: ``message_update`` fires for every streamed token.
"""

from __future__ import annotations

import inspect
import logging
import traceback
from collections import deque
from typing import Any, Callable

import pluggy
from attrs import define, field

import hookspecs

log = logging.getLogger("pi.plugins")


@define
class PluginInfo:
    """Where a loaded plugin came from."""

    name: str
    plugin: Any = field(repr=False)
    source: str = "api"  # builtin, entry point, file, cli, api
    location: str = ""  # module name or file path
    distribution: str | None = None
    version: str | None = None


@define
class PluginError:
    """A plugin's handler (or its loading) raised; the run went on without it."""

    plugin: str
    hook: str
    error: BaseException
    traceback: str = ""

    def __str__(self) -> str:
        return f"plugin {self.plugin!r} failed in {self.hook}: {type(self.error).__name__}: {self.error}"


class _Impl:
    """One cached hook implementation: what the dispatcher needs, nothing more."""

    __slots__ = ("plugin", "function", "argnames", "is_async")

    def __init__(self, impl: pluggy.HookImpl):
        self.plugin = impl.plugin_name
        self.function = impl.function
        self.argnames = tuple(impl.argnames) + tuple(impl.kwargnames)
        self.is_async = inspect.iscoroutinefunction(impl.function)


#: Decide hooks that guard an action: a handler that raises blocks it (fails closed).
GUARD_HOOKS = frozenset({"before_tool_call", "user_bash"})
GUARD_PREFIX = "session_before_"


def is_guard(hook: str) -> bool:
    """Whether ``hook`` guards an action, so that a handler's failure blocks it."""
    return hook in GUARD_HOOKS or hook.startswith(GUARD_PREFIX)


@define
class GuardFailure:
    """The decision of a guard whose handler raised: the action is blocked (``block``
    for a tool call, ``cancel`` for the user's shell and session changes), with a
    ``reason`` the model or the user reads."""

    plugin: str
    hook: str
    error: BaseException
    block: bool = True
    cancel: bool = True
    arguments: None = None
    result: None = None

    @property
    def reason(self) -> str:
        return (f"Plugin {self.plugin!r} failed in {self.hook}, so the permission check failed "
                f"and the action was blocked ({type(self.error).__name__}: {self.error})")


def flag(result: Any, name: str) -> bool:
    """True when a hook result sets ``name`` (an attribute, or a key of a dict result)."""
    if isinstance(result, dict):
        return bool(result.get(name))
    return bool(getattr(result, name, False))


class Plugins:
    """The loaded plugins and the dispatcher over their hooks."""

    def __init__(self) -> None:
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        for module in hookspecs.SPEC_MODULES:
            self.pm.add_hookspecs(module)
        self._infos: dict[str, PluginInfo] = {}
        self._cache: dict[str, tuple[_Impl, ...]] = {}
        self.errors: deque[PluginError] = deque(maxlen=200)
        #: Plugins discovery found but settings left out (:class:`pi_core.discovery.SkippedPlugin`).
        self.skipped: list = []
        self.error_listeners: list[Callable[[PluginError], None]] = []

    # ------------------------------------------------------------ registry

    def register(
        self,
        plugin: Any,
        name: str | None = None,
        *,
        source: str = "api",
        location: str = "",
        distribution: str | None = None,
        version: str | None = None,
    ) -> str | None:
        """Register ``plugin`` (a module or an object with ``@hookimpl`` methods) last in
        load order. A plugin that does not fit its hook specs is reported and skipped;
        returns the name it got, or ``None`` when it was not registered."""
        name = name or getattr(plugin, "__name__", None) or type(plugin).__name__
        if name in self._infos:
            name = f"{name}@{location or id(plugin)}"
        try:
            self.pm.register(plugin, name)
        except Exception as exc:
            self.report(name, "register", exc)
            return None
        self._infos[name] = PluginInfo(
            name=name, plugin=plugin, source=source, location=location,
            distribution=distribution, version=version,
        )
        self._cache.clear()
        unknown = [h.name for h in self.pm.get_hookcallers(plugin) or () if h.spec is None]
        for hook in unknown:
            self.report(name, hook, LookupError(f"no hook named {hook!r}; is it misspelled?"))
        return name

    def unregister(self, name: str) -> None:
        info = self._infos.pop(name, None)
        if info is not None:
            self.pm.unregister(name=name)
            self._cache.clear()

    @property
    def infos(self) -> list[PluginInfo]:
        """The registered plugins in load order."""
        return list(self._infos.values())

    def hooks_of(self, name: str) -> list[str]:
        """The hooks a plugin implements, in catalogue order."""
        plugin = self._infos[name].plugin
        return sorted(h.name for h in self.pm.get_hookcallers(plugin) or ())

    def has(self, hook: str) -> bool:
        """Whether any plugin implements ``hook`` (cheap; use it to skip building events)."""
        return bool(self.impls(hook))

    def impls(self, hook: str) -> tuple[_Impl, ...]:
        impls = self._cache.get(hook)
        if impls is None:
            impls = self._cache[hook] = self._ordered(hook)
        return impls

    def _ordered(self, hook: str) -> tuple[_Impl, ...]:
        caller = getattr(self.pm.hook, hook, None)
        if caller is None:
            return ()
        position = {name: i for i, name in enumerate(self._infos)}
        found = [i for i in caller.get_hookimpls() if not (i.wrapper or i.hookwrapper)]
        found.sort(key=lambda i: (-1 if i.tryfirst else 1 if i.trylast else 0,
                                  position.get(i.plugin_name, len(position))))
        return tuple(_Impl(i) for i in found)

    # ------------------------------------------------------------ errors

    def report(self, plugin: str, hook: str, exc: BaseException) -> None:
        error = PluginError(plugin, hook, exc, "".join(traceback.format_exception(exc)))
        self.errors.append(error)
        log.warning("%s", error)
        log.debug("%s", error.traceback)
        for listener in self.error_listeners:
            listener(error)

    async def _call(self, impl: _Impl, hook: str, kwargs: dict) -> tuple[bool, Any]:
        try:
            result = impl.function(*[kwargs[a] for a in impl.argnames])
            if impl.is_async or inspect.isawaitable(result):
                result = await result
            return True, result
        except Exception as exc:
            self.report(impl.plugin, hook, exc)
            return False, exc

    # ------------------------------------------------------------ dispatch kinds

    async def notify(self, hook: str, /, **kwargs: Any) -> None:
        """Call every handler in load order; results are ignored."""
        for impl in self.impls(hook):
            try:
                result = impl.function(*[kwargs[a] for a in impl.argnames])
                if impl.is_async or inspect.isawaitable(result):
                    await result
            except Exception as exc:
                self.report(impl.plugin, hook, exc)

    async def decide(self, hook: str, /, **kwargs: Any) -> Any:
        """Last non-``None`` result wins; one with ``cancel`` or ``block`` set wins at once.
        In a guard hook (:func:`is_guard`) a handler that raises is reported and its
        :class:`GuardFailure` blocks the action."""
        decision = None
        for impl in self.impls(hook):
            ok, result = await self._call(impl, hook, kwargs)
            if not ok and is_guard(hook):
                return GuardFailure(impl.plugin, hook, result)
            if ok and result is not None:
                decision = result
                if flag(result, "cancel") or flag(result, "block"):
                    break
        return decision

    async def chain(self, hook: str, arg: str, value: Any, /, **kwargs: Any) -> Any:
        """Pass ``value`` (as argument ``arg``) through every handler; ``None`` keeps it.
        A result with ``handled`` set ends the chain."""
        for impl in self.impls(hook):
            kwargs[arg] = value
            ok, result = await self._call(impl, hook, kwargs)
            if ok and result is not None:
                value = result
                if flag(result, "handled"):
                    break
        return value

    async def collect(
        self, hook: str, /, key: str | Callable[[Any], Any] | None = None, **kwargs: Any
    ) -> list:
        """Gather every handler's items (a handler returns one item or a list).

        With ``key`` (an attribute name or a function), an item from a later plugin
        replaces an earlier one with the same key, keeping the earlier one's place.
        """
        keyfn = (lambda item: getattr(item, key)) if isinstance(key, str) else key
        items: dict[Any, Any] = {}
        plain: list = []
        for impl in self.impls(hook):
            ok, result = await self._call(impl, hook, kwargs)
            if not ok or result is None:
                continue
            for item in result if isinstance(result, (list, tuple)) else [result]:
                if keyfn is None:
                    plain.append(item)
                    continue
                try:
                    items[keyfn(item)] = item
                except Exception as exc:
                    self.report(impl.plugin, hook, TypeError(f"cannot key {item!r}: {exc}"))
        return plain if keyfn is None else list(items.values())
