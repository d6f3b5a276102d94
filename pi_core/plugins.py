"""The plugin manager: pluggy's registry plus load order, awaiting and four dispatch kinds.

pluggy gives the registry, spec validation and markers; this module calls the handlers itself, in load order
(``tryfirst``/``trylast`` move one to the front or back), awaits ``async def`` ones, and reports a handler
that raises or returns what its spec's coercion refuses, then skips it. The marker on a hook's spec gives
its kind (docs/plugins.md, "How hooks are called"); a hook without a spec is notified. Guards fail closed: a
guarding decide hook that raises blocks the action (:class:`GuardFailure`), so a permission plugin with a
bug does not open the door. Each hook's handlers are cached: firing a hook nobody implements costs a dict
lookup (``message_update`` fires for every streamed token)."""

from __future__ import annotations

import inspect
import logging
import traceback
import types
from collections import deque
from collections.abc import Callable
from typing import Any

import pluggy

import hookspecs
from hookspecs.markers import Dispatch, dispatch_of
from pi_core.protocol.records import field, record

log = logging.getLogger("pi.plugins")


@record
class PluginInfo:
    """Where a loaded plugin came from."""

    name: str
    plugin: Any = field(repr=False)
    source: str = "api"  # builtin, entry point, file, cli, api
    location: str = ""  # module name or file path
    distribution: str | None = None
    version: str | None = None


@record
class PluginError:
    """A plugin's handler (or its loading) raised; the run went on without it."""

    plugin: str
    hook: str
    error: BaseException
    traceback: str = ""
    #: The file that failed to load, where one did (the chat lists it as pi's ``[Extension issues]``).
    path: str = ""

    def __str__(self) -> str:
        if isinstance(self.error, NotRunnable):
            return str(self.error)
        return f"plugin {self.plugin!r} failed in {self.hook}: {type(self.error).__name__}: {self.error}"


class NotRunnable(ValueError):
    """An extension that is not a plugin (pi's TypeScript): reported by its own words."""


class _Impl:
    """One cached hook implementation: what the dispatcher needs, nothing more."""

    __slots__ = ("plugin", "function", "argnames", "is_async")

    def __init__(self, impl: pluggy.HookImpl):
        self.plugin = impl.plugin_name
        self.function: Callable[..., Any] = impl.function
        self.argnames = tuple(impl.argnames) + tuple(impl.kwargnames)
        self.is_async = inspect.iscoroutinefunction(impl.function)


@record
class GuardFailure:
    """The decision of a guard whose handler raised: ``block`` and ``cancel`` set, with a
    ``reason`` the model or the user reads."""

    plugin: str
    hook: str
    error: BaseException
    block: bool = True
    cancel: bool = True
    # the other decision fields, empty, so that every guard's reader can take it
    arguments: None = None
    result: None = None
    message: None = None
    summary: None = None
    details: None = None
    generate: None = None
    from_hook: bool = True

    @property
    def reason(self) -> str:
        return (f"Plugin {self.plugin!r} failed in {self.hook}, so the permission check failed "
                f"and the action was blocked ({type(self.error).__name__}: {self.error})")


#: What pluggy takes a hook implementation from (functions and methods, as it looks them up).
_HOOKABLE = (types.FunctionType, staticmethod, classmethod, types.MethodType)


