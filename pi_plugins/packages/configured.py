"""The pi packages the settings configure (``packages`` in ``<agent dir>/settings.json``
and, once the project is trusted, ``.pi/settings.json``), where each is installed, and
the resources they give, in pi 1.6's order: project entries first, then the user's, each
in settings order; a project entry replaces the user's of the same identity, unless it
says ``autoload: false`` (then it only changes what the user's entry enables). Package
resources come after the project's and the user's own (the loaders add them last), and
the same file is used once.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from attrs import define, field

from pi_plugins.packages import sources
from pi_plugins.packages.collect import RESOURCE_TYPES, collect

#: Sources whose start-up install failed in this process (:mod:`.startup_install`), already reported.
FAILED: set[str] = set()
#: Sources being installed now (``pi serve`` installs in the background): a session that
#: starts meanwhile goes without their resources, and is told so.
INSTALLING: set[str] = set()


@define
class ConfiguredPackage:
    """One ``packages`` entry of one settings file."""

    entry: Any  # the string, or the object with filters
    text: str  # its source, as written
    source: sources.Source
    scope: str  # "user" or "project"
    path: Path | None  # where it is installed; None: not installed (or not there)

    @property
    def filtered(self) -> bool:
        return isinstance(self.entry, dict)

    @property
    def filter(self) -> dict | None:
        return self.entry if isinstance(self.entry, dict) else None


@define(frozen=True)
class PackageResource:
    kind: str  # extensions, skills, prompts, themes
    path: Path
    package: str  # the source, as written in settings
    scope: str
    root: Path  # the package's folder
    enabled: bool = True

    @property
    def relative(self) -> str:
        return os.path.relpath(self.path, self.root)


@define
class PackageResources:
    """Every configured package's resources, enabled and not (``pi config`` shows both)."""

    packages: list[ConfiguredPackage] = field(factory=list)
    resources: list[PackageResource] = field(factory=list)
    problems: list[str] = field(factory=list)

    def enabled(self, kind: str) -> list[PackageResource]:
        """The settings' packages' enabled resources of ``kind`` (not the ``-e`` ones)."""
        return [r for r in self.resources if r.kind == kind and r.enabled and r.scope != "temporary"]

    def temporary(self, kind: str) -> list[PackageResource]:
        """The resources of ``kind`` of the run's ``-e`` packages (pi loads them first)."""
        return [r for r in self.resources if r.kind == kind and r.enabled and r.scope == "temporary"]


def _entries(data: Any, scope: str, where: str, problems: list[str]) -> list[Any]:
    entries = data.get("packages") if isinstance(data, dict) else None
    if entries is None:
        return []
    if not isinstance(entries, list):
        problems.append(f'{where}: "packages" must be a list; ignored')
        return []
    return entries


def configured(global_data: Any, project_data: Any, agent_dir: Path, cwd: Path, *,
               project_trusted: bool) -> tuple[list[ConfiguredPackage], list[str]]:
    """Every ``packages`` entry, the user's then (trusted) the project's, as ``pi list``
    shows them; malformed entries are reported and left out."""
    found: list[ConfiguredPackage] = []
    problems: list[str] = []
    scopes = [("user", global_data, agent_dir / "settings.json")]
    if project_trusted:
        scopes.append(("project", project_data, cwd / ".pi" / "settings.json"))
    for scope, data, where in scopes:
        for entry in _entries(data, scope, str(where), problems):
            text = sources.source_string(entry)
            if text is None:
                problems.append(f"{where}: packages entry {entry!r} has no source; ignored")
                continue
            try:
                source = sources.parse_source(text)
            except sources.SourceError as exc:
                problems.append(f"{where}: {exc}; ignored")
                continue
            found.append(ConfiguredPackage(entry, text, source, scope,
                                           sources.installed_path(source, scope, agent_dir, cwd)))
    return found, problems


def effective(packages: list[ConfiguredPackage], agent_dir: Path, cwd: Path) -> list[ConfiguredPackage]:
    """The packages that load, in pi's order (project first, ``-e``'s before both), deduped by identity."""
    ordered = [p for scope in ("temporary", "project", "user") for p in packages if p.scope == scope]
    result: list[ConfiguredPackage] = []
    seen: dict[str, int] = {}
    for package in ordered:
        key = sources.identity(package.source, package.scope, agent_dir, cwd)
        index = seen.get(key)
        if index is None:
            seen[key] = len(result)
            result.append(package)
            continue
        existing = result[index]
        if existing.scope == "project" and package.scope == "user":
            if existing.filter is not None and existing.filter.get("autoload") is False:
                result.append(package)
        elif package.scope == "project":
            result[index] = package
    return result


