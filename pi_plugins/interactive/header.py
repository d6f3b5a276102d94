"""The chat's first block: pi's start-up header (version, key hints, what this start
loaded, and what went wrong on the way), or a plugin's header component; and, after an
update, what changed since the version last seen.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pi_core import __version__
from pi_plugins.interactive.blocks import Block, HeaderBlock

if TYPE_CHECKING:
    from pi_plugins.interactive.app import InteractiveApp

HINTS = [("escape", "interrupt"), ("ctrl+c/ctrl+d", "clear/exit"), ("/", "commands"),
         ("!", "bash"), ("ctrl+o", "more")]


def header_block(tui: InteractiveApp) -> Block:
    if tui.header_component is not None:
        from pi_plugins.interactive.blocks import ComponentBlock

        return ComponentBlock(tui.header_component)
    return _builtin_header(tui)


def _builtin_header(tui: InteractiveApp) -> HeaderBlock:
    notes = list(getattr(tui.pi, "notices", []))
    problems = getattr(tui.harness.session, "problems", None) or []
    if problems:
        notes.append(f"{len(problems)} damaged line(s) in the session file were skipped")
    for error in getattr(tui.harness.plugins, "errors", []) or []:
        if not getattr(error, "path", ""):  # a file that failed is under [Extension issues]
            notes.append(f"plugin error: {error}")
    notes += [f"warning: {problem}" for problem in tui.theme_problems if isinstance(problem, str)]
    notes += _package_extensions(tui)
    notes += [f"warning: keybindings: {problem}" for problem in tui.keybindings.problems + tui.keys.problems]
    quiet = tui.settings.get("quietStartup", False) if not getattr(tui.pi.args, "verbose", False) else False
    if quiet and quiet != "header":
        return HeaderBlock(None, [], notes, problems=tui.resource_problems)
    sections = [] if quiet == "header" else _loaded_sections(tui)  # "header": pi 1.6's header alone
    return HeaderBlock(f"pi-harness v{__version__}", HINTS, notes, sections, tui.resource_problems)


def _package_extensions(tui: InteractiveApp) -> list[str]:
    """One line for each TypeScript extension of the configured pi packages."""
    from pathlib import Path

    from pi_plugins.packages.configured import extension_lines, load
    from pi_plugins.resources import project_trusted

    ctx = tui.harness.ctx
    if not hasattr(ctx.settings, "global_data"):
        return []
    found = load(ctx.settings, Path(ctx.agent_dir).absolute(), Path(ctx.cwd).absolute(), project_trusted(ctx))
    return [f"note: {line}" for line in extension_lines(found)]


def _loaded_sections(tui: InteractiveApp) -> list[tuple[str, list[str]]]:
    """What this start found: context files, skills, prompt templates, plugins and
    themes of the user's or project's (the built-in ones are not listed)."""
    from pathlib import Path

    from pi_plugins.context_files import find_context_files

    ctx, sections = tui.harness.ctx, []
    home = str(Path.home())

    def shown(path) -> str:
        text = str(path)
        cwd = str(ctx.cwd).rstrip("/") + "/"
        return text[len(cwd):] if text.startswith(cwd) else ("~" + text[len(home):] if text.startswith(home)
                                                             else text)

    if getattr(ctx.options, "context_files", True):
        found = find_context_files(Path(ctx.cwd), Path(ctx.agent_dir)).files
        if found:
            sections.append(("Context", [shown(f.path) for f in found]))
    commands = list(tui.plugin_commands.values())
    skills = [c.name.split(":", 1)[-1] for c in commands if c.source == "skill"]
    if skills:
        sections.append(("Skills", skills))
    prompts = [f"/{c.name}" for c in commands if c.source == "prompt"]
    if prompts:
        sections.append(("Prompts", prompts))
    plugins = [Path(i.location).name if i.source in ("file", "cli") else i.name
               for i in tui.harness.plugins.infos if i.source not in ("builtin", "api")]
    if plugins:
        sections.append(("Extensions", plugins))
    themes = [name for name, palette in tui.themes.items() if palette.source != "builtin"]
    if themes:
        sections.append(("Themes", themes))
    return sections


def news_block(tui: InteractiveApp) -> Block | None:
    """After an update, what changed since the version last seen (not in a resumed chat)."""
    from pi_plugins.interactive.blocks import NoticeBlock
    from pi_plugins.interactive.changelog import news_since

    if tui.harness.messages:
        return None
    news = news_since(tui.settings, __version__)
    if news is None:
        return None
    if tui.settings.get("collapseChangelog", False):
        latest = re.search(r"##\s+\[?(\d+\.\d+\.\d+)\]?", news)
        return NoticeBlock(None, f"Updated to v{latest.group(1) if latest else __version__}. "
                                 "Use **/changelog** to view full changelog.")
    return NoticeBlock("What's New", news)
