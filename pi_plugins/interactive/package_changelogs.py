"""What changed in the pi packages that carry an extension, shown once after they are
updated, as pi 1.6 shows them under "Extension Updates" (one line per package with
``collapseChangelog``). Each package's version is read from its ``package.json`` and
its notes from ``pi.changelogPath`` there (default ``CHANGELOG.md``; ``""``: none), in
the same Keep a Changelog form as pi-harness's own; the version last shown is kept in
settings ``extensionChangelogVersions`` under pi 1.6's key (``{"source":…,"scope":…}``).
A package seen for the first time, or whose kept version cannot be read, is only recorded.

Different: pip-installed plugin packages show none (a wheel carries no changelog).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from attrs import define

from pi_plugins.interactive.changelog import parse_version, read_changelog


@define
class Update:
    name: str
    version: str
    markdown: str


def _package_json(root: Path) -> dict:
    try:
        data = json.loads((root / "package.json").read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _changelog_path(root: Path, data: dict) -> Path | None:
    manifest = data.get("pi")
    wanted = manifest.get("changelogPath", "CHANGELOG.md") if isinstance(manifest, dict) else "CHANGELOG.md"
    if not isinstance(wanted, str) or not wanted:
        return None
    path = (root / wanted).resolve()
    return path if path.is_relative_to(root.resolve()) and path.is_file() else None


def package_updates(settings: Any, agent_dir: Path, cwd: Path, project_trusted: bool) -> list[Update]:
    """The packages updated since their notes were last shown (their new notes), each once;
    the versions are recorded in settings.json."""
    from pi_plugins.packages.configured import load

    if not hasattr(settings, "global_data"):
        return []
    seen: set[str] = set()
    updates: list[Update] = []
    for resource in load(settings, agent_dir, cwd, project_trusted).enabled("extensions"):
        key = json.dumps({"source": resource.package, "scope": resource.scope}, separators=(",", ":"))
        if key in seen:
            continue
        seen.add(key)
        data = _package_json(resource.root)
        version = data.get("version")
        changelog = _changelog_path(resource.root, data)
        if not isinstance(version, str) or changelog is None:
            continue
        kept = settings.get("extensionChangelogVersions") or {}
        last = kept.get(key) if isinstance(kept, dict) else None
        last_version = parse_version(last) if isinstance(last, str) else None
        if last_version is None:  # first seen, or unreadable: recorded, nothing shown
            _record(settings, key, version)
            continue
        new = [e for e in read_changelog(changelog) if e.version > last_version]
        if not new:
            continue
        _record(settings, key, version)
        name = data.get("name")
        name = name if isinstance(name, str) else resource.package
        markdown = "\n\n".join(e.content.replace("## ", f"## {name} ", 1) for e in new).strip()
        updates.append(Update(name, version, markdown))
    return updates


def _record(settings: Any, key: str, version: str) -> None:
    kept = settings.get("extensionChangelogVersions")
    settings.remember("extensionChangelogVersions", {**(kept if isinstance(kept, dict) else {}), key: version})


def updates_block(tui: Any) -> Any:
    """The "Extension Updates" notice, or the one-line-per-package one; None: nothing new
    (or a resumed chat, as the harness's own news)."""
    from pi_plugins.interactive.blocks import NoticeBlock
    from pi_plugins.resources import agent_dir_of, cwd_of, project_trusted

    if tui.harness.messages:
        return None
    ctx = tui.harness.ctx
    updates = package_updates(tui.settings, agent_dir_of(ctx), cwd_of(ctx), project_trusted(ctx))
    if not updates:
        return None
    if tui.settings.get("collapseChangelog", False):
        return NoticeBlock(None, "\n".join(f"Updated {u.name} to v{u.version}." for u in updates))
    return NoticeBlock("Extension Updates", "\n\n".join(u.markdown for u in updates))
