"""What the resource plugins (context files, skills, prompt templates, system prompt) share:
problems and how they are reported, a per-run cache of what was found on disk, the
extra paths other plugins offer through ``resources_discover``, and the ``skills`` /
``prompts`` entries of settings.json.

Discovery reads the disk once per run: each loader is memoised per ``ctx`` (one harness
run) and stamped with the cwd and agent dir it was made for. :func:`reload` forgets it
all, for pi's ``/reload``; the next use scans again and asks ``resources_discover``
again with reason ``reload``.
"""

from __future__ import annotations

import os
import re
import sys
import weakref
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any, Literal

from pi_core.protocol.records import record

RESOURCE_KINDS = ("skill", "prompt")
SKILL_COMMAND_PREFIX = "/skill:"


@record(frozen=True)
class Problem:
    """Something wrong with a resource file; it was skipped or loaded with a warning."""

    path: str
    message: str
    kind: str = "warning"  # warning (loaded anyway or skipped), collision, error
    #: A collision's name and the file that kept it (the chat groups collisions by name, as pi).
    name: str | None = None
    winner: str | None = None

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def report(ctx: Any, what: str, problems: Iterable[Problem]) -> None:
    """Tell the user about each problem, once, through the UI (the log where there is none)."""
    ui = getattr(ctx, "ui", None)
    if ui is None:
        return
    for problem in problems:
        ui.notify(f"{what}: {problem}", "warning")


# ---------------------------------------------------------------- per-run cache

_caches: list[PerRun] = []
_reloaded: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()


class PerRun:
    """An async loader of ``ctx`` memoised per ctx, for as long as the ctx lives and
    its cwd and agent dir stay the same."""

    def __init__(self, loader: Callable[[Any], Awaitable[Any]]):
        self.loader = loader
        self._memo: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.__doc__ = loader.__doc__
        _caches.append(self)

    async def __call__(self, ctx: Any) -> Any:
        stamp = (str(ctx.cwd), str(ctx.agent_dir))
        hit = self._memo.get(ctx)
        if hit is not None and hit[0] == stamp:
            return hit[1]
        value = await self.loader(ctx)
        self._memo[ctx] = (stamp, value)
        return value

    def forget(self, ctx: Any) -> None:
        self._memo.pop(ctx, None)


def per_run(loader: Callable[[Any], Awaitable[Any]]) -> PerRun:
    return PerRun(loader)


def reload(ctx: Any) -> None:
    """Forget what every resource plugin found for this run; the next use looks again."""
    for cache in _caches:
        cache.forget(ctx)
    _reloaded[ctx] = True


_last_start: list = [None]  # the session_start event last handled (events are unhashable)


async def on_session_start(event: Any, ctx: Any) -> None:
    """Every resource plugin's ``session_start``: on ``reload`` forget what was found
    (once per event, whichever resource plugin sees it first); then ask
    ``resources_discover`` now, at start-up, as documented (not on the first prompt)."""
    if _last_start[0] is event:
        return
    _last_start[0] = event
    if getattr(event, "reason", None) == "reload":
        reload(ctx)
    await discovered_paths(ctx)


# ---------------------------------------------------------------- commands


def split_command(text: str, prefix: str) -> tuple[str, str] | None:
    """``(name, arguments)`` of ``prefix + name [arguments]``, or ``None``."""
    if not text.startswith(prefix):
        return None
    rest = text[len(prefix):]
    parts = re.split(r"\s", rest, maxsplit=1)
    return parts[0], parts[1] if len(parts) > 1 else ""


# ---------------------------------------------------------------- paths


def cwd_of(ctx: Any) -> Path:
    """The run's working directory as an absolute path (symlinks left as they are)."""
    return Path(os.path.abspath(os.path.expanduser(str(ctx.cwd))))


def agent_dir_of(ctx: Any) -> Path:
    return Path(os.path.abspath(os.path.expanduser(str(ctx.agent_dir))))


