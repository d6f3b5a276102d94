"""Prompt templates: Markdown files that ``/name args`` expands into a full prompt.

The file name without ``.md`` is the command name. Where templates come from, first
found wins a name (later ones are reported as collisions):

1. ``prompts`` paths in the project's ``.pi/settings.json`` (folders searched deeply);
2. ``.pi/prompts/*.md``;
3. ``prompts`` paths in the agent dir's ``settings.json``;
4. ``<agent dir>/prompts/*.md``;
4b. the prompt templates of pi packages (``packages`` in settings.json), in settings
   order (:mod:`pi_plugins.packages.configured`);
5. ``--prompt-template`` paths (``ctx.options.prompt_template_paths``), loaded even with
   ``--no-prompt-templates``, which turns 1-4 off;
6. paths other plugins return from ``resources_discover`` as ``("prompt", path)``.

Frontmatter (optional): ``description`` (else the body's first non-empty line, cut to
60 characters) and ``argument-hint`` (shown when completing). Arguments follow the
command, split at whitespace with pi 1.6's quoting (:func:`parse_args`): ``$1``, ``$2``…
are single arguments (empty when missing), ``$@`` and ``$ARGUMENTS`` all of them joined by
spaces, ``${@:N}`` those from the Nth on, ``${@:N:L}`` L of them from the Nth, and
``${1:-text}`` / ``${@:-text}`` the value or, when it is empty, the text. Substitution is
one pass: an argument that itself contains ``$1`` stays as typed.

Expansion runs in the ``input`` chain, ``trylast``, so the user's own input hooks see
the raw text first. An unknown ``/name`` is left as it is, and ``/skill:…`` is left to
the skills plugin whichever of the two runs first.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import attrs

from pi_core import hookimpl
from pi_core.protocol.records import field, record
from pi_plugins.resources import (
    SKILL_COMMAND_PREFIX,
    Gatherer,
    Problem,
    agent_dir_of,
    cwd_of,
    discovered_paths,
    is_dir,
    is_file,
    package_resources,
    per_run,
    project_trusted,
    report,
    resolve_path,
    settings_entries,
    settings_filter,
    split_command,
    visible_entries,
)

DESCRIPTION_FROM_BODY_MAX = 60
_PLACEHOLDER = (  # compiled by ``re`` on first use: most runs expand no template
    r"\$\{(\d+|@|ARGUMENTS):-([^}]*)\}|\$\{@:(\d+)(?::(\d+))?\}|\$(\d+)|\$ARGUMENTS|\$@"
)


@record(frozen=True)
class Template:
    name: str
    description: str
    content: str
    path: Path
    argument_hint: str | None = None
    source: str = "user"  # project, user, settings, package, cli, plugin


@record
class Templates:
    """The templates of a run, in precedence order, and what was wrong on the way."""

    templates: list[Template] = field(factory=list)
    problems: list[Problem] = field(factory=list)
    by_name: dict[str, Template] = field(factory=dict, repr=False)

    def get(self, name: str) -> Template | None:
        return self.by_name.get(name)


# ---------------------------------------------------------------- arguments


def _closing_quote(text: str, start: int) -> tuple[str, int] | None:
    """The quoted text opened at ``start`` and the index past its closing quote, or None
    when the quote is never closed. ``\\`` before the same quote keeps that quote."""
    quote, i, out = text[start], start + 1, []
    while i < len(text):
        char = text[i]
        if char == "\\" and text[i + 1 : i + 2] == quote:
            out.append(quote)
            i += 2
        elif char == quote:
            return "".join(out), i + 1
        else:
            out.append(char)
            i += 1
    return None


def parse_args(text: str) -> list[str]:
    """Split at whitespace, as pi 1.6 does: a quote groups words only at the start of an
    argument (``doesn't`` stays a word), ``""`` is an empty argument, a quote never closed
    is plain text, and other backslashes stay as typed."""
    args: list[str] = []
    current: list[str] = []
    started = False
    i = 0
    while i < len(text):
        char = text[i]
        if char in "\"'" and not started:
            started = True
            quoted = _closing_quote(text, i)
            if quoted is not None:
                current.append(quoted[0])
                i = quoted[1]
                continue
            current.append(char)  # never closed: the quote is text
        elif char.isspace():
            if started:
                args.append("".join(current))
                current, started = [], False
        else:
            current.append(char)
            started = True
        i += 1
    if started:
        args.append("".join(current))
    return args


def substitute(content: str, args: list[str]) -> str:
    """Fill ``$1``, ``$@``, ``$ARGUMENTS``, ``${@:N}``, ``${@:N:L}`` and the defaults
    ``${1:-x}``, ``${@:-x}`` (``x`` when the value is empty) in one pass."""
    joined = " ".join(args)

    def fill(match: re.Match) -> str:
        target, default, start, length, position = match.groups()
        if target is not None:
            if target in ("@", "ARGUMENTS"):
                value = joined
            else:
                index = int(target) - 1
                value = args[index] if 0 <= index < len(args) else ""
            return value or default
        if position is not None:
            index = int(position) - 1
            return args[index] if 0 <= index < len(args) else ""
        if start is not None:
            first = max(int(start) - 1, 0)
            chosen = args[first:] if length is None else args[first : first + int(length)]
            return " ".join(chosen)
        return joined

    return re.sub(_PLACEHOLDER, fill, content)


# ---------------------------------------------------------------- reading templates


def read_template(path: Path, source: str) -> tuple[Template | None, list[Problem]]:
    from pi_plugins.frontmatter import FrontmatterError, parse_frontmatter

    where = str(path)
    try:
        meta, body = parse_frontmatter(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        return None, [Problem(where, f"cannot be read ({exc}); template not loaded", "error")]
    except FrontmatterError as exc:
        return None, [Problem(where, f"{exc}; template not loaded", "error")]
    problems = []
    description = meta.get("description")
    if description is not None and not isinstance(description, str):
        problems.append(Problem(where, "description must be text; using the first line instead"))
        description = None
    if not description:
        first = next((line.strip() for line in body.splitlines() if line.strip()), "")
        description = first[:DESCRIPTION_FROM_BODY_MAX] + ("..." if len(first) > DESCRIPTION_FROM_BODY_MAX else "")
    hint = meta.get("argument-hint")
    template = Template(
        name=path.name[: -len(".md")],
        description=description,  # as written, as pi keeps it
        content=body,
        path=path,
        argument_hint=str(hint) if hint not in (None, "") else None,
        source=source,
    )
    return template, problems


def template_files(folder: Path, deep: bool) -> list[Path]:
    """The ``.md`` files in ``folder`` (and below it when ``deep``), in name order."""
    found = []
    for entry in visible_entries(folder):
        if is_dir(entry):
            if deep:
                found += template_files(Path(entry.path), True)
        elif entry.name.endswith(".md") and is_file(entry):
            found.append(Path(entry.path))
    return found


async def find_templates(ctx: Any) -> Templates:
    """Every template of this run, in precedence order (see the module docstring)."""
    options = ctx.options
    cwd, home = cwd_of(ctx), agent_dir_of(ctx)
    found = Templates()
    # The option says whether a folder's subfolders count (settings folders: yes).
    gather = Gatherer("prompt template", read_template, template_files, found, found.templates,
                      shown=lambda name: "/" + name, noun="template")
    packages = await package_resources(ctx)
    for resource in packages.temporary("prompts") if packages else ():  # -e packages first, as pi
        gather.add_file(resource.path, "package")
    if options.prompt_templates:
        scopes = (("project", cwd / ".pi" / "prompts"), ("user", home / "prompts"))
        for scope, folder in scopes if project_trusted(ctx) else scopes[1:]:
            paths, problems = settings_entries(ctx, "prompts", scope)
            found.problems += problems
            patterns = settings_filter(ctx, "prompts", scope)
            for path in paths:
                gather.add_path(path, "settings", True, patterns.listed if patterns else None)
            gather.add_folder(folder, scope, False, patterns.discovered if patterns else None)
        for resource in packages.enabled("prompts") if packages else ():
            gather.add_file(resource.path, "package")
    for path in options.prompt_template_paths:
        gather.add_path(resolve_path(path, cwd), "cli", False)
    for path in (await discovered_paths(ctx))["prompt"]:
        gather.add_path(path, "plugin", False)
    return found


@per_run
async def load(ctx: Any) -> Templates:
    """This run's prompt templates (found once per run; problems reported then)."""
    templates = await find_templates(ctx)
    report(ctx, "prompt templates", templates.problems)
    return templates


async def expand(text: str, ctx: Any) -> str | None:
    """The expansion of ``/name args``, or ``None`` when no template has that name."""
    command = None if text.startswith(SKILL_COMMAND_PREFIX) else split_command(text, "/")
    if command is None:
        return None
    name, args = command
    template = (await load(ctx)).get(name)
    if template is None:
        return None
    return substitute(template.content, parse_args(args))


# ---------------------------------------------------------------- hooks


@hookimpl(trylast=True)  # resources_discover fires after every other session_start
async def session_start(event, ctx):
    from pi_plugins.resources import on_session_start

    await on_session_start(event, ctx)


@hookimpl(trylast=True)
async def input(event, ctx):
    expanded = await expand(event.text, ctx)
    return None if expanded is None else attrs.evolve(event, text=expanded)


@hookimpl
async def register_commands(ctx):
    from pi_core.protocol.commands import Command
    from pi_plugins.resources import source_info

    return [
        Command(name=t.name, description=t.description, argument_hint=t.argument_hint,
                source="prompt", source_info=source_info(t.path, t.source, ctx))
        for t in (await load(ctx)).templates
    ]
