"""The harness's CHANGELOG.md (Keep a Changelog form): ``/changelog`` shows all of it,
and the first start after an update shows what is new since the version last seen
(settings ``lastChangelogVersion``; one line instead with ``collapseChangelog``), as pi
does. A fresh install only records its version."""

from __future__ import annotations

import re
from pathlib import Path

from attrs import define

CHANGELOG = Path(__file__).resolve().parents[2] / "CHANGELOG.md"
_VERSION = re.compile(r"^##\s+\[?(\d+)\.(\d+)\.(\d+)\]?")


@define
class Entry:
    version: tuple[int, int, int]
    content: str


def read_changelog(path: Path = CHANGELOG) -> list[Entry]:
    """The released versions' sections, in the file's order (newest first); sections
    without a version (``## [Unreleased]``) are left out, as pi does."""
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except OSError:
        return []
    entries: list[Entry] = []
    current: list[str] = []
    version: tuple[int, int, int] | None = None
    for line in lines:
        if line.startswith("## "):
            if version is not None and current:
                entries.append(Entry(version, "\n".join(current).strip()))
            match = _VERSION.match(line)
            version = (int(match[1]), int(match[2]), int(match[3])) if match else None
            current = [line] if match else []
        elif version is not None:
            current.append(line)
    if version is not None and current:
        entries.append(Entry(version, "\n".join(current).strip()))
    return entries


def parse_version(text: str) -> tuple[int, ...] | None:
    match = re.match(r"^(\d+)\.(\d+)\.(\d+)", str(text or ""))
    return tuple(int(g) for g in match.groups()) if match else None


def news_since(settings, current_version: str, path: Path = CHANGELOG) -> str | None:
    """What is new since ``lastChangelogVersion`` (and that version moved on), or None."""
    last = settings.get("lastChangelogVersion")
    if not last:
        settings.remember("lastChangelogVersion", current_version)
        return None
    seen = parse_version(last) or (0, 0, 0)
    new = [e for e in read_changelog(path) if e.version > seen]
    if not new:
        return None
    settings.remember("lastChangelogVersion", current_version)
    return "\n\n".join(e.content for e in new)
