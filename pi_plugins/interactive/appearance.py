"""How the chat looks: the theme (chosen at start, switched by ``/settings`` or a plugin,
reloaded when its file changes, as pi's hot reload) and the view (thinking shown or
hidden, tool output expanded). Either change repaints the whole chat.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

from prompt_toolkit.styles import Style

from pi_plugins.interactive.paint import Painter
from pi_plugins.interactive.theme import PROMPT_STYLE

if TYPE_CHECKING:
    from pi_plugins.interactive.app import InteractiveApp


def apply_theme(pi_app) -> tuple[dict, list]:
    """Choose and apply the theme (settings ``theme``; else the last ``--theme`` given;
    else dark); returns the themes found and what was wrong on the way, for the header."""
    from pi_plugins.interactive.themes import choose, load_themes

    args, ctx = pi_app.args, pi_app.harness.ctx
    cli = list(getattr(args, "themes", []) or [])
    themes, problems = load_themes(cwd=ctx.cwd, agent_dir=ctx.agent_dir, settings=ctx.settings,
                                   cli_paths=cli, discover=not getattr(args, "no_themes", False))
    chosen, more = choose(themes, ctx.settings)
    from_cli = [t for t in themes.values() if t.from_cli]
    if not ctx.settings.get("theme") and from_cli:
        chosen = from_cli[-1]
    wanted = getattr(args, "use_theme", None)
    if wanted:  # pi 1.6's --use-theme: this run only, never saved
        from pi_plugins.interactive.themes import pick_named

        found, problem = pick_named(themes, wanted)
        if found is not None:
            chosen = found
        if problem:
            more.append(problem)
    chosen.apply()
    return themes, problems + more


def reload_themes(tui: Any) -> None:
    """``/reload``: the theme files found again, with their problems (the chosen theme stays)."""
    from pi_plugins.interactive.themes import load_themes

    ctx = tui.harness.ctx
    tui.themes, problems = load_themes(cwd=ctx.cwd, agent_dir=ctx.agent_dir, settings=ctx.settings,
                                       cli_paths=list(getattr(tui.pi.args, "themes", []) or []),
                                       discover=not getattr(tui.pi.args, "no_themes", False))
    tui.theme_problems = [p for p in tui.theme_problems if isinstance(p, str)] + \
        [p for p in problems if not isinstance(p, str)]


def current_theme(tui: InteractiveApp) -> str:
    from pi_plugins.interactive import theme as styles

    applied = tui.themes.get(styles.APPLIED_NAME)
    if applied is not None and applied.styles == styles.STYLES:
        return styles.APPLIED_NAME
    return next((name for name, p in tui.themes.items() if p.styles == styles.STYLES), "dark")


def set_theme(tui: InteractiveApp, name: str) -> None:
    """Repaint everything in another theme (``/settings``, a theme file that changed)."""
    from pi_plugins.interactive.themes import load_themes

    ctx = tui.harness.ctx
    tui.themes, _ = load_themes(cwd=ctx.cwd, agent_dir=ctx.agent_dir, settings=ctx.settings,
                                cli_paths=list(getattr(tui.pi.args, "themes", []) or []),
                                discover=not getattr(tui.pi.args, "no_themes", False))
    chosen = tui.themes.get(name)
    if chosen is None:
        tui.add_text(f"No theme named {name!r}", "error")
        return
    chosen.apply()
    tui.painter = Painter(tui.painter.color_system)
    tui.live.repaint_footer()
    if tui.app is not None:
        tui.app.style = Style.from_dict(PROMPT_STYLE)
    tui.scrollback.reprint()


async def watch_theme(tui: InteractiveApp, interval: float = 0.5) -> None:
    """A custom theme's file edited: the chat repaints in it (pi's hot reload)."""

    def stamp() -> tuple[str, tuple | None]:
        name = current_theme(tui)
        source = getattr(tui.themes.get(name), "source", "builtin")
        try:
            return name, (source, os.stat(source).st_mtime_ns) if source != "builtin" else None
        except OSError:
            return name, None

    seen = stamp()
    while True:
        await asyncio.sleep(interval)
        now = stamp()
        if now[1] is not None and seen[0] == now[0] and seen[1] is not None and now[1] != seen[1]:
            tui.set_theme(now[0])
            now = stamp()
        seen = now


def set_view(tui: InteractiveApp, **changes: Any) -> None:  # View fields: a bool, or the thinking label
    """Thinking shown or hidden, tool output expanded …: the chat is printed again."""
    from attrs import evolve

    tui.view = evolve(tui.view, **changes)
    tui.scrollback.reprint()
