"""pi's patterns in resource lists (settings' ``extensions``, ``skills``, ``prompts``,
``themes`` and pi packages' manifests): a glob keeps the files it matches among those
the list's paths name, ``!glob`` leaves matches out, ``+path`` puts an exact path back,
``-path`` takes one out whatever else says. A file matches by its path from the list's
folder, its name or its absolute path (a ``SKILL.md`` by its folder too), with
minimatch's globs. In the shell because plugin discovery applies them to ``extensions``
before any plugin loads; the resource plugins use the same functions."""

from __future__ import annotations

import os
import re
from pathlib import Path


def glob_regex(pattern: str) -> re.Pattern:
    """A minimatch-style glob as a regex on ``/``-separated paths: ``**`` crosses
    folders, ``*`` and ``?`` do not, ``[...]`` and ``{a,b}`` as in the shell."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:end].replace("\\", "\\\\")
                out.append(f"[{'^' + body[1:] if body.startswith('!') else body}]")
                i = end
        elif c == "{":
            end = pattern.find("}", i + 1)
            if end < 0:
                out.append(re.escape(c))
            else:
                options = pattern[i + 1:end].split(",")
                out.append("(?:" + "|".join(glob_regex(o).pattern[4:-2] for o in options) + ")")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("(?s:" + "".join(out) + r")\Z")


def _posix(path: str | Path) -> str:
    return str(path).replace(os.sep, "/")


def _normal(pattern: str) -> str:
    return _posix(os.path.normpath(pattern)) if pattern else pattern


def _candidates(path: Path, root: Path, with_parent: bool) -> list[str]:
    rel = _posix(os.path.relpath(path, root))
    found = [rel, path.name, _posix(path)]
    if with_parent and path.name == "SKILL.md":
        parent = path.parent
        found += [_posix(os.path.relpath(parent, root)), parent.name, _posix(parent)]
    return found


def matches_glob(path: Path, patterns: list[str], root: Path) -> bool:
    """pi's match: the path relative to ``root``, its name or its absolute path (a
    SKILL.md also by its folder)."""
    names = _candidates(path, root, True)
    return any(glob_regex(_normal(p)).match(n) for p in patterns for n in names)


def matches_exact(path: Path, patterns: list[str], root: Path) -> bool:
    rel = _posix(os.path.relpath(path, root))
    names = {rel, _posix(path)}
    if path.name == "SKILL.md":
        names |= {_posix(os.path.relpath(path.parent, root)), _posix(path.parent)}
    return any(_normal(p[2:] if p.startswith("./") else p) in names for p in patterns)


def is_override(entry: str) -> bool:
    return entry[:1] in ("!", "+", "-")


def is_pattern(entry: str) -> bool:
    """An entry that filters rather than names a path: ``!``, ``+``, ``-`` or a glob."""
    return is_override(entry) or "*" in entry or "?" in entry


def apply_patterns(paths: list[Path], patterns: list[str], root: Path) -> set[Path]:
    """The paths patterns keep: includes (all when none), minus ``!`` globs, plus ``+``
    exact paths, minus ``-`` exact paths."""
    includes = [p for p in patterns if not is_override(p)]
    excludes = [p[1:] for p in patterns if p.startswith("!")]
    forced = [p[1:] for p in patterns if p.startswith("+")]
    removed = [p[1:] for p in patterns if p.startswith("-")]
    kept = [p for p in paths if not includes or matches_glob(p, includes, root)]
    if excludes:
        kept = [p for p in kept if not matches_glob(p, excludes, root)]
    if forced:
        kept += [p for p in paths if p not in kept and matches_exact(p, forced, root)]
    if removed:
        kept = [p for p in kept if not matches_exact(p, removed, root)]
    return set(kept)


def kept_by_overrides(path: Path, patterns: list[str], root: Path) -> bool:
    """Whether a file a scope found by itself (its ``extensions/`` folder …) stays, under
    the ``!``, ``+`` and ``-`` entries of that scope's list (its globs do not apply)."""
    return path in apply_patterns([path], [p for p in patterns if is_override(p)], root)
