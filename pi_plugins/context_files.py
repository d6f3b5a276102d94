"""Context files: the project's standing instructions (AGENTS.md, or CLAUDE.md) in the
system prompt.

At most one file per directory: AGENTS.override.md (pi 1.6), else AGENTS.md, else
CLAUDE.md (upper-case ``.MD`` spellings are accepted too); so an override replaces the
other files of its own directory only. The agent dir's file comes first (global instructions),
then those of every directory from the filesystem root down to the cwd, so the most
specific instructions come last. ``--no-context-files`` (``ctx.options.context_files``)
turns them off. An unreadable file is reported and the next candidate of that directory
is tried.

The system-prompt plugin places :func:`section` in the prompt; this plugin's own
``before_agent_start`` adds it when no composer did (see :mod:`pi_plugins.system_prompt`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from pi_core import hookimpl
from pi_core.protocol.records import field, record
from pi_plugins.resources import Problem, agent_dir_of, cwd_of, is_file, per_run, report

CANDIDATES = ("AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")
HEADING = "# Project Context"


@record(frozen=True)
class ContextFile:
    path: Path
    content: str


@record
class ContextFiles:
    files: list[ContextFile] = field(factory=list)
    problems: list[Problem] = field(factory=list)


def file_of_dir(folder: Path, problems: list[Problem]) -> ContextFile | None:
    """The folder's context file: the first candidate that exists and can be read."""
    for name in CANDIDATES:
        path = folder / name
        if not is_file(path):
            continue
        try:
            return ContextFile(path, path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(Problem(str(path), f"cannot be read ({exc}); skipped", "error"))
    return None


def find_context_files(cwd: Path, agent_dir: Path) -> ContextFiles:
    """The agent dir's context file, then one per directory from the root down to ``cwd``."""
    found = ContextFiles()
    seen: set[Path] = set()
    global_file = file_of_dir(agent_dir, found.problems)
    if global_file is not None:
        found.files.append(global_file)
        seen.add(global_file.path)
    ancestors = [cwd, *cwd.parents]
    for folder in reversed(ancestors):
        context_file = file_of_dir(folder, found.problems)
        if context_file is not None and context_file.path not in seen:
            found.files.append(context_file)
            seen.add(context_file.path)
    return found


@per_run
async def load(ctx: Any) -> ContextFiles:
    """This run's context files (found once per run; problems reported then)."""
    if not ctx.options.context_files:
        return ContextFiles()
    found = find_context_files(cwd_of(ctx), agent_dir_of(ctx))
    report(ctx, "context files", found.problems)
    return found


def format_context(files: list[ContextFile]) -> str:
    """The system-prompt section: each file under a heading naming its path."""
    if not files:
        return ""
    parts = [
        HEADING,
        "The user keeps these instructions for this machine and project. Follow them; "
        "where they disagree, the later (more specific) file wins.",
    ]
    for context_file in files:
        parts.append(f"## {context_file.path}\n\n{context_file.content.strip()}")
    return "\n\n".join(parts)


@per_run
async def section(ctx: Any) -> str:
    """This run's section of the system prompt (empty without context files), formatted
    once per run."""
    return format_context((await load(ctx)).files)


@hookimpl(trylast=True)  # resources_discover fires after every other session_start
async def session_start(event, ctx):
    from pi_plugins.resources import on_session_start

    await on_session_start(event, ctx)


@hookimpl(tryfirst=True)
async def before_agent_start(event, ctx):
    from pi_plugins.skills import HEADING as SKILLS_HEADING
    from pi_plugins.system_prompt import add_section

    text = await section(ctx)
    if not text:
        return None
    prompt = add_section(event.system_prompt, text, before=(SKILLS_HEADING,))
    return attrs.evolve(event, system_prompt=prompt)
