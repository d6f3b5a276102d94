"""Skills (the Agent Skills standard): instructions in a ``SKILL.md`` the model reads when
a task matches, listed in the system prompt by name, description and location.

Where skills come from, first found wins a name (later ones are reported as collisions):

1. ``skills`` paths in the project's ``.pi/settings.json``;
2. ``.pi/skills/``, then ``.agents/skills/`` in the cwd and each parent directory up
   to the git repository's root (the filesystem root outside a repository);
3. ``skills`` paths in the agent dir's ``settings.json``;
4. ``<agent dir>/skills/``, then ``~/.agents/skills/``;
4b. the skills of pi packages (``packages`` in settings.json, the project's first), in
   settings order (:mod:`pi_plugins.packages.configured`);
5. ``--skill`` paths (``ctx.options.skill_paths``), loaded even with ``--no-skills``,
   which turns 1-4 off;
6. paths other plugins return from ``resources_discover`` as ``("skill", path)``.

In a folder, a directory holding ``SKILL.md`` is one skill (nothing below it is
searched); other directories are searched for one. Top-level ``.md`` files are skills
too in pi's own folders (``.pi/skills``, the agent dir's, settings and ``--skill``
folders), not in ``.agents/skills``. Hidden entries and ``node_modules`` are skipped.

Frontmatter: ``description`` is required (a skill without one is not loaded);
``name`` defaults to the folder's name and should follow the standard (lowercase
letters, digits and single hyphens, at most 64 characters, the same as its folder);
a description over 1024 characters is reported. Those problems are reported but the
skill still loads. ``disable-model-invocation: true`` leaves a skill out of the system
prompt; the user can still call it.

``/skill:name args`` (in the ``input`` chain, ``trylast`` so the user's own input hooks
see the raw text first) becomes the skill's instructions in a ``<skill>`` block, then
the arguments. The skills :func:`section` of the system prompt (placed by the
system-prompt plugin, or by this plugin's own ``before_agent_start`` when no composer
did; see :mod:`pi_plugins.system_prompt`) is there only when the model has the ``read``
tool to open the files with.
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
    same_file_key,
    settings_entries,
    settings_filter,
    split_command,
    visible_entries,
)

NAME_MAX = 64
DESCRIPTION_MAX = 1024
SKILL_FILE = "SKILL.md"
HEADING = "# Skills"
_NAME = re.compile(r"[a-z0-9-]+")


@record(frozen=True)
class Skill:
    name: str
    description: str
    path: Path  # the SKILL.md (or the single .md file)
    base_dir: Path  # where the skill's relative paths start
    disable_model_invocation: bool = False
    source: str = "user"  # project, user, settings, package, cli, plugin


@record
class Skills:
    """The skills of a run, in precedence order, and what was wrong on the way."""

    skills: list[Skill] = field(factory=list)
    problems: list[Problem] = field(factory=list)
    by_name: dict[str, Skill] = field(factory=dict, repr=False)

    def get(self, name: str) -> Skill | None:
        return self.by_name.get(name)

    @property
    def visible(self) -> list[Skill]:
        """The skills the model is told about."""
        return [s for s in self.skills if not s.disable_model_invocation]


# ---------------------------------------------------------------- reading one skill


def name_problems(name: str, folder_name: str) -> list[str]:
    """What breaks the Agent Skills naming rules (empty when the name is fine)."""
    problems = []
    if name != folder_name:
        problems.append(f'name "{name}" does not match parent directory "{folder_name}"')
    if len(name) > NAME_MAX:
        problems.append(f"name is longer than {NAME_MAX} characters ({len(name)})")
    if not _NAME.fullmatch(name):
        problems.append("name may only use lowercase letters a-z, digits 0-9 and hyphens")
    if name.startswith("-") or name.endswith("-"):
        problems.append("name must not start or end with a hyphen")
    if "--" in name:
        problems.append("name must not contain two hyphens in a row")
    return problems


def read_skill(path: Path, source: str) -> tuple[Skill | None, list[Problem]]:
    """One skill file: the skill (``None`` when it cannot be used) and its problems."""
    from pi_plugins.frontmatter import FrontmatterError, parse_frontmatter

    where = str(path)
    try:
        meta, _ = parse_frontmatter(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        return None, [Problem(where, f"cannot be read ({exc}); skill not loaded", "error")]
    except FrontmatterError as exc:
        return None, [Problem(where, f"{exc}; skill not loaded", "error")]
    problems: list[Problem] = []
    folder = path.parent
    description = meta.get("description")
    if description is not None and not isinstance(description, str):
        return None, [Problem(where, "description must be text; skill not loaded", "error")]
    if not description or not description.strip():
        return None, [Problem(where, "description is required", "error")]
    if len(description) > DESCRIPTION_MAX:
        problems.append(Problem(where, f"description exceeds {DESCRIPTION_MAX} characters ({len(description)})"))
    name = meta.get("name")
    if name is not None and not isinstance(name, str):
        problems.append(Problem(where, f"name must be text; using the folder's name {folder.name!r}"))
        name = None
    name = name or folder.name
    problems += [Problem(where, message) for message in name_problems(name, folder.name)]
    skill = Skill(
        name=name,
        description=description,  # as written: pi keeps a block scalar's final newline
        path=path,
        base_dir=folder,
        disable_model_invocation=meta.get("disable-model-invocation") is True,
        source=source,
    )
    return skill, problems


# ---------------------------------------------------------------- finding skill files


def skill_files(folder: Path, root_files: bool, _seen: set | None = None) -> list[Path]:
    """The skill files under ``folder``: a ``SKILL.md`` ends the search of its branch;
    top-level ``.md`` files count when ``root_files``."""
    seen = _seen if _seen is not None else set()
    key = same_file_key(folder)
    if key in seen:  # a symlink loop
        return []
    seen.add(key)
    if is_file(folder / SKILL_FILE):
        return [folder / SKILL_FILE]
    found: list[Path] = []
    for entry in visible_entries(folder):
        path = Path(entry.path)
        if is_dir(entry):
            found += skill_files(path, False, seen)
        elif root_files and entry.name.endswith(".md") and is_file(entry):
            found.append(path)
    return found


def agents_skill_dirs(cwd: Path) -> list[Path]:
    """``.agents/skills`` in the cwd and each parent up to the git root (or ``/``)."""
    dirs = []
    for folder in (cwd, *cwd.parents):
        dirs.append(folder / ".agents" / "skills")
        if (folder / ".git").exists():
            break
    return dirs


async def find_skills(ctx: Any) -> Skills:
    """Every skill of this run, in precedence order (see the module docstring)."""
    options = ctx.options
    cwd, home = cwd_of(ctx), agent_dir_of(ctx)
    user_agents = Path.home() / ".agents" / "skills"
    found = Skills()
    # The option says whether .md files at a folder's top are skills too (pi's own folders).
    gather = Gatherer("skill", read_skill, skill_files, found, found.skills)

    def add_settings(scope: str) -> Any:
        paths, problems = settings_entries(ctx, "skills", scope)
        found.problems += problems
        patterns = settings_filter(ctx, "skills", scope)
        for path in paths:
            gather.add_path(path, "settings", True, patterns.listed if patterns else None)
        return patterns

    def found_by_itself(patterns: Any, root: Path | None = None) -> Any:
        return None if patterns is None else (lambda path: patterns.discovered(path, root))

    packages = await package_resources(ctx)
    for resource in packages.temporary("skills") if packages else ():  # -e ones first (even --no-skills)
        gather.add_file(resource.path, "package")
    if options.skills:
        if project_trusted(ctx):  # the project's skills need the project trusted
            patterns = add_settings("project")
            gather.add_folder(cwd / ".pi" / "skills", "project", True, found_by_itself(patterns))
            for folder in agents_skill_dirs(cwd):
                if folder != user_agents:
                    gather.add_folder(folder, "project", False, found_by_itself(patterns, folder.parent))
        patterns = add_settings("user")
        gather.add_folder(home / "skills", "user", True, found_by_itself(patterns))
        gather.add_folder(user_agents, "user", False)
        for resource in packages.enabled("skills") if packages else ():
            gather.add_file(resource.path, "package")
    for path in options.skill_paths:
        gather.add_path(resolve_path(path, cwd), "cli", True)
    for path in (await discovered_paths(ctx))["skill"]:
        gather.add_path(path, "plugin", True)
    return found


@per_run
async def load(ctx: Any) -> Skills:
    """This run's skills (found once per run; problems reported then)."""
    skills = await find_skills(ctx)
    report(ctx, "skills", skills.problems)
    return skills


