"""Finding and loading plugins, in load order: the built-ins
(:data:`pi_core.app.builtins.BUILTINS`), installed ``pi.plugins`` entry points (by
distribution, then name), the extensions folders (the agent dir's, then the project's),
the settings' ``extensions`` lists, then ``-e`` paths. Settings (``plugins.enabled`` /
``disabled``, pi 1.6's ``±builtin:NAME``) choose what loads before anything is imported;
what they leave out is in ``plugins.skipped`` (docs/plugins.md, "Where plugins come from").

A project's files load only when it is trusted: :func:`load_plugins` with ``if_trusted``
imports only what the trusted settings would keep too, and :func:`load_project_plugins`
loads the rest once trust is decided, so a plugin the project disables is never imported."""

from __future__ import annotations

import gc
import importlib.machinery
import importlib.util
import os
import sys
import weakref
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs

from pi_core.paths import agent_dir as default_agent_dir
from pi_core.paths import project_dir
from pi_core.plugins import NotRunnable, Plugins
from pi_core.protocol.records import record
from pi_core.session.reader import gc_paused

GROUP = "pi.plugins"
OWN_DISTRIBUTION = "pi-harness"
#: How settings ``extensions`` and ``-e`` name a built-in plugin, as pi 1.6 does.
BUILTIN_PREFIX = "builtin:"


