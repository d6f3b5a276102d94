"""The system prompt: a short base prompt of our own that names the tools the model
actually has, the user's appended text, the sections of the other resource plugins,
then the date and the working directory::

    base prompt (or --system-prompt / SYSTEM.md)
    appended prompt (--append-system-prompt / APPEND_SYSTEM.md)
    project context (pi_plugins.context_files)
    skills (pi_plugins.skills)
    Current date: YYYY-MM-DD
    Current working directory: /path

How the order is kept: this plugin composes the whole prompt afresh for every prompt
in ``before_agent_start``, throwing away what it was given, and takes the context and
skills sections from those plugins (``section(ctx)``) when they are loaded, in the
order of :data:`SECTION_PLUGINS`. So the order does not depend on load order, which
entry points do not keep (setuptools writes them sorted by name).

Each section plugin also has its own ``before_agent_start`` that adds its section with
:func:`add_section`: before the sections that follow it and the date/cwd footer, and
not at all when the section is already there. When this plugin ran first, those are no-ops; when it runs after them it
recomposes anyway; and an agent composed without this plugin still gets its context
files and skills, added to whatever base prompt the harness passed in.

All three handlers are ``tryfirst``, so every other plugin's ``before_agent_start``
sees the complete prompt and may change or replace it, as pi's extensions do.

``--system-prompt`` and ``--append-system-prompt`` take text or the path of a file to
read; without them ``.pi/SYSTEM.md`` (else ``<agent dir>/SYSTEM.md``) replaces the base
and ``.pi/APPEND_SYSTEM.md`` (else the agent dir's) is appended.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import attrs

from pi_core import hookimpl
from pi_core.protocol.records import field, record
from pi_plugins.resources import Problem, agent_dir_of, cwd_of, per_run, project_trusted, report

#: The plugins whose sections the prompt holds, in the order they appear.
SECTION_PLUGINS = {"pi_plugins.context_files": "project_context", "pi_plugins.skills": "skills"}

FOOTER = "Current date: {date}\nCurrent working directory: {cwd}"
_FOOTER_AT_END = re.compile(r"\n*Current date: \d{4}-\d{2}-\d{2}\nCurrent working directory: [^\n]*\Z")

INTRO = (
    "You are a coding assistant working inside pi, a coding-agent harness. You help the "
    "user with their software project: you read code, run commands, change files and "
    "say plainly what you did."
)


def today() -> str:
    import datetime

    return datetime.date.today().isoformat()


def footer(cwd: Path | str) -> str:
    return FOOTER.format(date=today(), cwd=str(cwd).replace("\\", "/"))


def _paragraph(prompt: str, heading: str) -> int:
    """Where a paragraph starting with ``heading`` begins in ``prompt``, or -1."""
    if prompt.startswith(heading):
        return 0
    index = prompt.find(f"\n\n{heading}")
    return index if index < 0 else index + 2


def add_section(prompt: str, section: str, before: tuple[str, ...] = ()) -> str:
    """``prompt`` with ``section`` added as its own paragraph: before the first paragraph
    that starts with one of ``before`` (the headings of sections that come later), else
    before the date/cwd footer, else at the end. A section already there is not added
    twice."""
    section = section.strip("\n")
    if not section or section in prompt:
        return prompt
    starts = [i for i in (_paragraph(prompt, h) for h in before) if i >= 0]
    if starts:
        cut = min(starts)
    else:
        match = _FOOTER_AT_END.search(prompt)
        cut = len(prompt) if match is None else match.start()
    head, tail = prompt[:cut].rstrip("\n"), prompt[cut:].lstrip("\n")
    return "\n\n".join(part for part in (head, section, tail) if part)


# ---------------------------------------------------------------- the base prompt


def _summary(description: str) -> str:
    """A tool's description cut to its first line, for the tool list."""
    for line in description.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= 160 else line[:157].rstrip() + "..."
    return ""


