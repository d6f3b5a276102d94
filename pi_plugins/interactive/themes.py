"""Themes in pi's JSON format: built-in ``dark`` and ``light``, files from ``themes/``
in the agent dir and in the project's ``.pi/``, the settings' ``themes`` list, the
themes of configured pi packages (``packages``), and
``--theme PATH`` (a file or a folder, repeatable). ``--no-themes`` leaves out all but the
built-ins and ``--theme``. The settings key ``theme`` names the one to use: a name,
``system`` (light or dark by the terminal's background; the default, as in pi 1.6), or
pi 1.6's automatic pair ``"LIGHT/DARK"``.

A theme file is ``{"name", "appearance"?, "vars"?, "colors"}``; a colour is ``"#rgb"``,
``"#rrggbb"``, ``"oklch(L C H)"``, ``"okhsl(H S L)"`` (:mod:`.theme_colors`), an xterm
256-colour number, ``""`` (the terminal's default) or the name of a ``vars`` entry. pi
asks for all 51 tokens; a token left out here keeps the dark theme's colour (and a
warning says which). The tokens are mapped onto the style names the chat is painted with
(:mod:`pi_plugins.interactive.theme`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pi_plugins.interactive import theme
from pi_plugins.resources import Problem

#: pi's colour tokens → the styles they colour ("bg" for a background, prefix for more).
TOKENS: dict[str, list[tuple[str, str]]] = {
    "accent": [("accent", "")],
    "border": [("border", "")],
    "borderAccent": [("border.accent", ""), ("summary.label", "bold")],
    "borderMuted": [("border.muted", "")],
    "success": [("success", "")],
    "error": [("error", "")],
    "warning": [("warning", ""), ("label", "")],
    "muted": [("muted", "")],
    "dim": [("dim", "")],
    "text": [("markdown.text", "")],
    "thinkingText": [("thinking", "italic")],
    "selectedBg": [("selected", "bg")],
    "userMessageBg": [("user.box", "bg")],
    "customMessageBg": [("custom.box", "bg")],
    "customMessageLabel": [("custom.label", "bold")],
    "toolPendingBg": [("tool.pending", "bg")],
    "toolSuccessBg": [("tool.success", "bg")],
    "toolErrorBg": [("tool.error", "bg")],
    "toolTitle": [("tool.title", "bold")],
    "toolOutput": [("tool.output", "")],
    "mdHeading": [(f"markdown.h{n}", "bold underline" if n == 1 else "bold") for n in range(1, 7)],
    "mdLink": [("markdown.link", "")],
    "mdLinkUrl": [("markdown.link_url", "")],
    "mdCode": [("markdown.code", "")],
    "mdCodeBlock": [("markdown.code_block", "")],
    "mdCodeBlockBorder": [("markdown.fence", "")],
    "mdQuote": [("markdown.block_quote", "italic")],
    "mdHr": [("markdown.hr", "")],
    "mdListBullet": [("markdown.item.bullet", ""), ("markdown.item.number", "")],
    "toolDiffAdded": [("diff.added", "")],
    "toolDiffRemoved": [("diff.removed", "")],
    "toolDiffContext": [("diff.context", "")],
}
THINKING_TOKENS = {"thinkingOff": "off", "thinkingMinimal": "minimal", "thinkingLow": "low",
                   "thinkingMedium": "medium", "thinkingHigh": "high", "thinkingXhigh": "xhigh"}

DARK = dict(theme.STYLES)
DARK_THINKING = dict(theme.THINKING_BORDER)
DARK_BASH = theme.BASH_BORDER
DARK_PROMPT = dict(theme.PROMPT_STYLE)

#: Our light palette: dark text on light boxes.
LIGHT_COLORS = {
    "accent": "#00737a", "border": "#3355bb", "borderAccent": "#007a99", "borderMuted": "#b0b0b0",
    "success": "#2e7d32", "error": "#c62828", "warning": "#a66a00", "muted": "#6b6b6b",
    "dim": "#8a8a8a", "text": "", "thinkingText": "#6b6b6b", "selectedBg": "#dde3ee",
    "userMessageBg": "#eceff4", "customMessageBg": "#efe9f5", "customMessageLabel": "#6a3fa0",
    "toolPendingBg": "#eef0f7", "toolSuccessBg": "#e8f3e8", "toolErrorBg": "#f7e6e6",
    "toolTitle": "", "toolOutput": "#5a5a5a", "mdHeading": "#8a5a00", "mdLink": "#1f5fa8",
    "mdLinkUrl": "#8a8a8a", "mdCode": "#00737a", "mdCodeBlock": "#2e7d32", "mdCodeBlockBorder": "#8a8a8a",
    "mdQuote": "#6b6b6b", "mdHr": "#8a8a8a", "mdListBullet": "#00737a", "toolDiffAdded": "#2e7d32",
    "toolDiffRemoved": "#c62828", "toolDiffContext": "#6b6b6b", "thinkingOff": "#b0b0b0",
    "thinkingMinimal": "#8a8a8a", "thinkingLow": "#3a6ea5", "thinkingMedium": "#1f5fa8",
    "thinkingHigh": "#7a3fa0", "thinkingXhigh": "#a0308a", "bashMode": "#2e7d32",
}


class ThemeError(ValueError):
    """A theme file that cannot be used; it is skipped with this message."""


class Palette:
    """A theme made into the chat's styles."""

    def __init__(self, name: str, styles: dict, thinking: dict, bash: str, prompt: dict,
                 source: str = "builtin") -> None:
        self.name, self.styles, self.thinking, self.bash, self.prompt = name, styles, thinking, bash, prompt
        self.source = source
        self.from_cli = False  # loaded by --theme
        #: How its file was found (project, user, settings, package, cli), as pi's listings say it.
        self.scope = "builtin"

    def apply(self) -> None:
        """Make this the palette every painter and the editor use from now on."""
        theme.STYLES.clear()
        theme.STYLES.update(self.styles)
        theme.THINKING_BORDER.clear()
        theme.THINKING_BORDER.update(self.thinking)
        theme.BASH_BORDER = self.bash
        theme.PROMPT_STYLE.clear()
        theme.PROMPT_STYLE.update(self.prompt)
        theme.APPLIED_NAME = self.name


