"""The user's and the project's own resource folders as ``pi config`` lists them (pi
1.6's resource screen): a group per folder the resources were found in by themselves,
``User (<agent dir>/)``, ``User (~/.agents/)``, ``Project (<project>/.pi/)``,
``Project (<folder>/.agents/)``, and a ``User settings`` / ``Project settings`` group for
the paths settings.json lists. Each file is ``[x]``, or ``[ ]`` where a settings pattern
(``-skills/NAME/SKILL.md``, ``!glob``) leaves it out, as the loaders decide."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from attrs import define, field

KINDS = ("skills", "prompts", "themes")


@define(frozen=True)
class OwnItem:
    """One file of a group: its name on the screen, whether it loads, the file (a skill's
    ``SKILL.md``) and the folder a pattern names it from (pi's ``baseDir``)."""

    name: str
    enabled: bool
    path: Path
    base: Path


@define
class OwnGroup:
    """One group of the screen: its scope (user, project), where it came from (``auto``:
    a folder found by itself; ``settings``: the paths settings.json lists) and its files
    by kind."""

    scope: str
    source: str
    label: str
    items: dict[str, list[OwnItem]] = field(factory=dict)


def shown_dir(folder: Path) -> str:
    """A folder as pi shows it: the home as ``~``, with a trailing slash."""
    text, home = str(folder), str(Path.home())
    if text == home or text.startswith(home + os.sep):
        text = "~" + text[len(home):]
    return text.replace("\\", "/").rstrip("/") + "/"


def _skill_name(path: Path) -> str:
    return path.parent.name if path.name == "SKILL.md" else path.name


def _theme_files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.glob("*.json") if p.is_file() and not p.name.startswith("."))
    return [path] if path.is_file() and path.suffix == ".json" else []


def _files(kind: str, path: Path, listed: bool) -> list[Path]:
    """The ``kind`` files of a folder found by itself, or (``listed``) of a settings path."""
    from pi_plugins.prompt_templates import template_files
    from pi_plugins.skills import skill_files

    if kind == "themes":
        return _theme_files(path)
    if path.is_file():
        return [path] if listed and path.suffix == ".md" else []
    return skill_files(path, True) if kind == "skills" else template_files(path, listed)


class _Groups:
    """The groups in the order pi meets them (kind by kind, each in load order), the same
    file only once."""

    def __init__(self) -> None:
        self.groups: dict[tuple[str, str, str], OwnGroup] = {}
        self._seen: set[Path] = set()

    def add(self, scope: str, source: str, label: str, kind: str, paths: list[Path],
            keep: Callable[[Path], bool] | None, base: Path) -> None:
        for path in paths:
            real = Path(os.path.realpath(path))
            if real in self._seen:
                continue
            self._seen.add(real)
            group = self.groups.setdefault((scope, source, label), OwnGroup(scope, source, label))
            name = _skill_name(path) if kind == "skills" else path.name
            group.items.setdefault(kind, []).append(OwnItem(name, keep is None or keep(path), path, base))


#: Which group a file met twice is shown in, as pi 1.6 resolves them: the paths the
#: project's settings list, the user's, then the folders found by themselves (project's first).
_PRIORITY = {("project", "settings"): 0, ("user", "settings"): 1, ("project", "auto"): 2, ("user", "auto"): 3}


