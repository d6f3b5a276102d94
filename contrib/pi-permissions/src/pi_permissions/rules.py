"""The policy: rules from settings, and the verdict (allow, ask or deny) for one tool call.

A rule names a tool (a glob over tool names) and optionally a pattern: for ``bash`` a
glob over the command, for any tool with a ``path`` argument a glob over the path. The
strings ``"bash"``, ``"bash(git status*)"``, ``"edit(src/**)"``, ``"*(.env*)"`` are rules;
so is ``{"rule": "bash(rm -rf*)", "reason": "…"}``.

A call is looked at through its *subjects*: each part of a bash command (split at ``&&``,
``||``, ``;``, ``|``, ``&`` and newlines, plus the insides of ``$(…)`` and backticks), or
the path both as written and with symlinks resolved. Each subject gets the strongest
verdict among the rules it matches (deny over ask over allow), else the default; the call
gets the strongest verdict among its subjects. So ``git status && rm -rf x`` is not
allowed by ``bash(git status*)``, and a symlink does not hide ``.env``. Deny and ask rules
also see the whole command, so ``bash(*--force*)`` catches it anywhere.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from attrs import define, field

ACTIONS = ("allow", "ask", "deny")
STRENGTH = {"allow": 0, "ask": 1, "deny": 2}
#: Read-only built-in tools are allowed unless a rule says otherwise.
DEFAULT_ALLOW = ("read", "grep", "find", "ls")
#: Tools whose missing ``path`` means the working directory.
CWD_TOOLS = ("grep", "find", "ls")

_RULE = re.compile(r"^\s*([^()\s]+)\s*(?:\((.*)\)\s*)?$", re.S)
_SEPARATORS = re.compile(r"&&|\|\||;|\|&?|&|\n")
_SUBSTITUTION = re.compile(r"\$\(([^()]*)\)|`([^`]*)`|<\(([^()]*)\)")


@define(frozen=True)
class Rule:
    action: str
    tool: str
    pattern: str | None = None
    reason: str | None = None
    source: str = "settings"  # global, project or built-in

    def __str__(self) -> str:
        return self.tool + (f"({self.pattern})" if self.pattern is not None else "")


@define
class Verdict:
    action: str
    rule: Rule | None = None  # None: the default applied
    subject: str | None = None


@define
class Policy:
    rules: list[Rule] = field(factory=list)
    default: str = "ask"
    problems: list[str] = field(factory=list)

    def verdict(self, tool_name: str, arguments: dict, cwd: str) -> Verdict:
        """What the rules say about calling ``tool_name`` with ``arguments``."""
        rules = [r for r in self.rules if fnmatch.fnmatchcase(tool_name, r.tool)]
        kind, subjects, whole = subjects_of(tool_name, arguments, cwd)
        worst = None
        if whole is not None:  # deny and ask rules also judge the whole command
            for rule in rules:
                if rule.action != "allow" and rule.pattern is not None and _matches(kind, rule.pattern, [whole]):
                    worst = _stronger(worst, Verdict(rule.action, rule, whole[0]))
        for forms in subjects:
            worst = _stronger(worst, self._subject_verdict(rules, kind, forms))
        return worst or Verdict(self.default)

    def _subject_verdict(self, rules: list[Rule], kind: str, forms: list[tuple[str, ...]]) -> Verdict:
        best = None
        for rule in rules:
            if rule.pattern is None or _matches(kind, rule.pattern, forms):
                best = _stronger(best, Verdict(rule.action, rule, forms[0][0] if forms else None))
        return best or Verdict(self.default, None, forms[0][0] if forms else None)


def _stronger(a: Verdict | None, b: Verdict) -> Verdict:
    return b if a is None or STRENGTH[b.action] > STRENGTH[a.action] else a


# ---------------------------------------------------------------- settings


def parse_rule(raw: Any, action: str, source: str) -> Rule:
    """A rule from its settings form (``"tool(pattern)"`` or an object); ValueError if bad."""
    reason = None
    if isinstance(raw, dict):
        reason = raw.get("reason")
        if "rule" in raw:
            raw = raw["rule"]
        elif isinstance(raw.get("tool"), str):
            pattern = raw.get("pattern", raw.get("command", raw.get("path")))
            raw = raw["tool"] + (f"({pattern})" if isinstance(pattern, str) else "")
    if not isinstance(raw, str):
        raise ValueError(f"a rule is a string like 'bash(git *)' or an object, not {raw!r}")
    match = _RULE.match(raw)
    if match is None:
        raise ValueError(f"cannot read the rule {raw!r}: write 'tool' or 'tool(pattern)'")
    tool, pattern = match.group(1), match.group(2)
    if pattern is not None and not pattern.strip():
        raise ValueError(f"the rule {raw!r} has an empty pattern")
    return Rule(action, tool, pattern.strip() if pattern is not None else None,
                reason if isinstance(reason, str) else None, source)


def load_policy(settings: Any, key: str = "permissions") -> Policy:
    """The policy from the global and the project settings files, taken apart so both
    files' rules count (settings merging would let one list replace the other)."""
    policy = Policy()
    layers = [("global", getattr(settings, "global_data", None) or {}),
              ("project", getattr(settings, "project_data", None) or {})]
    if not any(isinstance(data.get(key), dict) for _, data in layers):  # e.g. Settings(dict)
        layers = [("settings", {key: settings.get(key)} if hasattr(settings, "get") else {})]
    for source, data in layers:
        section = data.get(key)
        if section is None:
            continue
        if not isinstance(section, dict):
            policy.problems.append(f"{source} settings: '{key}' must be an object")
            continue
        default = section.get("default")
        if default is not None:
            if default in ACTIONS:
                policy.default = default
            else:
                policy.problems.append(f"{source} settings: {key}.default must be allow, ask or deny, "
                                       f"not {default!r}")
        for action in ACTIONS:
            entries = section.get(action) or []
            if not isinstance(entries, list):
                policy.problems.append(f"{source} settings: {key}.{action} must be a list")
                continue
            for raw in entries:
                try:
                    policy.rules.append(parse_rule(raw, action, source))
                except ValueError as exc:
                    policy.problems.append(f"{source} settings: {key}.{action}: {exc}")
    policy.rules += [Rule("allow", name, source="built-in") for name in DEFAULT_ALLOW]
    return policy


