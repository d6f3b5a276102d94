"""Walking a directory tree the way ripgrep and fd do: hidden files included, ``.git``
left out, and everything ``.gitignore`` (also ``.ignore``, ``.rgignore``) excludes
skipped, with git's rules (nested files, negation, directory patterns, a repository's
``.git/info/exclude``), whether or not the tree is a git repository. Symbolic links are
listed but never followed into. Every directory listing and ignore file is read
through the execution environment.

Git's ignore syntax is matched with ``pathspec``, a small, well-kept library that follows
git's own rules; the glob patterns the model gives to ``find`` and ``grep`` are matched
by :func:`glob_matcher` below (``*``, ``**``, ``?``, ``[...]``, ``{a,b}``).
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from attrs import define

from pi_core.protocol.environment import ExecutionEnvironment

IGNORE_FILES = (".gitignore", ".ignore", ".rgignore")  # later ones take precedence


@define(frozen=True)
class Found:
    path: str  # relative to the walk's root, "/"-separated
    full: str
    is_dir: bool
    is_link: bool


class Ignores:
    """The ignore rules in force in one directory: (base directory, compiled spec) pairs,
    outermost first; the innermost file with an opinion decides."""

    def __init__(self, specs: tuple[tuple[str, Any], ...] = ()):
        self.specs = specs

    def inside(self, base: str, spec: Any) -> Ignores:
        return self if spec is None else Ignores((*self.specs, (base, spec)))

    def ignored(self, full: str, is_dir: bool) -> bool:
        for base, spec in reversed(self.specs):
            rel = os.path.relpath(full, base).replace(os.sep, "/")
            if rel.startswith(".."):
                continue
            decision = spec.check_file(rel + "/" if is_dir else rel).include
            if decision is not None:
                return decision
        return False


async def _spec(env: ExecutionEnvironment, directory: str, names: set[str], extra: Sequence[str] = ()) -> Any:
    lines: list[str] = list(extra)
    for name in IGNORE_FILES:
        if name in names:
            try:
                data = await env.read_bytes(os.path.join(directory, name))
            except OSError:
                continue
            lines.extend(data.decode("utf-8", "replace").splitlines())
    if not lines:
        return None
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(lines)


async def _names(env: ExecutionEnvironment, directory: str) -> set[str]:
    try:
        return {e.name for e in await env.list_dir(directory)}
    except OSError:
        return set()


async def ignores_above(env: ExecutionEnvironment, root: str) -> Ignores:
    """The rules from the directories above ``root``, up to the repository's top (the
    first directory holding ``.git``) or the file system's root. None of them apply
    when they ignore ``root`` itself: the model asked to look there."""
    if ".git" in await _names(env, root):
        return Ignores()  # root is a repository's top: nothing above it applies
    chain = []
    current = os.path.dirname(root)
    while True:
        names = await _names(env, current)
        chain.append((current, names))
        if ".git" in names or os.path.dirname(current) == current:
            break
        current = os.path.dirname(current)
    ignores = Ignores()
    for directory, names in reversed(chain):
        extra = await _exclude_file(env, directory) if ".git" in names else []
        ignores = ignores.inside(directory, await _spec(env, directory, names, extra))
    # Asked to look inside an ignored directory: look, with the rules found inside it.
    return Ignores() if ignores.ignored(root, True) else ignores


async def _exclude_file(env: ExecutionEnvironment, top: str) -> list[str]:
    try:
        data = await env.read_bytes(os.path.join(top, ".git", "info", "exclude"))
    except OSError:
        return []
    return data.decode("utf-8", "replace").splitlines()


async def walk(
    env: ExecutionEnvironment, root: str, *, wanted: Callable[[str], bool] | None = None
) -> AsyncIterator[Found]:
    """Every entry under ``root`` (a directory), depth first, names in sorted order.

    A file the ignore rules exclude is still found when ``wanted`` (the model's glob)
    matches its path, as ripgrep lets a ``--glob`` override them; an ignored directory
    is never entered."""
    ignores = await ignores_above(env, root)
    async for found in _visit(env, root, "", ignores, wanted, top=True):
        yield found


async def _visit(
    env: ExecutionEnvironment, directory: str, prefix: str, ignores: Ignores,
    wanted: Callable[[str], bool] | None, top: bool = False,
) -> AsyncIterator[Found]:
    try:
        entries = await env.list_dir(directory)
    except OSError:
        if top:
            raise
        return  # an unreadable directory deep down: skipped, as ripgrep does
    names = {e.name for e in entries}
    extra = await _exclude_file(env, directory) if ".git" in names else []
    ignores = ignores.inside(directory, await _spec(env, directory, names, extra))
    for entry in sorted(entries, key=lambda e: e.name):
        if entry.name == ".git" or entry.kind is None:
            continue
        full = os.path.join(directory, entry.name)
        is_dir = entry.kind == "directory"
        path = prefix + entry.name
        if ignores.ignored(full, is_dir) and (is_dir or wanted is None or not wanted(path)):
            continue
        found = Found(path, full, is_dir, entry.is_link)
        yield found
        if is_dir and not entry.is_link:
            async for inner in _visit(env, full, path + "/", ignores, wanted):
                yield inner


# ---------------------------------------------------------------- globs


def _translate(pattern: str) -> str:
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                i += 2
                if pattern.startswith("/", i):  # "**/": any directories, or none
                    out.append("(?:.*/)?")
                    i += 1
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^", "]") else i + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
                i = end
        elif c == "{":
            end = pattern.find("}", i)
            if end == -1:
                out.append(re.escape(c))
            else:
                options = pattern[i + 1 : end].split(",")
                out.append("(?:" + "|".join(_translate(o) for o in options) + ")")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def glob_matcher(pattern: str, *, anchored: bool = False, ignore_case: bool = False) -> Callable[[str], bool]:
    """A test for "/"-separated relative paths. A pattern without "/" matches the last
    part of the path (``*.py`` finds Python files at any depth); one with "/" matches the
    whole path, starting at any directory unless it starts with "/" or ``anchored`` is
    set (``src/**/*.ts``). A leading "!" inverts it."""
    negate = pattern.startswith("!")
    if negate:
        pattern = pattern[1:]
    flags = re.S | (re.I if ignore_case else 0)
    if "/" not in pattern.rstrip("/"):
        regex = re.compile(_translate(pattern.rstrip("/")), flags)
        test = lambda path: regex.fullmatch(path.rsplit("/", 1)[-1]) is not None  # noqa: E731
    else:
        anchored = anchored or pattern.startswith("/")
        body = _translate(pattern.lstrip("/").rstrip("/"))
        regex = re.compile(body if anchored else f"(?:.*/)?{body}", flags)
        test = lambda path: regex.fullmatch(path) is not None  # noqa: E731
    return (lambda path: not test(path)) if negate else test