def dark() -> Palette:
    return Palette("dark", dict(DARK), dict(DARK_THINKING), DARK_BASH, dict(DARK_PROMPT))


def _color(value: Any, variables: dict, token: str) -> str:
    seen = set()
    while isinstance(value, str) and value in variables and value not in seen:
        seen.add(value)
        value = variables[value]
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ThemeError(f"colors.{token}: {value!r} is not a colour")
    if isinstance(value, int):
        if not 0 <= value <= 255:
            raise ThemeError(f"colors.{token}: {value} is not a 256-colour number (0-255)")
        return f"color({value})"
    if value == "":
        return "default"
    from pi_plugins.interactive.theme_colors import ColorFormatError, parse_color

    try:
        return parse_color(value)  # pi 1.6's forms: #rgb, #rrggbb, oklch(), okhsl()
    except ColorFormatError as exc:
        raise ThemeError(f"colors.{token}: {exc}, a 256-colour number, \"\" or a name in vars") from None


def palette_from(document: Any, source: str = "") -> tuple[Palette, list[str]]:
    """A :class:`Palette` from a pi theme document, and warnings (tokens left out)."""
    if not isinstance(document, dict):
        raise ThemeError("a theme is a JSON object with name and colors")
    name = document.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ThemeError("the theme has no name")
    colors = document.get("colors")
    if not isinstance(colors, dict):
        raise ThemeError("the theme has no colors object")
    variables = document.get("vars") or {}
    if not isinstance(variables, dict):
        raise ThemeError("vars must be an object")
    if "/" in name or name.strip() == "system":
        raise ThemeError(f"theme name {name!r}: a name cannot contain '/' or be 'system' (pi 1.6 keeps them)")
    appearance = document.get("appearance")
    if appearance not in (None, "dark", "light"):
        raise ThemeError(f"appearance {appearance!r}: \"dark\" or \"light\"")
    # the colours a theme leaves out come from the built-in theme of its appearance
    base = light() if appearance == "light" else dark()
    styles, thinking, prompt = base.styles, base.thinking, base.prompt
    bash = base.bash
    missing = []
    for token, targets in TOKENS.items():
        if token not in colors:
            missing.append(token)
            continue
        color = _color(colors[token], variables, token)
        for style, extra in targets:
            if extra == "bg":
                styles[style] = "none" if color == "default" else f"on {color}"
            else:
                styles[style] = " ".join(p for p in (extra, "" if color == "default" else color) if p) or "none"
    for token, level in THINKING_TOKENS.items():
        if token in colors:
            thinking[level] = _fg(_color(colors[token], variables, token), thinking[level])
        else:
            missing.append(token)
    if "bashMode" in colors:
        bash = _fg(_color(colors["bashMode"], variables, "bashMode"), bash)
    else:
        missing.append("bashMode")
    if "userMessageText" in colors:
        text = _color(colors["userMessageText"], variables, "userMessageText")
        if text != "default":
            styles["user.box"] = f"{text} {styles['user.box']}"
    accent = styles.get("accent", "")
    if accent and accent != "none":
        prompt["dialog-prompt"] = _prompt_toolkit_style(accent)
    warnings = [f"theme {name!r}{f' ({source})' if source else ''}: no colour for "
                f"{', '.join(missing)}; the {base.name} theme's is used"] if missing and source else \
        [f"no colour for {', '.join(missing)}; the {base.name} theme's is used"] if missing else []
    return Palette(name.strip(), styles, thinking, bash, prompt, source), warnings


