"""What one pi package holds, as pi 1.6 reads it: the ``pi`` manifest of its
``package.json`` (``extensions``, ``skills``, ``prompts``, ``themes``: paths and globs
relative to the package, with ``!``/``+``/``-`` patterns), else the conventional folders
``extensions/``, ``skills/``, ``prompts/``, ``themes/``; narrowed by the settings entry's
filters (the object form), ``autoload: false`` making a project entry a delta.

Folder scans skip dot names and ``node_modules``, honour ``.gitignore``, ``.ignore`` and
``.fdignore``, follow symlinks and go in byte order of names, as pi's do. Skills: a
folder's ``SKILL.md`` ends its branch, loose ``.md`` files count only at the top.
Prompts and themes: every ``.md`` / ``.json`` file, however deep. Extensions (named
here, never run: they are TypeScript or JavaScript for Node): a folder's manifest
entries or ``index.ts``/``index.js``, else its top-level ``.ts``/``.js`` files and each
subfolder's entry.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

# pi's globs and patterns live in the shell, where plugin discovery applies them to
# ``extensions`` too; re-exported here for the package code that has always used them.
from pi_core.app.resource_patterns import (  # noqa: F401
    _normal,
    _posix,
    apply_patterns,
    glob_regex,
    is_override,
    matches_exact,
    matches_glob,
)

RESOURCE_TYPES = ("extensions", "skills", "prompts", "themes")
_SUFFIX = {"skills": ".md", "prompts": ".md", "themes": ".json"}
_IGNORE_FILES = (".gitignore", ".ignore", ".fdignore")


def read_manifest(package_root: Path) -> dict[str, Any] | None:
    """The ``pi`` object of ``package.json``: each resource key kept only when it is a
    list of strings (pi ignores it otherwise); ``None`` without one."""
    try:
        text = (package_root / "package.json").read_text(encoding="utf-8-sig")
        data = json.loads(text)
    except (OSError, ValueError):
        return None
    pi = data.get("pi") if isinstance(data, dict) else None
    if not isinstance(pi, dict):
        return None
    manifest: dict[str, Any] = {}
    for key in RESOURCE_TYPES:
        entries = pi.get(key)
        if isinstance(entries, list) and all(isinstance(e, str) for e in entries):
            manifest[key] = entries
    return manifest


def delta_states(paths: list[Path], patterns: list[str], root: Path) -> dict[Path, bool]:
    """``autoload: false``: only the files a pattern names change state, the last
    pattern naming one deciding (``-``/``!`` off, otherwise on)."""
    states: dict[Path, bool] = {}
    for pattern in patterns:
        target = pattern[1:] if is_override(pattern) else pattern
        exact = pattern[:1] in ("+", "-")
        for path in paths:
            if matches_exact(path, [target], root) if exact else matches_glob(path, [target], root):
                states[path] = pattern[:1] not in ("-", "!")
    return states


# ---------------------------------------------------------------- folder scans


class _Ignores:
    """The ignore files met on the way down, their patterns taken from the scan's root."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._spec: Any = None

    def add(self, folder: Path, root: Path) -> None:
        rel = _posix(os.path.relpath(folder, root))
        prefix = "" if rel == "." else rel + "/"
        for name in _IGNORE_FILES:
            try:
                text = (folder / name).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            for line in text.splitlines():
                stripped = line.strip()
                if not stripped or (stripped.startswith("#") and not stripped.startswith("\\#")):
                    continue
                negated = line.startswith("!")
                pattern = line[1:] if negated else (line[1:] if line.startswith("\\!") else line)
                pattern = pattern[1:] if pattern.startswith("/") else pattern
                self.lines.append(("!" if negated else "") + prefix + pattern)
                self._spec = None

    def ignores(self, rel: str) -> bool:
        if not self.lines:
            return False
        if self._spec is None:
            import pathspec

            self._spec = pathspec.GitIgnoreSpec.from_lines(self.lines)
        return bool(self._spec.match_file(rel))


def _entries(folder: Path) -> list[tuple[str, Path, bool, bool]]:
    """(name, path, is folder, is file) in byte order, symlinks followed, broken ones
    and unreadable folders left out."""
    try:
        names = sorted(os.listdir(folder), key=lambda n: n.encode("utf-8", "surrogateescape"))
    except OSError:
        return []
    found = []
    for name in names:
        path = folder / name
        try:
            is_dir, is_file = path.is_dir(), path.is_file()
        except OSError:
            continue
        found.append((name, path, is_dir, is_file))
    return found


def _files(folder: Path, suffix: str, ignores: _Ignores, root: Path) -> list[Path]:
    ignores.add(folder, root)
    found: list[Path] = []
    for name, path, is_dir, is_file in _entries(folder):
        if name.startswith(".") or name == "node_modules":
            continue
        rel = _posix(os.path.relpath(path, root))
        if ignores.ignores(rel + "/" if is_dir else rel):
            continue
        if is_dir:
            found += _files(path, suffix, ignores, root)
        elif is_file and name.endswith(suffix):
            found.append(path)
    return found


