"""pi 1.6's theme formats: ``#rgb``, ``oklch()``, ``okhsl()``, ``appearance``, the names
it keeps (``system``, ``/``), the ``system`` theme and the automatic ``LIGHT/DARK`` pair."""

from __future__ import annotations

import json
import subprocess

import pytest

from pi_core.app.settings import Settings
from pi_plugins.interactive.theme_colors import ColorFormatError, parse_color
from pi_plugins.interactive.themes import ThemeError, choose, dark, light, load_themes, palette_from
from support.programs import node_for, require_real

# What pi-tui 1.6 draws for each (its parseColor, then colorToRgb), and ours must too.
PI_TUI_RGB = {
    "#0af": "#00aaff",
    "okhsl(250 60% 55%)": "#4e88c2",
    "oklch(62% 0.1 200)": "#1c989e",
    "oklch(100% 0.3 150)": "#ffffff",  # out of gamut: chroma goes until it fits (white)
    "oklch(70% 0.4 30)": "#ff6551",
}


@pytest.mark.parametrize("written, drawn", PI_TUI_RGB.items())
def test_pi_16s_colour_forms_become_the_colours_pi_tui_draws(written, drawn):
    assert parse_color(written) == drawn


def test_a_colour_pi_does_not_read_is_refused_with_the_forms_it_reads():
    with pytest.raises(ColorFormatError, match="oklch"):
        parse_color("rgb(1, 2, 3)")
    with pytest.raises(ColorFormatError, match="lightness"):
        parse_color("oklch(120% 0.1 200)")
    with pytest.raises(ThemeError, match=r"colors\.accent: 'hsl\(1 2 3\)'"):
        palette_from({"name": "bad", "colors": {"accent": "hsl(1 2 3)"}})


@pytest.mark.process
def test_pi_16s_own_themes_resolve_to_what_pi_tui_computes(tmp_path):
    """Every colour of pi 1.6's built-in dark and light themes (written in OKHSL), through
    ours and through pi-tui's own code under Node."""
    package = require_real("pi16")
    theme_dir = package / "dist" / "modes" / "interactive" / "theme"
    colors_js = package.parent / "pi-tui" / "dist" / "colors.js"
    written = set()
    for name in ("dark", "light"):
        document = json.loads((theme_dir / f"{name}.json").read_text())
        values = [*document.get("vars", {}).values(), *document["colors"].values()]
        written |= {v for v in values if isinstance(v, str) and (v.startswith(("#", "oklch(", "okhsl(")))}
        palette, warnings = palette_from(document, name)
        assert palette.name == name and not any("okhsl" in w for w in warnings)
    script = (f"import({json.dumps(colors_js.as_uri())}).then(m => {{ const out = {{}};"
              f" for (const v of {json.dumps(sorted(written))}) {{ const c = m.colorToRgb(m.parseColor(v));"
              " out[v] = '#' + [c.r, c.g, c.b].map(x => x.toString(16).padStart(2, '0')).join(''); }"
              " console.log(JSON.stringify(out)); })")
    run = subprocess.run([node_for("pi16"), "--input-type=module", "-e", script], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    expected = json.loads(run.stdout)
    assert len(expected) > 20
    assert {value: parse_color(value) for value in expected} == expected


def test_appearance_light_fills_missing_colours_from_the_light_theme():
    palette, warnings = palette_from({"name": "paper", "appearance": "light", "colors": {"accent": "#0af"}})
    assert palette.styles["accent"] == "#00aaff"
    assert palette.styles["error"] == light().styles["error"] != dark().styles["error"]
    assert "the light theme's is used" in warnings[0]
    with pytest.raises(ThemeError, match="appearance"):
        palette_from({"name": "odd", "appearance": "dim", "colors": {}})


@pytest.mark.parametrize("name", ["system", "day/night"])
def test_a_theme_may_not_take_a_name_pi_keeps(name):
    with pytest.raises(ThemeError, match="cannot contain '/' or be 'system'"):
        palette_from({"name": name, "colors": {}})


def test_the_system_theme_and_the_light_dark_pair_follow_the_terminals_background(tmp_path):
    light_terminal, dark_terminal = {"COLORFGBG": "0;15"}, {"COLORFGBG": "15;0"}
    themes, _ = load_themes(cwd=tmp_path, agent_dir=None)
    pair = Settings({"theme": "light/dark"})
    assert choose(themes, pair, light_terminal)[0].name == "light"
    assert choose(themes, pair, dark_terminal)[0].name == "dark"
    assert choose(themes, pair, {})[0].name == "dark"  # nothing said: dark, as pi
    chosen, problems = choose(themes, Settings({"theme": "light/nope"}), dark_terminal)
    assert chosen.name == "dark" and "settings theme 'nope': no such theme" in problems[0]
    from pi_plugins.interactive.themes import system

    # nothing reported but COLORFGBG: pi 1.6's ANSI indices, which the terminal draws in its own theme
    assert system(light_terminal).styles == system(dark_terminal).styles
    assert system(dark_terminal).styles["accent"] == "color(5)" and system(dark_terminal).styles["dim"] == "dim"
    assert choose(themes, Settings({"theme": "system"}))[0].name == "system"