def project_trusted(ctx: Any) -> bool:
    """Whether this run may load the project's protected resources (``.pi/skills``,
    ``.pi/prompts``, ``.pi/SYSTEM.md``…, project ``.agents/skills``): the run's project
    trust decision (:func:`pi_core.app.settings.project_allowed`)."""
    from pi_core.app.settings import project_allowed

    return project_allowed(getattr(ctx, "settings", None), cwd_of(ctx), agent_dir_of(ctx))


def resolve_path(entry: str | os.PathLike, base: Path) -> Path:
    """``~`` expanded; a relative path taken from ``base``."""
    path = Path(os.path.expanduser(str(entry).strip()))
    return path if path.is_absolute() else Path(os.path.abspath(base / path))


def same_file_key(path: Path) -> tuple[int, int] | str:
    """What identifies a file or folder however it is reached (symlinks, other spellings):
    its device and inode, one ``stat`` call."""
    try:
        st = os.stat(path)
    except OSError:
        return str(path)
    return (st.st_dev, st.st_ino)


@per_run
async def discovered_paths(ctx: Any) -> dict[str, list[Path]]:
    """Extra resource paths from the ``resources_discover`` hook, by kind (skill, prompt).

    Handlers return ``(kind, path)`` pairs; relative paths are taken from the cwd.
    A malformed pair is reported and skipped.
    """
    found: dict[str, list[Path]] = {kind: [] for kind in RESOURCE_KINDS}
    plugins = getattr(ctx, "plugins", None)
    if plugins is None or not plugins.has("resources_discover"):
        return found
    from pi_core.protocol.events import ResourcesDiscoverEvent

    reason: Literal["startup", "reload"] = "reload" if _reloaded.get(ctx) else "startup"
    event = ResourcesDiscoverEvent(cwd=str(ctx.cwd), reason=reason)
    items = await plugins.call("resources_discover", event=event, ctx=ctx)
    problems = []
    for item in items:
        try:
            kind, path = item
            if kind not in RESOURCE_KINDS:
                raise ValueError(f"kind must be one of {', '.join(RESOURCE_KINDS)}, not {kind!r}")
            found[kind].append(resolve_path(path, cwd_of(ctx)))
        except (TypeError, ValueError) as exc:
            problems.append(Problem("resources_discover", f"ignored {item!r}: {exc}"))
    report(ctx, "resources", problems)
    return found


def settings_entries(ctx: Any, key: str, scope: str) -> tuple[list[Path], list[Problem]]:
    """The paths a settings.json lists under ``key`` (``skills``, ``prompts``), for
    ``scope`` project (``.pi/settings.json``) or user (the agent dir's), each taken from
    the folder of the file that names it."""
    settings = getattr(ctx, "settings", None)
    prefix = "project" if scope == "project" else "global"
    if not hasattr(settings, f"{prefix}_data"):  # no settings files (a harness composed bare)
        return [], []
    if scope == "project" and not project_trusted(ctx):
        return [], []
    data, base = getattr(settings, f"{prefix}_data"), getattr(settings, f"{prefix}_dir")
    entries = data.get(key) or []
    where = f"{Path(base or '.') / 'settings.json'}"
    if not isinstance(entries, list):
        return [], [Problem(where, f"{key!r} must be a list of paths; it is ignored")]
    paths, problems = [], []
    for entry in entries:
        if not isinstance(entry, str) or not entry.strip():
            problems.append(Problem(where, f"{key}: {entry!r} is not a path; ignored"))
        elif not _is_pattern(entry):  # patterns filter: settings_filter
            paths.append(resolve_path(entry, Path(base) if base else cwd_of(ctx)))
    return paths, problems


def _is_pattern(entry: str) -> bool:
    return entry[:1] in ("!", "+", "-") or "*" in entry or "?" in entry