def _skills(folder: Path, ignores: _Ignores, root: Path) -> list[Path]:
    ignores.add(folder, root)
    entries = _entries(folder)
    for name, path, _, is_file in entries:
        if name == "SKILL.md" and is_file and not ignores.ignores(_posix(os.path.relpath(path, root))):
            return [path]
    found: list[Path] = []
    for name, path, is_dir, is_file in entries:
        if name.startswith(".") or name == "node_modules":
            continue
        rel = _posix(os.path.relpath(path, root))
        if is_file and name.endswith(".md") and folder == root and not ignores.ignores(rel):
            found.append(path)
        elif is_dir and not ignores.ignores(rel + "/"):
            found += _skills(path, ignores, root)
    return found


def _extension_entries(folder: Path) -> list[Path] | None:
    manifest = read_manifest(folder) or {}
    listed = [folder / e for e in manifest.get("extensions") or []]
    listed = [Path(os.path.normpath(p)) for p in listed if p.exists()]
    if listed:
        return listed
    for name in ("index.ts", "index.js"):
        if (folder / name).exists():
            return [folder / name]
    return None


def _extensions(folder: Path) -> list[Path]:
    own = _extension_entries(folder)
    if own is not None:
        return own
    ignores = _Ignores()
    ignores.add(folder, folder)
    found: list[Path] = []
    for name, path, is_dir, is_file in _entries(folder):
        if name.startswith(".") or name == "node_modules":
            continue
        rel = _posix(os.path.relpath(path, folder))
        if ignores.ignores(rel + "/" if is_dir else rel):
            continue
        if is_file and name.endswith((".ts", ".js")):
            found.append(path)
        elif is_dir:
            found += _extension_entries(path) or []
    return found


def folder_resources(folder: Path, kind: str) -> list[Path]:
    """The files of a resource folder by pi's scan rule for ``kind``."""
    if kind == "skills":
        return _skills(folder, _Ignores(), folder)
    if kind == "extensions":
        return _extensions(folder)
    return _files(folder, _SUFFIX[kind], _Ignores(), folder)


def _from_paths(paths: list[Path], kind: str) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            found += folder_resources(path, kind)
    return found


def _expand_glob(pattern: str, root: Path) -> list[Path]:
    """A manifest glob's matches under the package (files and folders), sorted, none
    with a dot segment."""
    regex = glob_regex(_normal(pattern[2:] if pattern.startswith("./") else pattern))
    matches = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in dirs + [f for f in files if not f.startswith(".")]:
            path = Path(folder) / name
            if regex.match(_posix(os.path.relpath(path, root))):
                matches.append(path)
    return sorted(matches, key=lambda p: str(p))


def manifest_files(entries: list[str], root: Path, kind: str) -> list[Path]:
    """Every file a manifest list names (its ``!``/``+``/``-`` patterns not applied)."""
    paths: list[Path] = []
    for entry in entries:
        if is_override(entry):
            continue
        if "*" in entry or "?" in entry:
            paths += _expand_glob(entry, root)
        else:
            paths.append(Path(os.path.normpath(root / entry)))
    return _from_paths(paths, kind)


def _manifest_enabled(entries: list[str], root: Path, kind: str) -> list[Path]:
    files = manifest_files(entries, root, kind)
    kept = apply_patterns(files, [e for e in entries if is_override(e)], root)
    return [f for f in files if f in kept]


def package_files(root: Path, kind: str) -> list[Path]:
    """What a package offers of ``kind`` before any settings filter."""
    manifest = read_manifest(root) or {}
    entries = manifest.get(kind)
    if entries:
        return _manifest_enabled(entries, root, kind)
    folder = root / kind
    return folder_resources(folder, kind) if folder.exists() else []


def collect(root: Path, filter: dict | None) -> tuple[dict[str, list[tuple[Path, bool]]], bool]:
    """A package's resources by type, each ``(file, enabled)``, in pi's order; and
    whether it had any (a local folder without any is one extension to pi)."""
    found: dict[str, list[tuple[Path, bool]]] = {kind: [] for kind in RESOURCE_TYPES}
    manifest = read_manifest(root)
    if filter is not None:
        for kind in RESOURCE_TYPES:
            patterns = filter.get(kind)
            patterns = [p for p in patterns if isinstance(p, str)] if isinstance(patterns, list) else None
            if filter.get("autoload") is False:
                if patterns:
                    states = delta_states(package_files(root, kind), patterns, root)
                    found[kind] = list(states.items())
            elif patterns is not None:
                files = package_files(root, kind)
                kept = apply_patterns(files, patterns, root) if patterns else set()
                found[kind] = [(f, f in kept) for f in files]
            elif manifest is not None and kind in manifest:
                found[kind] = [(f, True) for f in _manifest_enabled(manifest[kind], root, kind)]
            elif (root / kind).exists():
                found[kind] = [(f, True) for f in folder_resources(root / kind, kind)]
        return found, True
    if manifest:
        for kind in RESOURCE_TYPES:
            if kind in manifest:
                found[kind] = [(f, True) for f in _manifest_enabled(manifest[kind], root, kind)]
        return found, True
    has_any = False
    for kind in RESOURCE_TYPES:
        if (root / kind).exists():
            has_any = True
            found[kind] = [(f, True) for f in folder_resources(root / kind, kind)]
    return found, has_any
