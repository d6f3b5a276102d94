"""Finding and loading plugins, in load order.

1. built-ins: the ``pi.plugins`` entry points of pi-harness itself, in the order
   ``pi_plugins.LOAD_ORDER`` declares (installed metadata sorts them by name);
2. installed packages' ``pi.plugins`` entry points, by distribution name, then entry-point
   name, so the order is stable from run to run;
3. single-file plugins: ``<agent dir>/extensions/*.py``, then ``<cwd>/.pi/extensions/*.py``;
4. ``-e PATH`` from the command line (a ``.py`` file or a package directory).

``discover=False`` (the CLI's ``--no-extensions``) skips 2 and 3; explicit paths still load.
A plugin that fails to import is reported and skipped.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from importlib import metadata
from pathlib import Path
from typing import Iterable

from pi_core.paths import agent_dir as default_agent_dir
from pi_core.paths import project_dir
from pi_core.plugins import Plugins

GROUP = "pi.plugins"
OWN_DISTRIBUTION = "pi-harness"


def _dist_name(ep: metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return dist.metadata["Name"] if dist is not None else ""


def _normalise(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _entry_points() -> tuple[list[metadata.EntryPoint], list[metadata.EntryPoint]]:
    """(built-in entry points in declared order, third-party ones in stable order)."""
    builtin, others, seen = [], [], set()
    for ep in metadata.entry_points(group=GROUP):
        dist = _dist_name(ep)
        if (dist, ep.name) in seen:  # a distribution visible twice on sys.path
            continue
        seen.add((dist, ep.name))
        (builtin if _normalise(dist) == OWN_DISTRIBUTION else others).append(ep)
    others.sort(key=lambda ep: (_normalise(_dist_name(ep)), ep.name))
    return sorted(builtin, key=_builtin_position), others


def _builtin_position(ep: metadata.EntryPoint) -> tuple[int, str]:
    try:
        from pi_plugins import LOAD_ORDER
    except ImportError:
        LOAD_ORDER = ()
    return (LOAD_ORDER.index(ep.name) if ep.name in LOAD_ORDER else len(LOAD_ORDER), ep.name)


def _load_entry_point(plugins: Plugins, ep: metadata.EntryPoint, source: str) -> None:
    dist = getattr(ep, "dist", None)
    try:
        plugin = ep.load()
        if isinstance(plugin, type):
            plugin = plugin()
    except Exception as exc:
        plugins.report(ep.name, "load", exc)
        return
    plugins.register(
        plugin, ep.name, source=source, location=ep.value,
        distribution=dist.metadata["Name"] if dist else None,
        version=dist.version if dist else None,
    )


def load_file(plugins: Plugins, path: str | Path, source: str = "file") -> str | None:
    """Import a plugin from a ``.py`` file or a package directory and register it."""
    path = Path(path).expanduser().resolve()
    target = path / "__init__.py" if path.is_dir() else path
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    module_name = f"pi_extension_{path.stem.replace('-', '_')}_{digest}"
    try:
        if not target.is_file():
            raise FileNotFoundError(f"no plugin at {path}")
        spec = importlib.util.spec_from_file_location(
            module_name, target,
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
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.py") if not p.name.startswith("_"))


def load_plugins(
    plugins: Plugins | None = None,
    *,
    cwd: str | Path = ".",
    agent_dir: str | Path | None = None,
    extension_paths: Iterable[str | Path] = (),
    builtins: bool = True,
    discover: bool = True,
) -> Plugins:
    """Load every plugin in load order into ``plugins`` (a new manager by default)."""
    plugins = plugins or Plugins()
    builtin_eps, other_eps = _entry_points()
    if builtins:
        for ep in builtin_eps:
            _load_entry_point(plugins, ep, "builtin")
    if discover:
        for ep in other_eps:
            _load_entry_point(plugins, ep, "entry point")
        home = Path(agent_dir) if agent_dir is not None else default_agent_dir()
        for folder in (home / "extensions", project_dir(cwd) / "extensions"):
            for path in _plugin_files(folder):
                load_file(plugins, path)
    for path in extension_paths:
        load_file(plugins, path, source="cli")
    return plugins
