"""Finding and loading plugins, in load order.

1. built-ins: the ``pi.plugins`` entry points of pi-harness itself, in the order
   ``pi_core.app.builtins.LOAD_ORDER`` declares (installed metadata sorts them by name);
2. installed packages' ``pi.plugins`` entry points, by distribution name, then entry-point
   name, so the order is stable from run to run;
3. plugin files and folders: ``<agent dir>/extensions/*.py`` (and ``extensions/NAME/__init__.py``),
   then ``<cwd>/.pi/extensions/`` alike,
   then the files and folders settings.json lists under ``extensions`` (global, then project);
4. ``-e PATH`` from the command line (a ``.py`` file or a package directory).

``discover=False`` (the CLI's ``--no-extensions``) skips 2 and 3; explicit paths still load.
The project's files (``.pi/extensions``, the project settings' ``extensions``) load only
when the settings say the project is trusted (the ``trust`` plugin decides); trusted
later, :func:`load_project_plugins` adds them.
A plugin that fails to import is reported and skipped.

Settings choose which discovered plugins load, before anything is imported:
``plugins.disabled`` (names of plugins or of their distributions) leaves those out, built-ins
included; ``plugins.enabled``, when set, is an allow-list for 2 and 3 (built-ins load unless
disabled). Paths named explicitly (``-e``, settings ``extensions``) always load. What was
left out is in ``plugins.skipped``, so ``pi plugins`` can show it.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from attrs import define

from pi_core.paths import agent_dir as default_agent_dir
from pi_core.paths import project_dir
from pi_core.plugins import Plugins

GROUP = "pi.plugins"
OWN_DISTRIBUTION = "pi-harness"


@define
class SkippedPlugin:
    """A discovered plugin the settings left out; it was never imported."""

    name: str
    source: str
    location: str
    reason: str
    distribution: str | None = None
    version: str | None = None


class PluginPolicy:
    """``plugins.enabled`` / ``plugins.disabled`` from settings: which plugins may load.

    Names match a plugin's name or its distribution's (``pi-todo`` covers all its plugins).
    Settings merge as usual: a project's list replaces the global one.
    """

    def __init__(self, enabled: Iterable[str] | None = None, disabled: Iterable[str] = ()) -> None:
        self.enabled = None if enabled is None else {_normalise(n) for n in enabled}
        self.disabled = {_normalise(n) for n in disabled}

    @classmethod
    def from_settings(cls, settings: Any, problems: list[str] | None = None) -> PluginPolicy:
        """The policy in ``settings``; a malformed list is ignored and described in ``problems``."""
        lists = {}
        for key in ("enabled", "disabled"):
            value = settings.get(f"plugins.{key}") if settings is not None else None
            if value is None:
                continue
            if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
                if problems is not None:
                    problems.append(f"settings plugins.{key} must be a list of plugin names; ignored")
                continue
            lists[key] = value
        return cls(lists.get("enabled"), lists.get("disabled", ()))

    def reason(self, name: str, distribution: str | None, builtin: bool) -> str | None:
        """Why the plugin must not load, or ``None`` when it may."""
        names = {_normalise(name)} | ({_normalise(distribution)} if distribution else set())
        if names & self.disabled:
            return "disabled (plugins.disabled)"
        if not builtin and self.enabled is not None and not names & self.enabled:
            return "not in plugins.enabled"
        return None

    def unmatched(self, known: Iterable[str]) -> list[str]:
        """Names in either list that match no known plugin or distribution (likely typos)."""
        known = {_normalise(k) for k in known}
        return sorted((self.disabled | (self.enabled or set())) - known)


class FoundEntryPoint:
    """A ``pi.plugins`` entry point (importlib.metadata's) with its distribution's name
    and version."""

    __slots__ = ("entry_point", "distribution", "version")

    def __init__(self, entry_point: Any, distribution: str, version: str | None) -> None:
        self.entry_point, self.distribution, self.version = entry_point, distribution, version

    @property
    def name(self) -> str:
        return self.entry_point.name

    @property
    def value(self) -> str:
        return self.entry_point.value

    def load(self) -> Any:
        return self.entry_point.load()


def _normalise(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def plugin_entry_points() -> tuple[list[FoundEntryPoint], list[FoundEntryPoint]]:
    """(built-in entry points in declared order, third-party ones in stable order)."""
    from importlib import metadata

    facts: dict[int, tuple[str, str | None]] = {}  # by distribution: METADATA parsed once

    def dist_facts(ep: metadata.EntryPoint) -> tuple[str, str | None]:
        dist = ep.dist
        if dist is None:
            return "", None
        known = facts.get(id(dist))
        if known is None:
            meta = dist.metadata
            known = facts[id(dist)] = (meta["Name"] or "", meta["Version"])
        return known

    builtin, others, seen = [], [], set()
    for ep in metadata.entry_points(group=GROUP):
        dist, version = dist_facts(ep)
        if (dist, ep.name) in seen:  # a distribution visible twice on sys.path
            continue
        seen.add((dist, ep.name))
        found = FoundEntryPoint(ep, dist, version)
        (builtin if _normalise(dist) == OWN_DISTRIBUTION else others).append(found)
    others.sort(key=lambda found: (_normalise(found.distribution), found.name))
    builtin.sort(key=lambda found: _builtin_position(found.name))
    return builtin, others


def _builtin_position(name: str) -> tuple[int, str]:
    from pi_core.app.builtins import LOAD_ORDER

    return (LOAD_ORDER.index(name) if name in LOAD_ORDER else len(LOAD_ORDER), name)


def _load_entry_point(plugins: Plugins, ep: FoundEntryPoint, source: str,
                      policy: PluginPolicy) -> None:
    name, version = ep.distribution, ep.version
    reason = policy.reason(ep.name, name, builtin=source == "builtin")
    if reason is not None:
        plugins.skipped.append(SkippedPlugin(
            ep.name, source, ep.value, reason, distribution=name or None, version=version))
        return
    try:
        plugin = ep.load()
        if isinstance(plugin, type):
            plugin = plugin()
    except Exception as exc:
        plugins.report(ep.name, "load", exc)
        return
    plugins.register(plugin, ep.name, source=source, location=ep.value,
                     distribution=name or None, version=version)


class _FreshSourceLoader(importlib.machinery.SourceFileLoader):
    """Compiles a plugin file from its source every time: a cached .pyc is trusted by
    whole-second mtime and size, so a file edited within the second it was last loaded
    (same size) would come back stale on ``/reload``."""

    def get_code(self, fullname):
        return self.source_to_code(self.get_data(self.path), self.path)


def load_file(plugins: Plugins, path: str | Path, source: str = "file") -> str | None:
    """Import a plugin from a ``.py`` file or a package directory and register it."""
    path = Path(path).expanduser().resolve()
    target = path / "__init__.py" if path.is_dir() else path
    import hashlib

    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    module_name = f"pi_extension_{path.stem.replace('-', '_')}_{digest}"
    try:
        if not target.is_file():
            raise FileNotFoundError(f"no plugin at {path}")
        spec = importlib.util.spec_from_file_location(
            module_name, target, loader=_FreshSourceLoader(module_name, str(target)),
            submodule_search_locations=[str(path)] if path.is_dir() else None,
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(module_name, None)
        plugins.report(path.stem, "load", exc)
        return None
    return plugins.register(module, path.stem, source=source, location=str(path))


def _plugin_files(folder: Path) -> list[Path]:
    """The plugins in an extensions folder: ``*.py`` files and package folders (with an
    ``__init__.py``), by name; names starting with ``_`` or ``.`` are left alone."""
    if not folder.is_dir():
        return []
    found = [p for p in folder.iterdir() if not p.name.startswith(("_", "."))
             and ((p.suffix == ".py" and p.is_file()) or (p.is_dir() and (p / "__init__.py").is_file()))]
    return sorted(found, key=lambda p: p.name)


def load_plugins(
    plugins: Plugins | None = None,
    *,
    cwd: str | Path = ".",
    agent_dir: str | Path | None = None,
    extension_paths: Iterable[str | Path] = (),
    builtins: bool = True,
    discover: bool = True,
    settings: Any = None,
) -> Plugins:
    """Load every plugin in load order into ``plugins`` (a new manager by default).

    ``settings`` (a :class:`pi_core.app.settings.Settings`, read from ``cwd`` and
    ``agent_dir`` when not given) decides which discovered plugins may load."""
    plugins = plugins or Plugins()
    home = Path(agent_dir) if agent_dir is not None else default_agent_dir()
    if settings is None:
        from pi_core.app.settings import Settings

        settings = Settings.load(cwd, home)
    problems: list[str] = []
    policy = PluginPolicy.from_settings(settings, problems)
    for problem in problems:
        plugins.report("settings", "plugins", ValueError(problem))
    builtin_eps, other_eps = plugin_entry_points()
    if builtins:
        from pi_core.app.builtins import LOAD_ORDER

        for ep in builtin_eps:
            if ep.name not in LOAD_ORDER:
                plugins.report(ep.name, "load", LookupError(
                    "a built-in entry point missing from pi_core.app.builtins.LOAD_ORDER; it loads last"))
            _load_entry_point(plugins, ep, "builtin", policy)
    seen: set[Path] = set()

    def load_once(path: Path, source: str) -> None:
        path = Path(path).expanduser().resolve()
        if path not in seen:  # the same file named twice (global and project settings, -e)
            seen.add(path)
            load_file(plugins, path, source=source)

    trusted = getattr(settings, "project_trusted", True) is True
    if discover:
        for ep in other_eps:
            _load_entry_point(plugins, ep, "entry point", policy)
        folders = (home / "extensions", project_dir(cwd) / "extensions")
        for folder in folders if trusted else folders[:1]:
            _load_folder(plugins, folder, policy, load_once)
        for path in settings.paths("extensions"):
            load_once(path, "settings")
    for path in extension_paths:
        load_once(path, "cli")
    plugins.loaded_paths = seen
    return plugins


def _load_folder(plugins: Plugins, folder: Path, policy: PluginPolicy, load_once) -> None:
    for path in _plugin_files(folder):
        reason = policy.reason(path.stem, None, builtin=False)
        if reason is None:
            load_once(path, "file")
        else:
            plugins.skipped.append(SkippedPlugin(path.stem, "file", str(path), reason))


def load_project_plugins(plugins: Plugins, *, cwd: str | Path, settings: Any,
                         discover: bool = True) -> None:
    """Once the project is trusted: its ``.pi/extensions`` and the project settings'
    ``extensions``, then the ``-e`` plugins again at the end, so the load order is what
    :func:`load_plugins` gives a trusted project (the ``-e`` modules are not imported
    again). The project settings' ``plugins.disabled`` / ``enabled`` leave out what
    they name, as they would have at start."""
    if not discover:
        return
    seen: set[Path] = getattr(plugins, "loaded_paths", set())
    policy = PluginPolicy.from_settings(settings)
    for info in plugins.infos:
        reason = policy.reason(info.name, info.distribution, builtin=info.source == "builtin")
        if reason is not None and info.source != "cli":
            plugins.unregister(info.name)
            plugins.skipped.append(SkippedPlugin(info.name, info.source, info.location, reason,
                                                 info.distribution, info.version))
    cli = [info for info in plugins.infos if info.source == "cli"]

    def load_once(path: Path, source: str) -> None:
        path = Path(path).expanduser().resolve()
        if path not in seen:
            seen.add(path)
            load_file(plugins, path, source=source)

    _load_folder(plugins, project_dir(cwd) / "extensions", policy, load_once)
    project = getattr(settings, "project_dir", None)
    for entry in (settings.project_data or {}).get("extensions", []) or []:
        if isinstance(entry, str):
            path = Path(entry).expanduser()
            load_once(path if path.is_absolute() or project is None else Path(project) / path, "settings")
    for info in cli:  # -e stays last in load order
        plugins.unregister(info.name)
        plugins.register(info.plugin, info.name, source=info.source, location=info.location,
                         distribution=info.distribution, version=info.version)