_ANSI_NAMES = ["ansiblack", "ansired", "ansigreen", "ansiyellow", "ansiblue", "ansimagenta", "ansicyan", "ansigray",
               "ansibrightblack", "ansibrightred", "ansibrightgreen", "ansibrightyellow", "ansibrightblue",
               "ansibrightmagenta", "ansibrightcyan", "ansiwhite"]


def _prompt_toolkit_style(style: str) -> str:
    """A rich style for prompt_toolkit: ``color(N)`` as its ANSI name (0-15, drawn by the
    terminal's theme) or the colour's hex (16-255), ``dim`` dropped."""
    parts = []
    for part in style.split():
        if part.startswith("color("):
            from rich.color import Color

            number = Color.parse(part).number or 0
            part = _ANSI_NAMES[number] if number < 16 else Color.parse(part).get_truecolor().hex
        parts.append(part)
    return " ".join(p for p in parts if p != "dim")


def _fg(color: str, fallback: str) -> str:
    """A colour for prompt_toolkit and rich alike (``color(N)`` only rich reads)."""
    if color == "default":
        return fallback
    if color.startswith("color("):
        from rich.color import Color

        return Color.parse(color).get_truecolor().hex
    return color


def light() -> Palette:
    palette, _ = palette_from({"name": "light", "colors": LIGHT_COLORS}, "builtin")
    palette.source = "builtin"
    palette.prompt.update({
        "completion-menu": "bg:#e8e8e8 #303030", "completion-menu.completion": "bg:#e8e8e8 #303030",
        "completion-menu.completion.current": "bg:#dde3ee #00737a bold",
        "completion-menu.meta.completion": "bg:#e8e8e8 #6b6b6b",
        "completion-menu.meta.completion.current": "bg:#dde3ee #6b6b6b",
        "editor.placeholder": "#8a8a8a italic",
    })
    return palette


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.glob("*.json") if p.is_file())
    return [path] if path.is_file() else []