@record
class ResourceFilter:
    """A settings resource list's patterns (pi's, for ``skills``, ``prompts``, ``themes``):
    globs choose among the files its paths name, ``!glob`` excludes, ``+path`` puts an
    exact path back, ``-path`` takes one out (last word); matched against the path from
    the settings file's folder (``root``), the name, or the absolute path, a ``SKILL.md``
    by its folder too. The ``!``/``+``/``-`` entries also apply to what the same scope
    finds by itself (its ``skills/``, ``prompts/`` folders)."""

    root: Path
    includes: list[str]
    excludes: list[str]
    forced: list[str]
    removed: list[str]

    def listed(self, path: Path) -> bool:
        """Whether a file a listed path gave is loaded."""
        return self._keeps(path, self.includes)

    def discovered(self, path: Path, root: Path | None = None) -> bool:
        """Whether a file the scope found by itself is loaded (``root``: its base folder
        when not the settings file's, as a ``.agents`` folder)."""
        return self._keeps(path, [], root)

    def _keeps(self, path: Path, includes: list[str], root: Path | None = None) -> bool:
        from pi_plugins.packages.collect import matches_exact, matches_glob

        base = root or self.root
        kept = (not includes or matches_glob(path, includes, base)) and \
            not (self.excludes and matches_glob(path, self.excludes, base))
        if not kept and self.forced and matches_exact(path, self.forced, base):
            kept = True
        return kept and not (self.removed and matches_exact(path, self.removed, base))


def settings_filter(ctx: Any, key: str, scope: str) -> ResourceFilter | None:
    """The patterns of a scope's settings list ``key``, or None where it has none."""
    settings = getattr(ctx, "settings", None)
    prefix = "project" if scope == "project" else "global"
    data = getattr(settings, f"{prefix}_data", None)
    entries = data.get(key) if isinstance(data, dict) else None
    patterns = [e for e in entries if isinstance(e, str) and e.strip() and _is_pattern(e)] \
        if isinstance(entries, list) else []
    if not patterns:
        return None
    base = getattr(settings, f"{prefix}_dir", None)
    return ResourceFilter(
        root=Path(base) if base else cwd_of(ctx),
        includes=[p for p in patterns if p[:1] not in ("!", "+", "-")],
        excludes=[p[1:] for p in patterns if p.startswith("!")],
        forced=[p[1:] for p in patterns if p.startswith("+")],
        removed=[p[1:] for p in patterns if p.startswith("-")])


def visible_entries(folder: Path) -> list[os.DirEntry]:
    """A folder's entries in name order, without hidden ones and ``node_modules``;
    an unreadable folder has none."""
    try:
        with os.scandir(folder) as it:
            entries = [e for e in it if not e.name.startswith(".") and e.name != "node_modules"]
    except OSError:
        return []
    return sorted(entries, key=lambda e: e.name)


def is_dir(entry: os.DirEntry | Path) -> bool:
    try:
        return entry.is_dir()  # follows symlinks; a broken link is neither
    except OSError:
        return False


def is_file(entry: os.DirEntry | Path) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False