def own_groups(settings: Any, agent_dir: Path, cwd: Path, project: bool) -> list[OwnGroup]:
    """The user's own resources, and with ``project`` the project's, as pi 1.6 groups
    them: user before project, folders found by themselves before settings paths."""
    from pi_plugins.resources import settings_entries, settings_filter
    from pi_plugins.skills import agents_skill_dirs

    run = SimpleNamespace(settings=settings, cwd=str(cwd), agent_dir=agent_dir)
    found = _Groups()
    user_agents = Path.home() / ".agents" / "skills"
    for kind in KINDS:
        scopes = [("user", agent_dir, f"User ({shown_dir(agent_dir)})")]
        if project:
            scopes.append(("project", cwd / ".pi", f"Project ({shown_dir(cwd / '.pi')})"))
        met: list[tuple] = []  # (scope, source, label, files, keep, base), then added by pi's priority
        for scope, base, label in scopes:
            patterns = settings_filter(run, kind, scope)
            met.append((scope, "auto", label, _files(kind, base / kind, False),
                        patterns.discovered if patterns else None, base))
            if kind == "skills":  # the .agents skill folders
                folders = [user_agents] if scope == "user" else \
                    [f for f in agents_skill_dirs(cwd) if f != user_agents]
                for folder in folders:
                    keep = None if scope == "user" or patterns is None else \
                        (lambda path, p=patterns, root=folder.parent: p.discovered(path, root))
                    title = "User" if scope == "user" else "Project"
                    met.append((scope, "auto", f"{title} ({shown_dir(folder.parent)})",
                                _files(kind, folder, False), keep, folder.parent))
            paths, _ = settings_entries(run, kind, scope)
            title = "User settings" if scope == "user" else "Project settings"
            for path in paths:
                met.append((scope, "settings", title, _files(kind, path, True),
                            patterns.listed if patterns else None, base))
        for scope, source, label, files, keep, base in sorted(met, key=lambda m: _PRIORITY[(m[0], m[1])]):
            found.add(scope, source, label, kind, files, keep, base)
    order = {("user", "auto"): 0, ("user", "settings"): 1, ("project", "auto"): 2, ("project", "settings"): 3}
    return sorted(found.groups.values(), key=lambda g: order[(g.scope, g.source)])


def override_state(item: OwnItem, kind: str, project_data: Any, project_base: Path) -> str:
    """``load``, ``unload`` or ``inherit``: what the project's ``kind`` list says of one
    of your own files (pi 1.6's resource screen): its last entry naming the file, by its
    absolute path, its path from ``.pi`` or from its own folder, decides (``!``/``-``
    unload, anything else load)."""
    entries = project_data.get(kind) if isinstance(project_data, dict) else None
    if not isinstance(entries, list):
        return "inherit"
    names = {str(item.path), os.path.relpath(item.path, project_base), os.path.relpath(item.path, item.base)}
    state = "inherit"
    for entry in (e for e in entries if isinstance(e, str)):
        target = entry[1:] if entry[:1] in ("!", "+", "-") else entry
        if target.replace(os.sep, "/") in {n.replace(os.sep, "/") for n in names}:
            state = "unload" if entry[:1] in ("!", "-") else "load"
    return state


def group_lines(group: OwnGroup, inherited: bool, overrides: Callable[[OwnItem, str], str] | None = None,
                inherited_files: set[tuple[str, Path]] | None = None) -> list[str]:
    """A group's lines: its label, each kind's heading and files by name (``inherited``:
    the user's, seen from the project scope). In the project scope (``overrides``: an
    item's :func:`override_state`) a file the project's settings load or unload is
    ``[+]``/``[-]``, and one the user's scope lists too says "inherited global"."""
    lines = [f"  {group.label}" + (" · inherited global" if inherited else "")]
    for kind in KINDS:
        items = sorted(group.items.get(kind, []), key=lambda item: item.name.casefold())
        if items:
            lines.append(f"    {kind.capitalize()}")
        for item in items:
            state = overrides(item, kind) if overrides is not None else "inherit"
            if state != "inherit":
                lines.append(f"      [{'+' if state == 'load' else '-'}] {item.name}  project {state}")
                continue
            from_user = inherited or (kind, Path(os.path.realpath(item.path))) in (inherited_files or set())
            lines.append(f"      [{'x' if item.enabled else ' '}] {item.name}" + ("  inherited global" if from_user else ""))
    return lines


def inherited_files(groups: list[OwnGroup]) -> set[tuple[str, Path]]:
    """(kind, real path) of every file the user's scope lists: "inherited global" seen
    from the project scope."""
    return {(kind, Path(os.path.realpath(item.path))) for g in groups for kind, items in g.items.items()
            for item in items}
