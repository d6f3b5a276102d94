"""npm's version ranges (node-semver's grammar), enough to pick the version npm would:
``1.2.3``, ``^1.2.3``, ``~1.2``, ``1.x``, ``*``, ``>=1 <2``, ``1.0.0 - 2.0.0``, ``a || b``;
a prerelease matches only a range naming a prerelease of the same version.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_VERSION = re.compile(r"^\s*[=v]*(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?\s*$")
_PARTIAL = re.compile(r"^[=v]*(\d+|[xX*])?(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")
_COMPARATOR = re.compile(r"^(<=|>=|<|>|=|\^|~>?)?\s*(.*)$")

Key = tuple  # (major, minor, patch, prerelease key)


def parse(version: str) -> Key | None:
    """A comparable key of an exact version, or ``None`` when it is not one."""
    match = _VERSION.match(version)
    if not match:
        return None
    major, minor, patch, pre = match.groups()
    return (int(major), int(minor), int(patch), _pre_key(pre))


def _pre_key(pre: str | None) -> tuple:
    if pre is None:
        return (1,)  # a release sorts after its prereleases
    parts = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))
    return (0, parts)


def _bound(parts: tuple, pre: str | None, lowest: bool = False) -> Key:
    """A version as a bound: itself, or (``lowest``) below all its prereleases."""
    major, minor, patch = parts
    return (major, minor, patch, (0, ()) if lowest else _pre_key(pre))


def _comparators(text: str) -> list[tuple[str, Key]] | None:
    """One comparator written in the range grammar, as plain (op, version) pairs."""
    match = _COMPARATOR.match(text.strip())
    assert match is not None  # the pattern matches every text
    op, rest = match.group(1) or "", match.group(2).strip()
    partial = _PARTIAL.match(rest)
    if not partial:
        return None
    raw = partial.group(1, 2, 3)
    pre = partial.group(4)
    wild = [p is None or p in "xX*" for p in raw]
    nums = [0 if w else int(p) for p, w in zip(raw, wild, strict=True)]
    if wild[0]:
        return [(">=", (0, 0, 0, (0, ())))] if op in ("", "=", ">=", "^", "~", "~>", "<=") else \
            [("<", (0, 0, 0, (0, ())))]
    major, minor, patch = nums
    low = _bound((major, minor, patch), pre, lowest=any(wild))
    if op in ("", "="):
        if wild[1]:
            return [(">=", low), ("<", _bound((major + 1, 0, 0), None, True))]
        if wild[2]:
            return [(">=", low), ("<", _bound((major, minor + 1, 0), None, True))]
        return [("=", low)]
    if op in ("~", "~>"):
        upper = (major + 1, 0, 0) if wild[1] else (major, minor + 1, 0)
        return [(">=", low), ("<", _bound(upper, None, True))]
    if op == "^":
        if major > 0 or wild[1]:
            upper = (major + 1, 0, 0)
        elif minor > 0 or wild[2]:
            upper = (0, minor + 1, 0)
        else:
            upper = (0, 0, patch + 1)
        return [(">=", low), ("<", _bound(upper, None, True))]
    if op == ">" and (wild[1] or wild[2]):
        upper = (major + 1, 0, 0) if wild[1] else (major, minor + 1, 0)
        return [(">=", _bound(upper, None, True))]
    if op == "<=" and (wild[1] or wild[2]):
        upper = (major + 1, 0, 0) if wild[1] else (major, minor + 1, 0)
        return [("<", _bound(upper, None, True))]
    return [(op, low)]


def _sets(range_text: str) -> list[list[tuple[str, Key]]] | None:
    sets = []
    for alternative in range_text.split("||"):
        alternative = alternative.strip()
        hyphen = re.match(r"^(\S+)\s+-\s+(\S+)$", alternative)
        if hyphen:
            low = _comparators(hyphen.group(1))
            high = _comparators("<=" + hyphen.group(2))
            if low is None or high is None:
                return None
            sets.append([(">=", low[0][1]), *high])
            continue
        tokens = re.sub(r"(<=|>=|<|>|=|\^|~>?)\s+", r"\1", alternative).split() or ["*"]
        comparators: list[tuple[str, Key]] = []
        for token in tokens:
            parsed = _comparators(token)
            if parsed is None:
                return None
            comparators += parsed
        sets.append(comparators)
    return sets


def valid_range(range_text: str) -> bool:
    return _sets(range_text) is not None


def _holds(op: str, key: Key, bound: Key) -> bool:
    return {"=": key == bound, ">": key > bound, ">=": key >= bound,
            "<": key < bound, "<=": key <= bound}[op]


def satisfies(version: str, range_text: str) -> bool:
    key = parse(version)
    sets = _sets(range_text)
    if key is None or sets is None:
        return False
    for comparators in sets:
        if not all(_holds(op, key, bound) for op, bound in comparators):
            continue
        if key[3] == (1,):
            return True
        # A prerelease needs a comparator with a prerelease of the same major.minor.patch.
        if any(bound[3] != (1,) and bound[3] != (0, ()) and bound[:3] == key[:3] for _, bound in comparators):
            return True
    return False


def max_satisfying(versions: Iterable[str], range_text: str) -> str | None:
    matching = [v for v in versions if satisfies(v, range_text)]
    return max(matching, key=lambda v: parse(v) or (0,), default=None)
