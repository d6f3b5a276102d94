"""Themes in pi's JSON format: built-in dark and light, discovered files, --theme and
--no-themes, and the chat painted with the chosen one."""

import pytest
import json

from pi_core.app.settings import Settings
from pi_plugins.interactive import theme
from pi_plugins.interactive.blocks import UserBlock, View
from pi_plugins.interactive.paint import Painter
from pi_plugins.interactive.themes import choose, dark, load_themes, palette_from
from support.llm_server import Reply
from support.programs import REAL_PI

COLORS = {"accent": "brand", "userMessageBg": "#102030", "mdHeading": 208, "thinkingHigh": "#ff00ff",
          "bashMode": "", "toolDiffAdded": "#00ff00"}


def write_theme(folder, name, colors=None):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps({"name": name, "vars": {"brand": "#00aaff"}, "colors": colors or COLORS}))
    return path


def test_theme_files_are_found_in_the_agent_dir_the_project_and_on_the_command_line(tmp_path):
    agent, project = tmp_path / "agent", tmp_path / "project"
    write_theme(agent / "themes", "mine")
    write_theme(project / ".pi" / "themes", "ours")
    extra = write_theme(tmp_path / "extra", "given")
    (agent / "themes" / "broken.json").write_text("{not json")
    from pi_core.app.settings import Settings

    untrusted, _ = load_themes(cwd=project, agent_dir=agent, cli_paths=[str(extra)])
    assert "ours" not in untrusted and "mine" in untrusted  # the project's need trust
    trusted = Settings.load(project, agent, project_trusted=True)
    themes, problems = load_themes(cwd=project, agent_dir=agent, cli_paths=[str(extra)], settings=trusted)
    assert {"dark", "light", "mine", "ours", "given"} <= set(themes)
    assert themes["given"].from_cli and not themes["mine"].from_cli
    assert any("broken.json" in str(p) and "skipped" in str(p) for p in problems)
    assert any("no colour for" in str(p) and "mine.json" in str(p) for p in problems)  # tokens left out: dark's
    # --no-themes: only the built-ins and what --theme names
    themes, _ = load_themes(cwd=project, agent_dir=agent, cli_paths=[str(extra)], discover=False)
    assert set(themes) == {"dark", "light", "system", "given"}



def test_settings_theme_patterns_filter_listed_and_found_themes(tmp_path):
    """pi's resource-list patterns for ``themes``: a glob chooses among a listed
    folder's files, ``!`` leaves out one of the agent dir's own, ``+path`` puts it back."""
    agent, project = tmp_path / "agent", tmp_path / "project"
    for name in ("mine", "old"):
        write_theme(agent / "themes", name)
    for name in ("sunny", "stormy"):
        write_theme(agent / "more", name)
    project.mkdir()
    (agent / "settings.json").write_text(json.dumps({"themes": ["more", "more/su*", "!old*", "!mine*",
                                                                "+themes/mine.json"]}))
    themes, problems = load_themes(cwd=project, agent_dir=agent, settings=Settings.load(project, agent))
    assert {"mine", "sunny"} <= set(themes) and not {"old", "stormy"} & set(themes)
    assert not [p for p in problems if "theme path" in str(p)]

def test_a_theme_maps_pis_tokens_onto_the_chat_styles():
    palette, _ = palette_from({"name": "mine", "vars": {"brand": "#00aaff"}, "colors": COLORS})
    assert palette.styles["accent"] == "#00aaff"  # through vars
    assert palette.styles["user.box"] == "on #102030"
    assert palette.styles["markdown.h2"] == "bold color(208)"  # a 256-colour number
    assert palette.thinking["high"] == "#ff00ff"
    assert palette.bash == dark().bash  # "" is the terminal's default: the border keeps dark's
    assert palette.styles["error"] == dark().styles["error"]  # left out: dark's


def test_the_real_pis_own_theme_files_load_without_warnings():
    folder = REAL_PI / "dist" / "modes" / "interactive" / "theme"
    if not folder.is_dir():  # the files are read only where the real pi is installed
        return
    for name in ("dark", "light"):
        palette, warnings = palette_from(json.loads((folder / f"{name}.json").read_text()), name)
        assert warnings == [] and palette.name == name


def test_the_settings_choose_the_theme_and_a_bad_name_falls_back_to_dark(tmp_path):
    themes, _ = load_themes(cwd=tmp_path, agent_dir=None)
    assert choose(themes, Settings({"theme": "light"}))[0].name == "light"
    chosen, problems = choose(themes, Settings({"theme": "nope"}))
    assert chosen.name == "dark" and "no such theme" in problems[0]


def test_the_chosen_theme_paints_the_chat(tmp_path):
    dark().apply()  # whatever an earlier in-process chat applied
    saved = dict(theme.STYLES)
    try:
        palette, _ = palette_from({"name": "mine", "vars": {"brand": "#00aaff"}, "colors": COLORS})
        palette.apply()
        painted = "\n".join(UserBlock("hello").lines(Painter("truecolor"), 40, View(), False))
        assert "48;2;16;32;48" in painted  # #102030 behind the user's message
    finally:
        dark().apply()
    assert theme.STYLES == saved


@pytest.mark.process
def test_the_interactive_mode_uses_the_theme_the_settings_name(pi_tui, server):
    server.push(Reply(text="Themed answer."))
    colors = {**COLORS, "userMessageBg": 52}  # a 256-colour number: tmux shows 256 colours
    term = pi_tui("--approve", settings={"theme": "mine"},  # the project's theme needs trust
                  files={".pi/themes/mine.json": json.dumps({"name": "mine", "vars": {"brand": "#00aaff"}, "colors": colors})})
    term.submit("hello theme")
    term.wait_for("Themed answer.")
    assert "48;5;52m" in term.screen(ansi=True)


@pytest.mark.process
def test_no_themes_leaves_the_project_theme_out(pi_tui, server):
    server.push(Reply(text="Plain answer."))
    colors = {**COLORS, "userMessageBg": 52}  # a 256-colour number: tmux shows 256 colours
    term = pi_tui("--no-themes", "--approve", settings={"theme": "mine"},
                  files={".pi/themes/mine.json": json.dumps({"name": "mine", "vars": {"brand": "#00aaff"}, "colors": colors})})
    term.submit("hello theme")
    screen = term.wait_for("Plain answer.")
    assert "48;5;52m" not in term.screen(ansi=True)
    assert "no such theme" in screen  # said in the header


@pytest.mark.process
def test_an_edited_theme_file_repaints_the_chat(pi_tui):
    def themed(accent: str) -> str:
        return json.dumps({"name": "mine", "colors": {"accent": accent}})

    term = pi_tui(settings={"theme": "mine"}, agent_files={"themes/mine.json": themed("#ff0000")})
    term.submit("/hotkeys")  # the chat runs (its theme watcher too)
    term.wait_for("Keyboard shortcuts")
    term.press("C-Home")  # the transcript's start: the header's [Themes] is in the accent colour
    term.wait_for("[Themes]")
    red, green = "38;5;196", "38;5;46"  # in tmux's 256 colours
    assert red in term.screen(ansi=True)
    (term.agent_dir / "themes" / "mine.json").write_text(themed("#00ff00"))
    term.wait_for(lambda s: green in term.screen(ansi=True) and red not in term.screen(ansi=True))