class _Manager(pluggy.PluginManager):
    """pluggy's manager, checking each implementation against its spec on its own: a wrong argument name
    or an unsupported ``wrapper`` drops that one hook (reported with the plugin's name), not the whole plugin."""

    def __init__(self, project: str, owner: Plugins) -> None:
        super().__init__(project)
        self._owner = owner
        self._registering: str | None = None
        self.unspecified: list[str] = []  # the hooks with no spec that the plugin being registered has

    def parse_hookspec_opts(self, module_or_class: Any, name: str):  # (no lookup of what is no function)
        return None if type(module_or_class) is types.ModuleType and not isinstance(
            module_or_class.__dict__.get(name), _HOOKABLE) else super().parse_hookspec_opts(module_or_class, name)

    def parse_hookimpl_opts(self, plugin: Any, name: str):
        if name[:2] == "__" == name[-2:] or type(plugin) is types.ModuleType and not (isinstance(
                value := plugin.__dict__.get(name), _HOOKABLE) and (type(value) is not types.FunctionType or
                                                                    getattr(value, f"{self.project_name}_impl", None) is not None)):
            return None  # a dunder, not a function (imports…) or not one the marker marked (helpers): no lookup
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is None:
            return None
        hook = getattr(self.hook, name, None)
        spec = getattr(hook, "spec", None)
        who = self._registering or str(getattr(plugin, "__name__", type(plugin).__name__))
        if opts.get("wrapper") or opts.get("hookwrapper"):
            self._owner.report(who, name, TypeError(
                "@hookimpl(wrapper=True) / hookwrapper is not supported: pi calls hooks itself "
                "(by their kind); drop the option and return a result instead"))
            return None
        if getattr(getattr(self.hook, hookname := opts.get("specname") or name, None), "spec", None) is None:
            self.unspecified.append(hookname)  # (pluggy registers it under its specname, if it has one)
        if spec is not None:
            try:
                function = getattr(plugin, name)
                # the arguments pluggy passes: those without a default (``self`` is bound), a function's by its code
                code = function.__code__ if type(function) is types.FunctionType else None
                if code is not None and not function.__dict__.keys() & {"__wrapped__", "__signature__"}:
                    argnames = code.co_varnames[:code.co_argcount - len(function.__defaults__ or ())]
                else:
                    argnames = tuple(p.name for p in inspect.signature(function).parameters.values()
                                     if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty)
            except Exception:  # let pluggy say what is wrong
                return opts
            unknown = [a for a in argnames if a not in spec.argnames]
            if unknown:
                self._owner.report(who, name, TypeError(
                    f"{name}() takes argument(s) {', '.join(map(repr, unknown))} the hook does not "
                    f"give; it gives {', '.join(spec.argnames)}. This hook is skipped"))
                return None
        return opts


_UNSPECIFIED = Dispatch("notify")  # the kind of a hook with no spec (an event nobody declared)


def flag(result: Any, name: str) -> bool:
    """True when a hook result sets ``name`` (an attribute, or a key of a dict result)."""
    if isinstance(result, dict):
        return bool(result.get(name))
    return bool(getattr(result, name, False))


