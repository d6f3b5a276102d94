"""pi packages on disk and in settings.json, kept as pi 1.6 keeps them so that pi and
pi-harness share one agent dir: npm packages under ``<root>/node_modules`` with their
dependency tree, listed in ``<root>/package.json`` ``dependencies`` (npm, which pi runs,
deletes what that file does not list), ``<root>/.gitignore`` (git packages are
:mod:`.git_install`'s); the source recorded in ``settings.json`` ``packages`` as typed
(a local path relative to the settings file), written with 2-space indentation and no
final newline, the other keys kept in their order.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from pi_plugins.packages import sources
from pi_plugins.packages.npm_registry import (
    NpmConfig,
    NpmError,
    Registry,
    lookup_places,
    resolve_tree,
    unpack,
)

ROOT_MANIFEST = {"name": "pi-extensions", "private": True}
GITIGNORE = "*\n!.gitignore\n"


# ---------------------------------------------------------------- settings.json


def read_json(path: Path) -> dict:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return {}
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise NpmError(f"{path} is not valid JSON ({exc}); fix it first, it was left as is") from None
    if not isinstance(data, dict):
        raise NpmError(f"{path}: expected a JSON object; fix it first, it was left as is")
    return data


def write_json(path: Path, data: dict, final_newline: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + ("\n" if final_newline else ""),
                    encoding="utf-8")
    os.replace(temp, path)


def settings_entry_text(source_text: str, scope: str, agent_dir: Path, cwd: Path) -> str:
    """The string pi writes for a source: npm and git as typed, a local path relative
    to the settings file's folder."""
    parsed = sources.parse_source(source_text)
    if not isinstance(parsed, sources.LocalSource):
        return source_text
    resolved = sources.resolve_local(parsed.path, cwd)
    return os.path.relpath(resolved, sources.base_dir(scope, agent_dir, cwd)) or "."


def add_to_settings(path: Path, text: str, scope: str, agent_dir: Path, cwd: Path) -> bool:
    """Record ``text`` in ``packages``: replacing the entry of the same identity in
    place (an object keeps its filters), else appended. Whether the file changed."""
    data = read_json(path)
    entries = data.get("packages")
    if entries is not None and not isinstance(entries, list):
        raise NpmError(f'{path}: "packages" is not a list; fix it first')
    entries = list(entries or [])
    key = sources.identity(sources.parse_source(text), scope, agent_dir, cwd)
    for index, entry in enumerate(entries):
        current = sources.source_string(entry)
        if current is None or sources.identity(sources.parse_source(current), scope, agent_dir, cwd) != key:
            continue
        if current == text:
            return False
        entries[index] = {**entry, "source": text} if isinstance(entry, dict) else text
        break
    else:
        entries.append(text)
    data["packages"] = entries
    write_json(path, data, final_newline=False)
    return True


def remove_from_settings(path: Path, source: sources.Source, scope: str, agent_dir: Path, cwd: Path) -> bool:
    data = read_json(path)
    entries = data.get("packages")
    if not isinstance(entries, list):
        return False
    key = sources.identity(source, scope, agent_dir, cwd)
    kept = []
    for entry in entries:
        text = sources.source_string(entry)
        if text is not None and sources.identity(sources.parse_source(text), scope, agent_dir, cwd) == key:
            continue
        kept.append(entry)
    if len(kept) == len(entries):
        return False
    data["packages"] = kept
    write_json(path, data, final_newline=False)
    return True


# ---------------------------------------------------------------- npm roots


def ensure_root(root: Path) -> None:
    """The npm project pi keeps packages in: ``package.json`` and ``.gitignore``."""
    root.mkdir(parents=True, exist_ok=True)
    if not (root / "package.json").exists():
        write_json(root / "package.json", dict(ROOT_MANIFEST), final_newline=True)
    if not (root / ".gitignore").exists():
        (root / ".gitignore").write_text(GITIGNORE, encoding="utf-8")


def saved_range(version: str, wanted: str | None) -> str:
    """What npm saves in ``package.json``: ``^version`` unless a range was asked for."""
    from pi_plugins.packages import semver

    if wanted and semver.parse(wanted) is None and semver.valid_range(wanted) and wanted not in ("*", "latest"):
        return wanted
    return f"^{version}"


def install_npm(source: sources.NpmSource, root: Path, registry: Registry | None = None) -> tuple[str, int]:
    """Fetch, check and unpack ``source`` with its dependencies into ``root``; list it
    in ``root/package.json``. (the version installed, how many packages were added)"""
    registry = registry or Registry(NpmConfig.load(root))
    tree = resolve_tree(registry, root, source.name, source.version)  # raises before any write
    manifest = read_json(root / "package.json") if (root / "package.json").exists() else {}
    ensure_root(root)
    for fetched in tree:
        unpack(fetched, root)
    manifest = manifest or dict(ROOT_MANIFEST)
    listed = manifest.get("dependencies")
    dependencies: dict = listed if isinstance(listed, dict) else {}
    dependencies[source.name] = saved_range(tree[0].version, source.version)
    manifest["dependencies"] = dict(sorted(dependencies.items()))
    write_json(root / "package.json", manifest, final_newline=True)
    return tree[0].version, len(tree)


def _reachable(root: Path, names: list[str]) -> set[Path]:
    """The package folders ``names`` need, by Node's resolution from ``root``."""
    seen: set[Path] = set()
    todo = [("", n) for n in names]
    while todo:
        location, name = todo.pop()
        place = next((p for p in lookup_places(location, name) if (root / p / "package.json").exists()), None)
        if place is None or root / place in seen:
            continue
        seen.add(root / place)
        deps = read_json(root / place / "package.json").get("dependencies")
        todo += [(place, d) for d in (deps if isinstance(deps, dict) else {})]
    return seen


def _package_folders(modules: Path) -> list[Path]:
    found = []
    for entry in sorted(modules.iterdir()) if modules.is_dir() else []:
        if entry.name.startswith("."):
            continue
        if entry.name.startswith("@") and entry.is_dir():
            found += [e for e in sorted(entry.iterdir()) if not e.name.startswith(".")]
        else:
            found.append(entry)
    return found


def uninstall_npm(name: str, root: Path) -> int:
    """Take ``name`` out of ``root/package.json`` and delete what nothing listed there
    needs any more (npm's prune). How many packages were removed."""
    manifest = read_json(root / "package.json")
    dependencies = manifest.get("dependencies")
    if isinstance(dependencies, dict) and name in dependencies:
        del dependencies[name]
        if not dependencies:
            del manifest["dependencies"]
        write_json(root / "package.json", manifest, final_newline=True)
    listed = list((manifest.get("dependencies") or {}).keys())
    needed = _reachable(root, listed)
    removed = 0
    for folder in _package_folders(root / "node_modules"):
        if folder not in needed:
            shutil.rmtree(folder) if folder.is_dir() and not folder.is_symlink() else folder.unlink()
            removed += 1
    return removed


def installed_version(folder: Path) -> Any:
    return read_json(folder / "package.json").get("version") if (folder / "package.json").exists() else None