# ---------------------------------------------------------------- the prompt and /skill:


def _xml(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        .replace('"', "&quot;").replace("'", "&apos;")
    )


def format_skills(skills: list[Skill]) -> str:
    """The system-prompt section listing ``skills`` (empty when there are none)."""
    if not skills:
        return ""
    lines = [
        HEADING,
        "",
        "Skills are instructions for particular kinds of task, kept in files. When a task "
        "matches a skill's description, read the skill's file with the read tool before you "
        "begin, and follow it. Paths inside a skill are relative to the folder of its file: "
        "make them absolute before you use them in commands.",
        "",
        "<available_skills>",
    ]
    for skill in skills:
        lines += [
            "  <skill>",
            f"    <name>{_xml(skill.name)}</name>",
            f"    <description>{_xml(skill.description)}</description>",
            f"    <location>{_xml(str(skill.path))}</location>",
            "  </skill>",
        ]
    lines.append("</available_skills>")
    return "\n".join(lines)


def skill_block(skill: Skill, body: str, args: str) -> str:
    """What ``/skill:name args`` becomes: the instructions in a ``<skill>`` block (the
    shape pi writes, so sessions read the same in both), then the arguments."""
    block = (
        f'<skill name="{skill.name}" location="{skill.path}">\n'
        f"Paths in this skill are relative to {skill.base_dir}.\n\n{body}\n</skill>"
    )
    return f"{block}\n\n{args}" if args else block


