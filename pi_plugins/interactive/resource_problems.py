"""What was wrong with the resources this start found, as pi's chat lists it:
``[Skill conflicts]`` (pi 0.73.1's name, as the skill checks are its; pi 1.6 says
``[Skill warnings]``), ``[Prompt conflicts]``, and pi 1.6's ``[Extension issues]`` and
``[Theme conflicts]``: each file with the way it was found (``auto (user)``), its problem
under it, and collisions grouped by name (the file that kept the name ✓, the ones skipped ✗).
Shown at start-up and after ``/reload``; ``-p`` mode reports the same problems as warnings.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pi_plugins.resources import Problem, source_info

#: (heading, [(text, style)]): one section of the listing.
Section = tuple[str, list[tuple[str, str]]]


async def gather(ctx: Any, themes: dict | None = None, theme_problems: Iterable[Any] = ()) -> list[Section]:
    """This run's problems with skills, prompt templates, plugins and themes (``themes``
    and ``theme_problems`` as :func:`pi_plugins.interactive.themes.load_themes` gave them)."""
    from pi_plugins import prompt_templates, skills

    sections: list[Section] = []
    found_skills = await skills.load(ctx)
    sources = {str(s.path): s.source for s in found_skills.skills}
    if found_skills.problems:
        sections.append(("Skill conflicts", format_problems(found_skills.problems, sources, ctx)))
    found_templates = await prompt_templates.load(ctx)
    sources = {str(t.path): t.source for t in found_templates.templates}
    if found_templates.problems:
        sections.append(("Prompt conflicts", format_problems(found_templates.problems, sources, ctx)))
    extension_problems = plugin_problems(getattr(ctx, "plugins", None))
    if extension_problems:
        sections.append(("Extension issues", format_problems(extension_problems, {}, ctx)))
    file_problems = [p for p in theme_problems if isinstance(p, Problem)]
    if file_problems:
        sources = {p.source: p.scope for p in (themes or {}).values() if p.scope in ("project", "user")}
        sections.append(("Theme conflicts", format_problems(file_problems, sources, ctx)))
    return sections


def plugin_problems(plugins: Any) -> list[Problem]:
    """The plugin files that could not load (a ``.py`` that raised on import, pi's
    TypeScript): the latest failure of each file still there and still not loaded."""
    if plugins is None:
        return []
    loaded = {info.location for info in plugins.infos}
    latest: dict[str, Problem] = {}
    for error in list(getattr(plugins, "errors", [])):
        path = getattr(error, "path", "")
        if not path or path in loaded or not os.path.exists(path):
            continue
        message = str(error.error).removeprefix(f"{path}: ")
        if error.hook == "load":
            message = f"Failed to load extension: {type(error.error).__name__}: {error.error}"
        latest.pop(path, None)
        latest[path] = Problem(path, message, "error")
    return list(latest.values())


def format_problems(problems: list[Problem], sources: dict[str, str], ctx: Any) -> list[tuple[str, str]]:
    """pi's lines: collisions grouped by name first, then each other problem."""
    lines: list[tuple[str, str]] = []
    collisions: dict[str, list[Problem]] = {}
    others = []
    for problem in problems:
        if problem.kind == "collision" and problem.name is not None and problem.winner is not None:
            collisions.setdefault(problem.name, []).append(problem)
        else:
            others.append(problem)
    for name, group in collisions.items():
        lines.append((f'  "{name}" collision:', "warning"))
        lines.append((f"    ✓ {_where(str(group[0].winner), sources, ctx)}", "dim"))
        lines += [(f"    ✗ {_where(p.path, sources, ctx)} (skipped)", "dim") for p in group]
    for problem in others:
        style = "error" if problem.kind == "error" else "warning"
        lines.append((f"  {_where(problem.path, sources, ctx)}", style))
        lines.append((f"    {problem.message}", style))
    return lines


def _where(path: str, sources: dict[str, str], ctx: Any) -> str:
    """The file as pi names it: how it was found, then its path (``~`` for the home)."""
    shown = _display_path(path)
    source = sources.get(path)
    if source is None:  # not loaded: the path alone, as pi
        return shown
    info = source_info(path, source, ctx)
    label = {"local": "path", "extension": "extension"}.get(info["source"], info["source"])
    scope = {"user": "user", "project": "project", "temporary": "temp"}.get(info.get("scope", ""))
    if info["source"] == "local" and scope != "temp":
        label, scope = scope or "path", None
    return f"{label} ({scope}) {shown}" if scope else f"{label} {shown}"


def _display_path(path: str) -> str:
    home = str(Path.home())
    return "~" + path[len(home):] if path.startswith(home + "/") else path