def active_tools(ctx: Any) -> list | None:
    """The tools the model is offered, or ``None`` when not known yet (no agent, or its
    tools not collected)."""
    agent = getattr(ctx, "agent", None)
    if agent is None or agent.tools is None:
        return None
    return agent.active_tools()


def guidelines(names: set[str]) -> list[str]:
    """How to work, worded for the tools at hand."""
    rules = []
    explorers = [n for n in ("grep", "find", "ls") if n in names]
    if "bash" in names and explorers:
        rules.append(
            f"Explore files with {', '.join(explorers)} rather than bash: they are quicker "
            "and skip what .gitignore hides."
        )
    elif "bash" in names:
        rules.append("Explore files with bash (ls, rg, find).")
    if "read" in names:
        rules.append("Read a file before you change it or say what is in it.")
    if "edit" in names:
        rules.append("Change existing files with edit, in small exact replacements.")
    if "write" in names:
        rules.append("Use write for new files or complete rewrites only.")
    rules.append("Keep answers short; give file paths in full when you mention them.")
    return rules


def base_prompt(tools: list | None) -> str:
    """Our base prompt: who the model is, its tools, how to work."""
    parts = [INTRO]
    if tools is not None:
        if tools:
            lines = [f"- {t.name}: {_snippet(t)}" if _snippet(t) else f"- {t.name}" for t in tools]
            parts.append("Tools you can call:\n" + "\n".join(lines))
        else:
            parts.append("You have no tools in this session: answer from the conversation alone.")
    parts.append("How to work:\n" + "\n".join(f"- {rule}" for rule in rules_for(tools)))
    return "\n\n".join(parts)


def rules_for(tools: list | None) -> list[str]:
    """The "How to work" rules: ours for the tools at hand, then each tool's own
    (``prompt_guidelines``, once each) before the last."""
    rules = guidelines({t.name for t in tools} if tools else set())
    for tool in tools or ():
        for rule in getattr(tool, "prompt_guidelines", None) or ():
            if rule and rule not in rules:
                rules.insert(len(rules) - 1, rule)
    return rules


def _snippet(tool: Any) -> str:
    """The tool's line in the tool list: its ``prompt_snippet``, else its description's
    first line."""
    snippet = getattr(tool, "prompt_snippet", None)
    return " ".join(snippet.split()) if snippet else _summary(tool.description)


# ---------------------------------------------------------------- user-given prompts


@record
class PromptTexts:
    """What the user gave to replace or extend the base prompt for this run."""

    custom: str | None = None
    append: list[str] = field(factory=list)
    problems: list[Problem] = field(factory=list)


def text_or_file(value: str, cwd: Path, what: str, problems: list[Problem]) -> str:
    """``value`` itself, or the content of the file it names (as pi does)."""
    if "\n" in value or len(value) > 4096:
        return value
    path = Path(value).expanduser()
    path = path if path.is_absolute() else cwd / path
    try:
        if not path.is_file():
            return value
    except OSError:  # not a possible path (too long…)
        return value
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(Problem(str(path), f"cannot read the {what} file ({exc}); using the text itself", "error"))
        return value


def _first_file(paths: list[Path]) -> Path | None:
    return next((p for p in paths if p.is_file()), None)


@per_run
async def prompt_texts(ctx: Any) -> PromptTexts:
    """The custom and appended prompts of this run (files read once per run)."""
    texts = PromptTexts()
    cwd, home = cwd_of(ctx), agent_dir_of(ctx)
    options = ctx.options
    project = [cwd / ".pi"] if project_trusted(ctx) else []  # the project's files need trust
    custom = options.system_prompt or _first_file([p / "SYSTEM.md" for p in [*project, home]])
    if custom:
        texts.custom = text_or_file(str(custom), cwd, "system prompt", texts.problems)
    appends = [a for a in options.append_system_prompt if a] or [
        p for p in [_first_file([p / "APPEND_SYSTEM.md" for p in [*project, home]])] if p
    ]
    texts.append = [text_or_file(str(a), cwd, "appended system prompt", texts.problems) for a in appends]
    report(ctx, "system prompt", texts.problems)
    return texts