def _normalise(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def builtin_switch(entry: str) -> tuple[bool, str] | None:
    """``(on, name)`` for a settings ``extensions`` entry that switches a built-in
    (``-builtin:NAME``, ``+builtin:NAME``, or a plain ``builtin:NAME``); else ``None``."""
    sign, rest = (entry[0], entry[1:]) if entry[:1] in ("+", "-") else ("+", entry)
    if not rest.startswith(BUILTIN_PREFIX):
        return None
    return sign == "+", rest[len(BUILTIN_PREFIX):]


class PluginPolicy:
    """Which plugins may load: ``plugins.enabled`` / ``disabled`` and the ``±builtin:``
    switches. Names match a plugin's or its distribution's, whatever their case and
    spelling of ``-``, ``_`` and ``.``."""

    def __init__(self, enabled: Iterable[str] | None = None, disabled: Iterable[str] = (),
                 switched: dict[str, tuple[bool, str]] | None = None) -> None:
        self.enabled = None if enabled is None else {_normalise(n) for n in enabled}
        self.disabled = {_normalise(n) for n in disabled}
        #: Built-in name -> (loads, the entry that says so and where).
        self.switched = {_normalise(n): v for n, v in (switched or {}).items()}

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
        switched: dict[str, tuple[bool, str]] = {}
        for scope, data in (("user", getattr(settings, "global_data", None)),
                            ("project", getattr(settings, "project_data", None))):
            here: dict[str, tuple[bool, str]] = {}
            for entry in _entries(data):
                found = builtin_switch(entry)
                if found is None:
                    continue
                loads, name = found
                if here.get(_normalise(name), (True,))[0]:  # in one list, a drop wins
                    here[_normalise(name)] = (loads, f"{entry} in the {scope} settings")
            switched.update(here)  # the project's entries override the user's
        unknown = sorted(n for n in switched if n not in _builtin_names())
        if unknown and problems is not None:
            problems.append("settings extensions name no built-in plugin: "
                            + ", ".join(BUILTIN_PREFIX + n for n in unknown) + " (`pi plugins` lists them)")
        return cls(lists.get("enabled"), lists.get("disabled", ()), switched)

    def reason(self, name: str, distribution: str | None, builtin: bool) -> str | None:
        """Why the plugin must not load, or ``None`` when it may."""
        if builtin and _normalise(name) in self.switched:
            loads, why = self.switched[_normalise(name)]
            return None if loads else f"dropped ({why})"
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


def _entries(data: Any) -> list[str]:
    entries = data.get("extensions") if isinstance(data, dict) else None
    return [e for e in entries if isinstance(e, str)] if isinstance(entries, list) else []


def _builtin_names() -> set[str]:
    from pi_core.app.builtins import BUILTINS

    return {_normalise(n) for n in BUILTINS}


def plugin_entry_points() -> list[Found]:
    """The installed packages' ``pi.plugins`` entry points in stable order. The built-ins
    are not among them (:data:`pi_core.app.builtins.BUILTINS`; an install of pi-harness
    from before they were listed there still declares them, and they are left out)."""
    if not _declared_anywhere():
        return []
    from importlib import metadata

    from pi_core.app.builtins import BUILTINS

    found, seen = [], set()
    known: dict[Any, tuple[str, str | None]] = {None: ("", None)}  # METADATA parsed once a distribution
    for ep in metadata.entry_points(group=GROUP):
        if ep.dist is not None and ep.dist not in known:
            meta = ep.dist.metadata
            known[ep.dist] = (meta["Name"] or "", meta["Version"])
        dist, version = known[ep.dist]
        if (dist, ep.name) in seen:  # a distribution visible twice on sys.path
            continue
        if _normalise(dist) == OWN_DISTRIBUTION and ep.name in BUILTINS:
            continue  # an install from before the built-ins were listed in BUILTINS
        seen.add((dist, ep.name))
        found.append(Found(ep.name, "entry point", ep.value, None, dist or None, version, ep))
    found.sort(key=lambda f: (_normalise(f.distribution or ""), f.name))
    return found


def _declared_anywhere() -> bool:
    """Whether an installed distribution may declare a ``pi.plugins`` entry point, by a
    plain look at the ``entry_points.txt`` files importlib.metadata would read (most
    installs have none: its import and parse of them all are spared); unsure: True."""
    for finder in sys.meta_path:
        if getattr(finder, "find_distributions", None) is not None \
                and finder is not importlib.machinery.PathFinder:
            return True
    for root in sys.path:
        if not isinstance(root, str):
            return True
        try:
            names = os.listdir(root or ".")
        except OSError:
            if os.path.isfile(root):  # a zip file, which importlib.metadata reads too
                return True
            continue
        egg = root.endswith(".egg")
        for name in names:
            low = name.lower()
            if low.endswith((".dist-info", ".egg-info")) or (egg and low == "egg-info"):
                try:
                    with open(os.path.join(root, name, "entry_points.txt"), encoding="utf-8") as f:
                        if GROUP in f.read():
                            return True
                except (NotADirectoryError, FileNotFoundError):
                    continue
                except (OSError, ValueError):
                    return True
    return False


@record
class Found:
    """A plugin discovery found, in its place in the load order, before any import.
    ``reason`` says why settings leave it out (``None``: it loads); those left out are
    what ``plugins.skipped`` lists."""

    name: str
    source: str  # builtin, entry point, file, settings, cli
    location: str  # a module (built-ins, entry points) or a file's path
    reason: str | None = None
    distribution: str | None = None
    version: str | None = None
    entry_point: Any = None  # importlib.metadata's EntryPoint

    def load(self, plugins: Plugins) -> str | None:
        """Import and register it last in load order; the name it got, or ``None``."""
        if self.source in ("builtin", "entry point"):
            try:
                if self.entry_point is not None:
                    plugin = self.entry_point.load()
                else:  # a module, or ``module:attr`` (as an entry point names one)
                    module, _, attr = self.location.partition(":")
                    plugin = importlib.import_module(module)
                    plugin = getattr(plugin, attr) if attr else plugin
                if isinstance(plugin, type):
                    plugin = plugin()
            except Exception as exc:
                plugins.report(self.name, "load", exc)
                return None
            return plugins.register(plugin, self.name, source=self.source, location=self.location,
                                    distribution=self.distribution, version=self.version)
        return load_file(plugins, self.location, source=self.source)


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
        assert spec is not None and spec.loader is not None  # a loader was given
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(module_name, None)
        plugins.report(path.stem, "load", exc, path=str(path))
        return None
    return plugins.register(module, path.stem, source=source, location=str(path))


def _problem_path(problem: str) -> str:
    """The file a discovery problem names ("PATH: why", or "settings extensions: PATH: why"), or ""."""
    text = problem.removeprefix("settings extensions: ")
    head, sep, _ = text.partition(": ")
    return head if sep and head.startswith(("/", "~")) else ""


def _plugin_files(folder: Path) -> list[Path]:
    """The plugins in an extensions folder: ``*.py`` files and package folders (with an
    ``__init__.py``), by name; names starting with ``_`` or ``.`` are left alone."""
    if not folder.is_dir():
        return []
    found = [p for p in folder.iterdir() if not p.name.startswith(("_", "."))
             and ((p.suffix == ".py" and p.is_file()) or (p.is_dir() and (p / "__init__.py").is_file()))]
    return sorted(found, key=lambda p: p.name)


NODE_SUFFIXES = (".ts", ".js", ".mjs", ".cjs", ".mts", ".cts")
PACKAGE_PREFIXES = ("npm:", "git:", "github:", "http:", "https:", "ssh:")
CANNOT_RUN = "a TypeScript/JavaScript extension for pi (Node); it cannot run here"


def pi_package_source(entry: str) -> bool:
    """``-e``'s pi packages, which the packages plugin loads, not discovery: an ``npm:``,
    ``git:`` or URL source, or a folder with a ``package.json`` and no ``__init__.py``."""
    folder = Path(entry).expanduser()
    return entry.startswith(PACKAGE_PREFIXES) or (
        folder.is_dir() and (folder / "package.json").is_file() and not (folder / "__init__.py").exists())


def foreign_extension(entry: str | Path) -> str | None:
    """Why an extension path or source is pi's (TypeScript) and not a plugin, or ``None``."""
    text = str(entry)
    if text.startswith(PACKAGE_PREFIXES):
        return ("a pi package: its extensions are TypeScript for pi (Node) and cannot run "
                f"here; `pi install {text}` keeps its skills, prompt templates and themes")
    if text.endswith(NODE_SUFFIXES):
        return CANNOT_RUN
    return None


def _node_files(folder: Path) -> list[Path]:
    """pi's extensions in an extensions folder (``*.ts``/``*.js``, folders with an
    ``index.ts``/``index.js`` and no ``__init__.py``): named, never run."""
    if not folder.is_dir():
        return []
    found = [p for p in folder.iterdir() if not p.name.startswith(("_", "."))
             and ((p.suffix in NODE_SUFFIXES and p.is_file())
                  or (p.is_dir() and not (p / "__init__.py").exists()
                      and ((p / "index.ts").is_file() or (p / "index.js").is_file())))]
    return sorted(found, key=lambda p: p.name)


def _scope_entries(settings: Any, scope: str) -> tuple[list[str], Path | None]:
    """A scope's ``extensions`` entries about files (not the built-in switches) and the
    folder they are read from (its settings file's)."""
    prefix = "project" if scope == "project" else "global"
    base = getattr(settings, f"{prefix}_dir", None)
    entries = [e for e in _entries(getattr(settings, f"{prefix}_data", None)) if builtin_switch(e) is None]
    return entries, Path(base) if base is not None else None


def _left_out(scope: str) -> str:
    return f"left out by a pattern in the {scope} settings' extensions"


def _listed_paths(settings: Any, problems: list[str]) -> list[tuple[Path, str | None]]:
    """The plugin paths of the settings' ``extensions`` lists (user, then project), each
    resolved against its own file's folder (a folder that is no package gives its plugin
    files), with why a pattern leaves one out (``None``: it loads). pi's patterns: a glob
    keeps what it matches among those paths, ``!glob`` leaves out, ``+path`` puts back,
    ``-path`` takes out (:mod:`pi_core.app.resource_patterns`)."""
    from pi_core.app.resource_patterns import apply_patterns, is_pattern

    found: list[tuple[Path, str | None]] = []
    for scope in ("user", "project"):
        entries, base = _scope_entries(settings, scope)
        files: list[Path] = []
        for entry in (e for e in entries if not is_pattern(e)):
            path = Path(entry).expanduser()
            path = path if path.is_absolute() or base is None else base / path
            why = foreign_extension(entry)
            if why is not None:
                problems.append(f"settings extensions: {path}: {why}")
            elif path.is_dir() and not (path / "__init__.py").exists():
                files += _plugin_files(path)
                problems += [f"{p}: {CANNOT_RUN}" for p in _node_files(path)]
            else:
                files.append(path)
        patterns = [e for e in entries if is_pattern(e)]
        kept = apply_patterns(files, patterns, base or Path.cwd()) if patterns else set(files)
        found += [(p, None if p in kept else _left_out(scope)) for p in files]
    return found


def _folder_reason(path: Path, settings: Any, scope: str, root: Path) -> str | None:
    """Why the scope's ``!``, ``+`` and ``-`` entries leave out a plugin its extensions
    folder holds, as pi 1.6 applies them to what it finds by itself."""
    from pi_core.app.resource_patterns import is_override, kept_by_overrides

    overrides = [e for e in _scope_entries(settings, scope)[0] if is_override(e)]
    return None if not overrides or kept_by_overrides(path, overrides, root) else _left_out(scope)


class PluginLoader:
    """The plugins of one start: found in load order and imported; loaded again with
    other settings (trust decided), it imports only what is new, drops what they leave
    out, and keeps the order."""

    def __init__(self, plugins: Plugins, *, cwd: str | Path, agent_dir: Path,
                 extension_paths: Iterable[str | Path], builtins: bool, discover: bool) -> None:
        self.plugins, self.cwd, self.agent_dir = plugins, cwd, agent_dir
        self.extension_paths = [str(p) for p in extension_paths]
        self.builtins, self.discover = builtins, discover
        self._entry_points: list[Found] | None = None
        self._loaded: dict[str, str] = {}  # Found.location -> registered name
        self._tried: set[str] = set()  # imported or failed to: never again
        self._skipped: list[Found] = []
        self._told: set[str] = set()

    def find(self, settings: Any, problems: list[str]) -> list[Found]:
        """Every plugin these settings would see, in load order, each with its reason
        to be left out (``None``: it loads); nothing is imported."""
        from pi_core import __version__
        from pi_core.app.builtins import BUILTINS

        policy = PluginPolicy.from_settings(settings, problems)
        switches = {p: builtin_switch(p) for p in self.extension_paths}
        named = {_normalise(s[1]): p for p, s in switches.items() if s is not None}
        explicit = {_normalise(s[1]) for s in switches.values() if s is not None and s[0]}
        for entry, switch in switches.items():  # -e -builtin:NAME: the settings entry, for this run
            if switch is not None and not switch[0]:
                explicit.discard(_normalise(switch[1]))
                policy.switched[_normalise(switch[1])] = (False, f"-e {entry}")
        for name in sorted(set(named) - _builtin_names()):
            problems.append(f"-e {named[name]}: no built-in plugin has that name (`pi plugins` lists them)")
        found: list[Found] = []
        for name, module in BUILTINS.items():
            asked = _normalise(name) in explicit
            if self.builtins or asked:
                reason = None if asked else policy.reason(name, OWN_DISTRIBUTION, builtin=True)
                found.append(Found(name, "builtin", module, reason, OWN_DISTRIBUTION, __version__))
        if self.discover:
            if self._entry_points is None:
                self._entry_points = plugin_entry_points()
            found += [attrs.evolve(ep, reason=policy.reason(ep.name, ep.distribution, False))
                      for ep in self._entry_points]
            trusted = getattr(settings, "project_trusted", True) is True
            roots = (("user", self.agent_dir), ("project", project_dir(self.cwd)))
            for scope, root in roots if trusted else roots[:1]:
                folder = root / "extensions"
                found += [Found(p.stem, "file", str(p), policy.reason(p.stem, None, False)
                                or _folder_reason(p, settings, scope, root)) for p in _plugin_files(folder)]
                problems += [f"{p}: {CANNOT_RUN}" for p in _node_files(folder)]
            found += [Found(p.stem, "settings", str(p), why) for p, why in _listed_paths(settings, problems)]
        for p in self.extension_paths:
            if pi_package_source(p):  # the settings carry it to its plugin
                continue
            why = foreign_extension(p)
            if why is not None:
                problems.append(f"-e {p}: {why}")
            elif switches[p] is None:
                found.append(Found(Path(p).stem, "cli", p))
        return _once(found)

    def load(self, settings: Any, *, if_trusted: Any = None) -> Plugins:
        """Load what ``settings`` keep; with ``if_trusted`` (the settings the project's
        trust would give), only what both keep: the rest waits for the next load."""
        plugins, problems = self.plugins, list[str]()
        found = self.find(settings, problems)
        if if_trusted is not None:
            also = {f.location for f in self.find(if_trusted, []) if f.reason is None}
            found = [f for f in found if f.reason is not None or f.location in also]
        for problem in dict.fromkeys(problems):
            if problem not in self._told:
                self._told.add(problem)
                error = NotRunnable(problem) if "cannot run here" in problem else ValueError(problem)
                plugins.report("settings", "plugins", error, path=_problem_path(problem))
        for skip in self._skipped:
            plugins.skipped.remove(skip)
        self._skipped = [f for f in found if f.reason is not None]
        plugins.skipped += self._skipped
        for f in found:
            name = self._loaded.get(f.location)
            if f.reason is not None and name is not None:  # loaded before these settings applied
                plugins.unregister(name)
                del self._loaded[f.location]
                self._tried.discard(f.location)
            elif f.reason is None and f.location not in self._tried:
                self._tried.add(f.location)
                name = f.load(plugins)
                if name is not None:
                    self._loaded[f.location] = name
        self._reorder([self._loaded[f.location] for f in found if f.location in self._loaded])
        return plugins

    def _reorder(self, ours: list[str]) -> None:
        """Our plugins in load order; a plugin registered by someone else stays right
        after the plugin it followed."""
        place = {name: i for i, name in enumerate(ours)}
        keys, last = {}, -1.0
        for info in self.plugins.infos:
            last = place.get(info.name, last + 1e-6)
            keys[info.name] = last
        order = sorted(keys, key=keys.__getitem__)
        if order != [info.name for info in self.plugins.infos]:
            self.plugins.reorder(order)


def _once(found: list[Found]) -> list[Found]:
    """The same file named twice (global and project settings, ``-e``) loads once, at its
    first place; paths compare resolved."""
    seen, kept = set(), []
    for f in found:
        if f.source not in ("builtin", "entry point"):
            f.location = str(Path(f.location).expanduser().resolve())
        if f.location not in seen:
            seen.add(f.location)
            kept.append(f)
    return kept


#: Each manager's loader, so that :func:`load_project_plugins` can finish what it began.
_LOADERS: weakref.WeakKeyDictionary[Plugins, PluginLoader] = weakref.WeakKeyDictionary()


def load_plugins(
    plugins: Plugins | None = None,
    *,
    cwd: str | Path = ".",
    agent_dir: str | Path | None = None,
    extension_paths: Iterable[str | Path] = (),
    builtins: bool = True,
    discover: bool = True,
    settings: Any = None,
    if_trusted: Any = None,
) -> Plugins:
    """Load every plugin in load order into ``plugins`` (a new manager by default), as
    ``settings`` (read when not given) allow. Before trust is decided, pass the untrusted
    settings and, as ``if_trusted``, the trusted ones (see the module docstring)."""
    plugins = plugins or Plugins()
    home = Path(agent_dir) if agent_dir is not None else default_agent_dir()
    if settings is None:
        from pi_core.app.settings import Settings

        settings = Settings.load(cwd, home)
    loader = PluginLoader(plugins, cwd=cwd, agent_dir=home, extension_paths=extension_paths,
                          builtins=builtins, discover=discover)
    _LOADERS[plugins] = loader
    return _importing(loader, settings, if_trusted)


def load_project_plugins(plugins: Plugins, *, settings: Any) -> None:
    """Once trust is decided: :func:`load_plugins`'s plugins under ``settings``, in the
    order a single load would give; nothing is imported twice; no collection meanwhile."""
    _importing(_LOADERS[plugins], settings, None)


def _importing(loader: PluginLoader, settings: Any, if_trusted: Any) -> Plugins:
    """A load with no collection meanwhile; what its imports made lives as long as the
    process, and is frozen (``gc.freeze``): no later collection walks it again."""
    imported = len(sys.modules)
    with gc_paused():
        loaded = loader.load(settings, if_trusted=if_trusted)
        if len(sys.modules) > imported:
            gc.freeze()
        return loaded