def delta_base(package: ConfiguredPackage, packages: list[ConfiguredPackage],
                agent_dir: Path, cwd: Path) -> ConfiguredPackage | None:
    """The user's entry an ``autoload: false`` project entry changes."""
    if package.scope != "project" or package.filter is None or package.filter.get("autoload") is not False:
        return None
    key = sources.identity(package.source, "project", agent_dir, cwd)
    return next((p for p in packages if p.scope == "user"
                 and sources.identity(p.source, "user", agent_dir, cwd) == key), None)


def resources_of(packages: list[ConfiguredPackage], agent_dir: Path, cwd: Path) -> list[PackageResource]:
    """The resources of the effective packages; a file met twice keeps its first state."""
    found: list[PackageResource] = []
    seen: set[tuple[str, Path]] = set()
    for package in effective(packages, agent_dir, cwd):
        base = delta_base(package, packages, agent_dir, cwd)
        root = (base or package).path
        if root is None:
            continue
        if root.is_file():  # a local file: one extension
            items: dict[str, list[tuple[Path, bool]]] = {kind: [] for kind in RESOURCE_TYPES}
            items["extensions"] = [(root, True)]
        else:
            items, has_any = collect(root, package.filter)
            if not has_any and isinstance(package.source, sources.LocalSource):
                items["extensions"] = [(root, True)]
        for kind in RESOURCE_TYPES:
            for path, enabled in items[kind]:
                if (kind, path) in seen:
                    continue
                seen.add((kind, path))
                found.append(PackageResource(kind, path, package.text, package.scope,
                                             root if root.is_dir() else root.parent, enabled))
    return found


def load(settings: Any, agent_dir: Path, cwd: Path, project_trusted: bool) -> PackageResources:
    """The packages and resources ``settings`` (pi_core's ``Settings``) configure."""
    global_data = getattr(settings, "global_data", None) or {}
    project_data = getattr(settings, "project_data", None) or {}
    packages, problems = configured(global_data, project_data, agent_dir, cwd, project_trusted=project_trusted)
    for package in effective(packages, agent_dir, cwd):
        if package.path is None and delta_base(package, packages, agent_dir, cwd) is None \
                and package.text not in FAILED:
            problems.append(f"package {package.text} is being installed; sessions started after it "
                            "have its resources" if package.text in INSTALLING else
                            f"package {package.text} is not installed; its resources are skipped "
                            f"(pi install {package.text}{' -l' if package.scope == 'project' else ''})")
    from pi_plugins.packages import temporary

    for_run, unreadable = temporary.packages(settings, agent_dir)
    problems += unreadable + [f"-e {p.text}: not installed; its resources are skipped"
                              for p in for_run if p.path is None and p.text not in FAILED]
    found = resources_of(for_run, agent_dir, cwd) + resources_of(packages, agent_dir, cwd)
    return PackageResources(packages, _once(found), problems)


def _once(resources: list[PackageResource]) -> list[PackageResource]:
    """A file met twice (an ``-e`` package also in settings) keeps its first place."""
    seen: set[tuple[str, Path]] = set()
    kept = []
    for resource in resources:
        if (resource.kind, resource.path) not in seen:
            seen.add((resource.kind, resource.path))
            kept.append(resource)
    return kept


# ---------------------------------------------------------------- TypeScript extensions


def extension_label(resource: PackageResource) -> str:
    """How pi's start-up header names a package extension: the package (``npm:`` left
    off) for its ``index`` file, ``package:folder`` for a folder's, else
    ``package:path``, ``extensions/`` left off."""
    label = resource.package
    if label.startswith("npm:"):
        label = label[4:] or label
    else:
        git = sources.parse_git(label)
        label = git.path if git is not None else label
    rel = resource.relative.replace(os.sep, "/")
    rel = rel[len("extensions/"):] if rel.startswith("extensions/") else rel
    folder, _, name = rel.rpartition("/")
    if name.rsplit(".", 1)[0] == "index":
        return label if folder in ("", ".") else f"{label}:{folder}"
    return f"{label}:{rel}"


CANNOT_RUN = "TypeScript extension for pi (Node); cannot run here"


def extension_lines(resources: PackageResources) -> list[str]:
    """One line per enabled package extension: what it is and that it does not run."""
    found = resources.temporary("extensions") + resources.enabled("extensions")
    return [f"{extension_label(r)} ({r.relative}): {CANNOT_RUN}" for r in found]
