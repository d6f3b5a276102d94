"""Plugin files in settings.json: ``pi install PATH`` adds a plugin file's (or folder's)
path to ``extensions``, the global file's or with ``-l`` the project's, without copying,
as pi does with local paths; ``pi remove PATH`` takes it out again."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pi_core.paths import agent_dir, project_dir


class PackageError(Exception):
    """A request ``pi install`` / ``pi remove`` cannot carry out; ``code`` is the exit code."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def settings_file(local: bool, cwd: str | Path) -> Path:
    return (project_dir(cwd) if local else agent_dir()) / "settings.json"


def read_settings(path: Path) -> dict:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise PackageError(f"{path} is not valid JSON ({exc}); fix it first, it was left as is") from None
    if not isinstance(data, dict):
        raise PackageError(f"{path}: expected a JSON object; fix it first, it was left as is")
    return data


def write_settings(path: Path, data: dict) -> None:
    """Write settings.json whole, through a temp file renamed over the old one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(temp, path)


def entry_path(entry: Any, base: Path | None) -> Path | None:
    if not isinstance(entry, str):
        return None
    path = Path(entry).expanduser()
    if path.is_absolute():
        return path.resolve()
    assert base is not None  # settings that list entries were read from a directory
    return (base / path).resolve()


def add_plugin_file(path: Path, local: bool, cwd: str | Path) -> tuple[Path, bool]:
    """Record a plugin file in settings.json ``extensions``: relative to ``.pi`` in a
    project (so the project can share it), absolute in the global file. Returns the
    settings file and whether it changed."""
    target = settings_file(local, cwd)
    data = read_settings(target)
    entries = data.get("extensions")
    if entries is not None and not isinstance(entries, list):
        raise PackageError(f"{target}: \"extensions\" is not a list; fix it first")
    entries = list(entries or [])
    if any(entry_path(e, target.parent) == path for e in entries):
        return target, False
    entries.append(os.path.relpath(path, target.parent) if local else str(path))
    data["extensions"] = entries
    write_settings(target, data)
    return target, True


def remove_plugin_file(path: Path, local: bool, cwd: str | Path) -> Path | None:
    """Take a plugin file out of settings.json ``extensions``; the settings file it was
    in, or ``None`` when it was not there."""
    target = settings_file(local, cwd)
    data = read_settings(target)
    entries = data.get("extensions")
    if not isinstance(entries, list):
        return None
    kept = [e for e in entries if entry_path(e, target.parent) != path]
    if len(kept) == len(entries):
        return None
    data["extensions"] = kept
    write_settings(target, data)
    return target


def check_plugin_file(path: Path) -> str:
    """Import a plugin file as pi will, so a broken one is refused before it is recorded."""
    from pi_core.app.discovery import load_file
    from pi_core.plugins import Plugins

    plugins = Plugins()
    name = load_file(plugins, path)
    if name is None or plugins.errors:
        raise PackageError("\n".join(str(e) for e in plugins.errors) or f"{path} did not load")
    return name


# ---------------------------------------------------------------- the commands