class Gatherer:
    """Collects resources of one kind (skills, prompt templates) in precedence order: the
    same file met twice is skipped quietly; a second resource of a taken name is reported
    as a collision and ignored, so the first one wins, as in pi.

    ``read(path, source)`` gives ``(resource or None, problems)``; ``list_files(folder,
    option)`` the candidate files of a folder; ``result`` has ``by_name`` and ``problems``
    and ``items`` is the list to fill; ``shown`` spells a name in messages, which call a
    name ``noun`` (``kind`` by default)."""

    def __init__(self, kind: str, read: Callable, list_files: Callable, result: Any,
                 items: list, shown: Callable[[str], str] = str, noun: str | None = None) -> None:
        self.kind, self.read, self.list_files, self.shown = kind, read, list_files, shown
        self.noun = noun or kind
        self.result, self.items = result, items
        self._files: set = set()

    def add_file(self, path: Path, source: str, keep: Callable[[Path], bool] | None = None) -> None:
        if keep is not None and not keep(path):  # a settings pattern leaves it out
            return
        key = same_file_key(path)
        if key in self._files:
            return
        self._files.add(key)
        item, problems = self.read(path, source)
        self.result.problems += problems
        if item is None:
            return
        winner = self.result.by_name.get(item.name)
        if winner is not None:
            self.result.problems.append(Problem(
                str(path), f'{self.noun} name "{self.shown(item.name)}" is taken by {winner.path}; '
                "this one is ignored", "collision", self.shown(item.name), str(winner.path)))
            return
        self.result.by_name[item.name] = item
        self.items.append(item)

    def add_folder(self, folder: Path, source: str, option: bool,
                   keep: Callable[[Path], bool] | None = None) -> None:
        for path in self.list_files(folder, option):
            self.add_file(path, source, keep)

    def add_path(self, path: Path, source: str, option: bool, keep: Callable[[Path], bool] | None = None) -> None:
        """An explicitly named file or folder (settings, the command line, a plugin)."""
        if is_dir(path):
            self.add_folder(path, source, option, keep)
        elif is_file(path) and path.suffix == ".md":
            self.add_file(path, source, keep)
        elif path.exists():
            self.result.problems.append(Problem(str(path), f"a {self.kind} path must be a folder or a .md file", "error"))
        else:
            self.result.problems.append(Problem(str(path), f"{self.kind} path does not exist", "error"))


def source_info(path: Path | str, source: str, ctx: Any, base_dir: Path | str | None = None) -> dict:
    """pi's ``sourceInfo`` of a resource (RPC ``get_commands``): its file, how it was found
    (``auto`` discovery, ``local`` from a command-line or settings path), its scope
    (project, user, temporary) and the folder its scope starts from."""
    cwd = Path(getattr(ctx, "cwd", ".") or ".")
    home = getattr(ctx, "agent_dir", None)
    info: dict[str, Any] = {"path": str(path)}
    if source == "project":
        info.update(source="auto", scope="project", origin="top-level", baseDir=str(cwd / ".pi"))
    elif source == "user":
        info.update(source="auto", scope="user", origin="top-level")
        if home is not None:
            info["baseDir"] = str(home)
    elif source == "cli":
        info.update(source="local", scope="temporary", origin="top-level",
                    baseDir=str(base_dir if base_dir is not None else Path(path).parent))
    elif source == "settings":
        info.update(source="local", scope="user", origin="top-level",
                    baseDir=str(base_dir if base_dir is not None else Path(path).parent))
    elif source == "package":
        info.update(source="package", scope="user", origin="package",
                    baseDir=str(base_dir if base_dir is not None else Path(path).parent))
    else:  # from a plugin's resources_discover
        info.update(source="extension", scope="temporary", origin="package")
    return info


def _packages_loaded(ctx: Any) -> bool:
    """The ``packages`` built-in is among the plugins (whatever name it was given)."""
    module = sys.modules.get("pi_plugins.packages")
    return module is not None and any(info.plugin is module for info in ctx.plugins.infos)


@per_run
async def package_resources(ctx: Any) -> Any:
    """The resources of the pi packages settings.json configures (``packages``; the
    project's once it is trusted), found once per run; what is wrong is reported then
    (:mod:`pi_plugins.packages.configured`). None when the settings name no package, when
    the ``packages`` built-in is dropped (``-builtin:packages``: pi packages are off), or
    without settings files (a harness composed bare)."""
    from pi_plugins.packages.listed import lists_packages

    settings = getattr(ctx, "settings", None)
    if not hasattr(settings, "global_data") or not lists_packages(settings) or not _packages_loaded(ctx):
        return None
    from pi_plugins.packages.configured import load
    found = load(settings, agent_dir_of(ctx), cwd_of(ctx), project_trusted(ctx))
    report(ctx, "packages", [Problem("settings.json", p) for p in found.problems])
    return found