def package_themes(settings: Any, cwd: str | Path, agent_dir: str | Path | None) -> list[Path]:
    """The theme files of the pi packages the settings configure, in settings order."""
    if agent_dir is None or not hasattr(settings, "global_data"):
        return []
    from pi_core.app.settings import project_allowed
    from pi_plugins.packages.configured import load

    home, here = Path(agent_dir).expanduser().absolute(), Path(cwd).expanduser().absolute()
    found = load(settings, home, here, project_allowed(settings, here, home))
    return [r.path for r in found.temporary("themes") + found.enabled("themes")]


def load_themes(*, cwd: str | Path, agent_dir: str | Path | None, settings: Any = None,
                cli_paths: Sequence[str] = (), discover: bool = True,
                env: Any = None) -> tuple[dict[str, Palette], list[str | Problem]]:
    """Every theme by name (the first of a name wins, the project's before the user's, as
    pi 1.6), and problems: a theme file's as a :class:`Problem` (the chat lists them under
    pi's ``[Theme conflicts]``), the rest as text."""
    themes: dict[str, Palette] = {"dark": dark(), "light": light(), "system": system(env)}
    problems: list[str | Problem] = []
    candidates: list[Path] = []
    origin: dict[Path, str] = {}
    if discover:
        from types import SimpleNamespace

        from pi_core.app.settings import project_allowed
        from pi_plugins.resources import settings_entries, settings_filter

        run = SimpleNamespace(settings=settings, cwd=cwd, agent_dir=agent_dir)
        trusted = project_allowed(settings, cwd, agent_dir)  # the project's themes need trust
        scopes: list[tuple[str, Path | None]] = [("project", Path(cwd) / ".pi" / "themes")] if trusted else []
        scopes += [("user", Path(agent_dir) / "themes" if agent_dir is not None else None)]
        listed: list[Path] = []
        for scope, folder in scopes:
            patterns = settings_filter(run, "themes", scope) if settings is not None else None
            if folder is not None:
                here = [f for f in _files(folder) if patterns is None or patterns.discovered(f)]
                candidates += here
                origin.update(dict.fromkeys(here, scope))
            entries, _ = settings_entries(run, "themes", scope) if settings is not None else ([], [])
            for entry in entries:
                found = _files(entry)
                if not found:
                    problems.append(Problem(str(entry), "theme path does not exist"
                                            if not entry.exists() else "theme path is not a json file"))
                listed += [f for f in found if patterns is None or patterns.listed(f)]
        candidates += listed  # after the folders, as before
        if settings is not None:
            from_packages = package_themes(settings, cwd, agent_dir)
            candidates += from_packages
            origin.update(dict.fromkeys(from_packages, "package"))
    given: set[Path] = set()
    for raw in cli_paths:
        path = Path(raw).expanduser()
        path = path if path.is_absolute() else Path(cwd) / path
        found = _files(path)
        if not found:
            problems.append(Problem(str(path), "theme path does not exist" if not path.exists()
                                    else "theme path is not a json file"))
        candidates += found
        given.update(found)
    for path in candidates:
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
            palette, warnings = palette_from(document)
        except (OSError, ValueError) as exc:  # ThemeError and JSON errors are ValueErrors
            problems.append(Problem(str(path), f"{exc}; skipped"))
            continue
        problems += [Problem(str(path), warning) for warning in warnings]
        palette.source = str(path)
        if palette.name in themes and themes[palette.name].source != "builtin":
            problems.append(Problem(str(path), f'name "{palette.name}" collision', "collision",
                                    palette.name, themes[palette.name].source))
            continue
        palette.from_cli = path in given
        palette.scope = "cli" if path in given else origin.get(path, "settings")
        themes[palette.name] = palette
    return themes, problems