class Plugins:
    """The loaded plugins and the dispatcher over their hooks."""

    def __init__(self) -> None:
        self.pm = _Manager(hookspecs.PROJECT, self)
        for module in hookspecs.SPEC_MODULES:
            self.pm.add_hookspecs(module)
        self._infos: dict[str, PluginInfo] = {}
        self._kinds: dict[str, Dispatch] = {}  # what call() dispatches by, specless hooks too
        #: Per collect hook: (key, winning plugin, plugins it replaced), from the last collect.
        self.overrides: dict[str, list[tuple[Any, str, list[str]]]] = {}
        self._cache: dict[str, tuple[_Impl, ...]] = {}
        self.errors: deque[PluginError] = deque(maxlen=200)
        #: Plugins discovery found but settings left out (:class:`pi_core.app.discovery.Found`).
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
        """Register ``plugin`` last in load order; the name it got, or ``None`` when it
        does not fit its hook specs (reported)."""
        name = name or getattr(plugin, "__name__", None) or type(plugin).__name__
        if name in self._infos:
            name = f"{name}@{location or id(plugin)}"
        self.pm._registering, self.pm.unspecified = name, []
        try:
            self.pm.register(plugin, name)
        except Exception as exc:
            self.report(name, "register", exc)
            return None
        finally:
            self.pm._registering = None
        self._infos[name] = PluginInfo(
            name=name, plugin=plugin, source=source, location=location,
            distribution=distribution, version=version,
        )
        self._cache.clear()
        unknown = self.pm.unspecified
        for hook in unknown:
            self.report(name, hook, LookupError(f"no hook named {hook!r}; is it misspelled?"))
        return name

    def unregister(self, name: str) -> None:
        if self._infos.pop(name, None) is not None:
            self.pm.unregister(name=name)
            self._cache.clear()

    def reorder(self, names: list[str]) -> None:
        """Put the plugins in the load order ``names`` gives: a project's plugins load once
        its trust is decided, then take their documented place."""
        if sorted(names) != sorted(self._infos):
            raise ValueError("reorder needs every registered plugin's name, once")
        self._infos = {name: self._infos[name] for name in names}
        self._cache.clear()

    @property
    def infos(self) -> list[PluginInfo]:
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

    def report(self, plugin: str, hook: str, exc: BaseException, path: str = "") -> None:
        error = PluginError(plugin, hook, exc, "".join(traceback.format_exception(exc)), path)
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

    def dispatch(self, hook: str) -> Dispatch:
        """The dispatch kind the spec of ``hook`` declares (notify for a hook without one)."""
        kind = self._kinds.get(hook)
        if kind is None:
            spec = getattr(getattr(self.pm.hook, hook, None), "spec", None)
            found = dispatch_of(spec.function) if spec is not None else None
            kind = self._kinds[hook] = found or _UNSPECIFIED
        return kind

    async def call(self, hook: str, /, **kwargs: Any) -> Any:
        """Call ``hook``'s handlers with ``kwargs``, their results combined by its kind."""
        impls = self.impls(hook)
        kind: Any = self._kinds.get(hook) or self.dispatch(hook)
        name = kind.kind
        if name == "notify":
            for impl in impls:
                try:
                    result = impl.function(*[kwargs[a] for a in impl.argnames])
                    if result is not None and (impl.is_async or inspect.isawaitable(result)):
                        await result
                except Exception as exc:
                    self.report(impl.plugin, hook, exc)
            return None
        if name == "chain":
            return await self._chain(hook, kind, impls, kwargs) if impls else kwargs[kind.arg]
        if name == "decide":
            return await self._decide(hook, kind, impls, kwargs) if impls else None
        return await self._collect(hook, kind, impls, kwargs) if impls else []

    async def _decide(self, hook: str, kind, impls: tuple, kwargs: dict) -> Any:
        decision = None
        coerce = kind.coercer()
        for impl in impls:
            ok, result = await self._call(impl, hook, kwargs)
            if not ok and kind.guard:
                return GuardFailure(impl.plugin, hook, result)
            if not ok or result is None:
                continue
            if coerce is not None:
                try:
                    result = coerce(result)
                except (TypeError, ValueError) as exc:
                    self.report(impl.plugin, hook, type(exc)(f"malformed result ignored: {exc}"))
                    continue
            decision = result
            if flag(result, "cancel") or flag(result, "block"):
                break
        return decision

    async def _chain(self, hook: str, kind, impls: tuple, kwargs: dict) -> Any:
        arg, coerce = kind.arg, kind.coercer()
        value = kwargs[arg]
        for impl in impls:
            kwargs[arg] = value
            ok, result = await self._call(impl, hook, kwargs)
            if ok and result is not None:
                if coerce is not None:
                    try:
                        result = coerce(result, value)
                    except (TypeError, ValueError) as exc:
                        self.report(impl.plugin, hook, type(exc)(f"malformed result ignored: {exc}"))
                        continue
                value = result
                if flag(result, "handled"):
                    break
        return value

    async def _collect(self, hook: str, kind, impls: tuple, kwargs: dict) -> list:
        """A later plugin's item replaces an earlier one with the same ``key`` in its
        place; :attr:`overrides` keeps who replaced whom (``pi plugins``)."""
        key, coerce = kind.key, kind.coercer()
        keyfn = (lambda item: getattr(item, key)) if isinstance(key, str) else key
        items: dict[Any, Any] = {}
        owners: dict[Any, list[str]] = {}
        plain: list = []
        for impl in impls:
            ok, result = await self._call(impl, hook, kwargs)
            if not ok or result is None:
                continue
            for item in result if isinstance(result, (list, tuple)) else [result]:
                if coerce is not None:  # the spec's item shape: a malformed one is reported
                    try:
                        item = coerce(item)
                    except (TypeError, ValueError) as exc:
                        self.report(impl.plugin, hook, type(exc)(f"malformed result ignored: {exc}"))
                        continue
                if keyfn is None:
                    plain.append(item)
                    continue
                try:
                    item_key = keyfn(item)
                except Exception as exc:
                    self.report(impl.plugin, hook, TypeError(f"cannot key {item!r}: {exc}"))
                    continue
                items[item_key] = item
                owners.setdefault(item_key, []).append(impl.plugin)
        if keyfn is None:
            return plain
        self.overrides[hook] = [(k, names[-1], names[:-1]) for k, names in owners.items()
                                if len(names) > 1]
        return list(items.values())