async def sections(ctx: Any) -> list[str]:
    """The sections of the loaded :data:`SECTION_PLUGINS`, in that order; a plugin that
    fails is reported and left out."""
    return [text for _name, text in await named_sections(ctx)]


async def named_sections(ctx: Any) -> list[tuple[str, str]]:
    """:func:`sections` with the name each has in pi 1.6's system message."""
    plugins = getattr(ctx, "plugins", None)
    if plugins is None:
        return []
    loaded = {getattr(info.plugin, "__name__", None): info.name for info in plugins.infos}
    found = []
    for module_name in SECTION_PLUGINS:
        if module_name not in loaded:
            continue
        try:
            text = await sys.modules[module_name].section(ctx)
        except Exception as exc:
            plugins.report(loaded[module_name], "before_agent_start", exc)
            continue
        if text:
            found.append((SECTION_PLUGINS[module_name], text.strip("\n")))
    return found


async def build(ctx: Any) -> str:
    """The whole prompt: base (or custom), appended text, sections, date and cwd."""
    return "\n\n".join(text for _name, text in await named_parts(ctx))


async def named_parts(ctx: Any) -> list[tuple[str, str]]:
    """The prompt's non-empty parts in order, each under its name in pi 1.6's system
    message (``preamble``, ``addendum``, ``project_context``, ``skills``, ``cwd``)."""
    texts = await prompt_texts(ctx)
    base = texts.custom if texts.custom is not None else base_prompt(active_tools(ctx))
    appended = "\n\n".join(a.strip("\n") for a in texts.append if a.strip())
    parts = [("preamble", base), ("addendum", appended), *await named_sections(ctx), ("cwd", footer(cwd_of(ctx)))]
    return [(name, text) for name, text in parts if text]


@hookimpl(tryfirst=True)
async def before_agent_start(event, ctx):
    return attrs.evolve(event, system_prompt=await build(ctx))


# ---------------------------------------------------------------- ctx.system_prompt_options()


@record
class SystemPromptOptions:
    """pi 1.6's ``BuildSystemPromptOptions``: what the prompt is built from this run."""

    cwd: str
    custom_prompt: str | None = None  # --system-prompt / SYSTEM.md
    append_system_prompt: list[str] = field(factory=list)  # --append-system-prompt / APPEND_SYSTEM.md
    selected_tools: list[str] = field(factory=list)  # the tools the model is offered
    tool_snippets: dict[str, str] = field(factory=dict)  # each one's line in the tool list
    prompt_guidelines: list[str] = field(factory=list)  # the "How to work" rules
    context_files: list = field(factory=list)  # AGENTS.md and the like (``path``, ``content``)
    skills: list = field(factory=list)  # the skills the prompt lists


async def options_of(ctx: Any) -> SystemPromptOptions:
    """This run's :class:`SystemPromptOptions` (the loaded section plugins' files and skills)."""
    texts = await prompt_texts(ctx)
    tools = active_tools(ctx) or []
    loaded = {getattr(info.plugin, "__name__", None) for info in ctx.plugins.infos}
    files: list = []
    skills: list = []
    if "pi_plugins.context_files" in loaded:
        files = (await sys.modules["pi_plugins.context_files"].load(ctx)).files
    if "pi_plugins.skills" in loaded:
        skills = (await sys.modules["pi_plugins.skills"].load(ctx)).skills
    return SystemPromptOptions(
        cwd=str(cwd_of(ctx)), custom_prompt=texts.custom, append_system_prompt=list(texts.append),
        selected_tools=[t.name for t in tools], tool_snippets={t.name: _snippet(t) for t in tools},
        prompt_guidelines=rules_for(tools),
        context_files=list(files), skills=list(skills))


@hookimpl
async def system_prompt_options(ctx):
    return await options_of(ctx)