def terminal_is_light(env: Any = None) -> bool:
    """The terminal's background is light, as pi 1.6 decides it
    (:func:`pi_plugins.interactive.terminal_colors.terminal_appearance`)."""
    from pi_plugins.interactive.terminal_colors import terminal_appearance

    return terminal_appearance(env) == "light"


def pick_named(themes: dict[str, Palette], wanted: str, env: Any = None,
               where: str = "--use-theme") -> tuple[Palette | None, str | None]:
    """``NAME`` or pi 1.6's ``LIGHT/DARK`` pair (by the terminal's background): the theme,
    or None and why (``where`` names the setting or flag)."""
    names = wanted.split("/")
    if len(names) > 2 or not all(names):
        return None, f"{where} {wanted!r}: give NAME or LIGHT/DARK"
    name = names[0] if len(names) == 1 or terminal_is_light(env) else names[1]
    if name not in themes:
        return None, f"{where} {name!r}: no such theme (have {', '.join(sorted(themes))})"
    return themes[name], None


def system(env: Any = None) -> Palette:
    """pi 1.6's ``system`` theme (the default): its colours built from the terminal's
    reported background, foreground and 16 ANSI colours (:mod:`.system_theme`); where
    the terminal reported no background, as 1.6: the ANSI indices 0-15 and the default
    colours, which the terminal draws in its own theme, neutral tokens faint (SGR 2), no
    panel backgrounds (light or dark by :func:`terminal_is_light`, for what stays fixed)."""
    from pi_plugins.interactive.system_theme import generate
    from pi_plugins.interactive.terminal_colors import reported, reported_palette

    background = reported.get("background")
    hint = "light" if terminal_is_light(env) else "dark"
    colors, faint, appearance = generate(background, reported.get("foreground"), reported_palette or None,
                                         appearance_hint=hint)
    palette, _ = palette_from({"name": "terminal", "appearance": appearance, "colors": colors})
    for token in faint:  # the terminal's foreground, faint
        for style, extra in TOKENS.get(token, []):
            if extra != "bg":
                palette.styles[style] = " ".join(p for p in (extra, "dim") if p)
    if background is None:  # the editor's border, menu and placeholder in the terminal's colours too
        ansi = lambda value: _ANSI_NAMES[value] if isinstance(value, int) and value < 16 else "ansibrightblack"
        for token, level in THINKING_TOKENS.items():
            palette.thinking[level] = ansi(colors.get(token))
        palette.bash = ansi(colors.get("bashMode"))
        palette.prompt.update({
            "completion-menu": "bg:default default", "completion-menu.completion": "bg:default default",
            "completion-menu.completion.current": "bg:default default reverse",
            "completion-menu.meta.completion": "bg:default ansibrightblack",
            "completion-menu.meta.completion.current": "bg:default default reverse",
            "editor.placeholder": "ansibrightblack italic",
            "completion-menu.completion fuzzymatch.outside": "ansibrightblack",
            "completion-menu.completion.current fuzzymatch.outside": "",
            "scrollbar.background": "bg:ansibrightblack", "scrollbar.button": "bg:ansigray",
        })
    palette.source = "builtin"
    palette.name = "system"
    return palette


def choose(themes: dict[str, Palette], settings: Any, env: Any = None) -> tuple[Palette, list[str]]:
    """The theme the settings name (``theme``: a name, ``system``, or pi 1.6's automatic
    ``LIGHT/DARK`` pair), else ``system``, pi 1.6's default."""
    wanted = settings.get("theme") if settings is not None else None
    if not wanted:
        return themes["system"], []
    if isinstance(wanted, str) and "/" in wanted:
        found, problem = pick_named(themes, wanted, env, where="settings theme")
        return (found, []) if found is not None else (themes["dark"], [f"{problem}; using dark"])
    if wanted not in themes:
        return themes["dark"], [f"settings theme {wanted!r}: no such theme "
                                f"(have {', '.join(sorted(themes))}); using dark"]
    return themes[wanted], []