# ---------------------------------------------------------------- subjects


def subjects_of(tool_name: str, arguments: dict, cwd: str):
    """(kind, subjects, whole): kind ``command``, ``path`` or ``none``; each subject is a
    list of forms a pattern may match; ``whole`` the full command for deny/ask rules."""
    command = arguments.get("command")
    if tool_name == "bash" and isinstance(command, str):
        return "command", [[(part,)] for part in command_parts(command)], (command.strip(),)
    path = arguments.get("path")
    if not isinstance(path, str) and tool_name in CWD_TOOLS:
        path = "."
    if isinstance(path, str):
        return "path", [[form] for form in path_forms(path, cwd)], None
    return "none", [[]], None


def command_parts(command: str) -> list[str]:
    """The simple commands of a command line (quotes are not parsed: splitting too much
    only makes a match less likely, never more)."""
    parts = []
    for match in _SUBSTITUTION.finditer(command):
        parts += command_parts(next(g for g in match.groups() if g is not None))
    outer = _SUBSTITUTION.sub(" ", command)
    for piece in _SEPARATORS.split(outer):
        piece = piece.strip().strip("(){} \t").strip()
        if piece:
            parts.append(piece)
    return parts or [command.strip()]


def path_forms(path: str, cwd: str) -> list[tuple[str, str | None, str]]:
    """The path as written and with symlinks resolved, each as (absolute, relative to
    the working directory or None when outside it, base name)."""
    absolute = os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))
    forms = []
    for candidate, base in ((absolute, os.path.normpath(cwd)),
                            (os.path.realpath(absolute), os.path.realpath(cwd))):
        relative = os.path.relpath(candidate, base)
        inside = relative != ".." and not relative.startswith(".." + os.sep)
        form = (candidate, relative if inside else None, os.path.basename(candidate))
        if form not in forms:
            forms.append(form)
    return forms


# ---------------------------------------------------------------- matching


def _matches(kind: str, pattern: str, forms: Iterable[tuple]) -> bool:
    if kind == "command":
        regex = _glob(pattern, crosses_slash=True)
        return any(regex.fullmatch(form[0]) for form in forms)
    if kind == "path":
        return any(path_matches(pattern, form) for form in forms)
    return False


def path_matches(pattern: str, form: tuple[str, str | None, str]) -> bool:
    """``/abs/**`` and ``~/x`` match the absolute path; a pattern without a slash matches
    the base name at any depth; others match the path relative to the working directory.
    ``**`` crosses folders, ``*`` and ``?`` do not; ``dir/**`` matches ``dir`` too."""
    absolute, relative, name = form
    pattern = pattern.rstrip("/") if pattern not in ("/",) else pattern
    if pattern.startswith(("/", "~")):
        target, pattern = absolute, os.path.expanduser(pattern)
    elif "/" not in pattern:
        target = name
    else:
        if relative is None:
            return False
        target, pattern = relative, pattern.removeprefix("./")
    regex = _glob(pattern, crosses_slash=False)
    if regex.fullmatch(target):
        return True
    return pattern.endswith("/**") and _glob(pattern[:-3], crosses_slash=False).fullmatch(target) is not None


@lru_cache(maxsize=512)
def _glob(pattern: str, crosses_slash: bool) -> re.Pattern:
    out, i = [], 0
    star = ".*" if crosses_slash else "[^/]*"
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i) and not crosses_slash:
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        out.append(star if c == "*" else ("." if crosses_slash else "[^/]") if c == "?" else re.escape(c))
        i += 1
    return re.compile("".join(out), re.S)