async def expand(text: str, ctx: Any) -> str | None:
    """The expansion of ``/skill:name args``, or ``None`` when ``text`` is not a known
    skill command (or its file cannot be read any more, which is reported)."""
    from pi_plugins.frontmatter import split_frontmatter

    command = split_command(text, SKILL_COMMAND_PREFIX)
    if command is None:
        return None
    name, args = command
    skill = (await load(ctx)).get(name)
    if skill is None:
        return None
    try:
        content = skill.path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        report(ctx, "skills", [Problem(str(skill.path), f"cannot be read ({exc}); /skill:{name} not expanded", "error")])
        return None
    _, body = split_frontmatter(content)
    return skill_block(skill, body, args.strip())


# ---------------------------------------------------------------- hooks


@hookimpl(trylast=True)  # resources_discover fires after every other session_start
async def session_start(event, ctx):
    from pi_plugins.resources import on_session_start

    await on_session_start(event, ctx)


@hookimpl(trylast=True)
async def input(event, ctx):
    expanded = await expand(event.text, ctx)
    return None if expanded is None else attrs.evolve(event, text=expanded)


async def section(ctx: Any) -> str:
    """This run's section of the system prompt: the skills the model may use, when it
    has the read tool to open them (empty otherwise)."""
    from pi_plugins.system_prompt import active_tools

    tools = active_tools(ctx)
    if tools is not None and not any(t.name == "read" for t in tools):
        return ""
    return await listing(ctx)


@per_run
async def listing(ctx: Any) -> str:
    """The skills section, formatted once per run."""
    return format_skills((await load(ctx)).visible)


@hookimpl(tryfirst=True)
async def before_agent_start(event, ctx):
    from pi_plugins.system_prompt import add_section

    text = await section(ctx)
    if not text:
        return None
    return attrs.evolve(event, system_prompt=add_section(event.system_prompt, text))


@hookimpl
async def register_commands(ctx):
    """``/skill:name`` for every skill (also those hidden from the model), unless the
    ``enableSkillCommands`` setting is false."""
    from pi_core.protocol.commands import Command
    from pi_plugins.resources import source_info

    if ctx.settings.get("enableSkillCommands", True) is False:
        return None
    return [
        Command(name=f"skill:{s.name}", description=s.description, source="skill",
                source_info=source_info(s.path, s.source, ctx, s.base_dir))
        for s in (await load(ctx)).skills
    ]
