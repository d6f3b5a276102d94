"""Skill and prompt-template problems in the chat, as pi 0.73.1 lists them at start-up
(``[Skill conflicts]``, ``[Prompt conflicts]``) and again after ``/reload``."""

from __future__ import annotations

NO_DESCRIPTION = "---\nname: nodesc\n---\nbody\n"
WRONG_NAME = "---\nname: other-name\ndescription: does a thing\n---\nbody\n"
LONG_DESCRIPTION = "---\nname: longdesc\ndescription: " + "x" * 1100 + "\n---\nbody\n"


def _section(screen: str, heading: str) -> list[str]:
    lines = [line.strip() for line in screen.splitlines()]
    start = lines.index(heading) + 1
    end = lines.index("", start) if "" in lines[start:] else len(lines)
    return lines[start:end]


def test_skill_problems_are_listed_under_skill_conflicts_at_start_up(pi_screen):
    term = pi_screen("--approve", files={".pi/skills/nodesc/SKILL.md": NO_DESCRIPTION,
                                         ".pi/skills/wrongname/SKILL.md": WRONG_NAME,
                                         ".pi/skills/longdesc/SKILL.md": LONG_DESCRIPTION})
    screen = term.wait_for("[Skill conflicts]")
    assert _section(screen, "[Skills]") == ["longdesc, other-name"]
    assert _section(screen, "[Skill conflicts]") == [
        "auto (project) ~/project/.pi/skills/longdesc/SKILL.md",
        "description exceeds 1024 characters (1100)",
        "~/project/.pi/skills/nodesc/SKILL.md",
        "description is required",
        "auto (project) ~/project/.pi/skills/wrongname/SKILL.md",
        'name "other-name" does not match parent directory "wrongname"',
    ]


def test_a_name_collision_names_the_kept_file_and_the_skipped_one(pi_screen):
    template = "---\ndescription: Review\n---\nReview the code.\n"
    term = pi_screen("--approve", files={".pi/prompts/review.md": template},
                     agent_files={"prompts/review.md": template})
    screen = term.wait_for("[Prompt conflicts]")
    assert _section(screen, "[Prompt conflicts]") == [
        '"/review" collision:',
        "✓ auto (project) ~/project/.pi/prompts/review.md",
        "✗ ~/agent/prompts/review.md (skipped)",
    ]


def test_reload_lists_the_problems_again_and_a_quiet_start_still_shows_them(pi_screen):
    term = pi_screen("--approve", settings={"quietStartup": True},
                     files={".pi/skills/nodesc/SKILL.md": NO_DESCRIPTION})
    screen = term.wait_for("[Skill conflicts]")
    assert "pi-harness v" not in screen
    (term.cwd / ".pi/skills/wrongname").mkdir()
    (term.cwd / ".pi/skills/wrongname/SKILL.md").write_text(WRONG_NAME)
    term.submit("/reload")
    screen = term.wait_drawn("parent directory")
    after = screen[screen.index("Reloaded plugins"):]
    assert _section(after, "[Skill conflicts]") == [
        "~/project/.pi/skills/nodesc/SKILL.md",
        "description is required",
        "auto (project) ~/project/.pi/skills/wrongname/SKILL.md",
        'name "other-name" does not match parent directory "wrongname"',
    ]
    assert "skills: " not in after  # not told twice (as a notification too)


# ---------------------------------------------------------------- themes and plugins, in a real terminal

import json  # noqa: E402
import sys  # noqa: E402

import pytest  # noqa: E402

from support.programs import NODE22, require_real  # noqa: E402
from support.terminal import Terminal  # noqa: E402

TWIN = json.dumps({"name": "twin", "colors": {"accent": "#00aaff"}})
BAD_COLOUR = json.dumps({"name": "mine", "colors": {"accent": "notacolour"}})
BROKEN_PLUGIN = 'raise RuntimeError("boom in python")\n'
TYPESCRIPT = 'export default function (pi) {}\n'


def _problem_files():
    return {".pi/themes/twin.json": TWIN, ".pi/themes/bad.json": BAD_COLOUR,
            ".pi/extensions/broken_plugin.py": BROKEN_PLUGIN, ".pi/extensions/tool.ts": TYPESCRIPT}


@pytest.mark.process
def test_theme_and_plugin_problems_are_listed_in_pis_sections_at_start_up(pi_tui):
    term = pi_tui("--approve", files=_problem_files(), agent_files={"themes/twin.json": TWIN}, height=50)
    screen = term.wait_for("[Theme conflicts]", timeout=20)
    assert _section(screen, "[Extension issues]") == [
        "~/project/.pi/extensions/tool.ts",
        "a TypeScript/JavaScript extension for pi (Node); it cannot run here",
        "~/project/.pi/extensions/broken_plugin.py",
        "Failed to load extension: RuntimeError: boom in python",
    ]
    theme_lines = _section(screen, "[Theme conflicts]")
    assert theme_lines[:4] == [  # the project's theme keeps the name, as in pi 1.6
        '"twin" collision:',
        "✓ auto (project) ~/project/.pi/themes/twin.json",
        "✗ ~/agent/themes/twin.json (skipped)",
        "~/project/.pi/themes/bad.json",
    ]
    assert "notacolour" in theme_lines[4]
    assert "plugin error:" not in screen and "warning: theme" not in screen  # not told twice


@pytest.mark.process
def test_reload_lists_theme_and_plugin_problems_that_appeared_since_start_up(pi_tui):
    term = pi_tui("--approve", files={".pi/settings.json": "{}"}, height=50)
    assert "[Extension issues]" not in term.screen() and "[Theme conflicts]" not in term.screen()
    for name, text in _problem_files().items():
        (term.cwd / name).parent.mkdir(parents=True, exist_ok=True)
        (term.cwd / name).write_text(text)
    (term.agent_dir / "themes").mkdir()
    (term.agent_dir / "themes" / "twin.json").write_text(TWIN)
    term.submit("/reload")
    screen = term.wait_drawn("[Theme conflicts]", timeout=20)
    after = screen[screen.index("Reloaded plugins"):]
    assert _section(after, "[Extension issues]")[-2:] == [
        "~/project/.pi/extensions/broken_plugin.py",
        "Failed to load extension: RuntimeError: boom in python",
    ]
    assert _section(after, "[Theme conflicts]")[:3] == [
        '"twin" collision:',
        "✓ auto (project) ~/project/.pi/themes/twin.json",
        "✗ ~/agent/themes/twin.json (skipped)",
    ]


@pytest.mark.process
def test_a_theme_name_collision_reads_as_pi_16_lists_it(tmp_path, server):
    """Side by side: the same project and agent dir, pi 1.6 then ours, the same lines."""
    package = require_real("pi16")
    home = tmp_path / "home"
    (home / "project" / ".pi" / "themes").mkdir(parents=True)
    (home / "agent" / "themes").mkdir(parents=True)
    pi_dark = json.loads((package / "dist/modes/interactive/theme/dark.json").read_text())
    twin = json.dumps({**pi_dark, "name": "twin"})  # complete: pi 1.6 refuses a theme with gaps
    (home / "project" / ".pi" / "themes" / "twin.json").write_text(twin)
    (home / "agent" / "themes" / "twin.json").write_text(twin)
    (home / "agent" / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PI_CODING_AGENT_DIR": str(home / "agent"),
           "TERM": "xterm-256color", "LANG": "C.UTF-8", "SHELL": "/bin/sh"}
    programs = {"pi16": [str(NODE22), str(package / "dist" / "cli.js")],
                "ours": [sys.executable, "-m", "pi_plugins.cli"]}
    seen = {}
    for name, argv in programs.items():
        (tmp_path / name).mkdir()
        with Terminal(tmp_path / name, [*argv, "--approve", "--model", "local/test-model"], env=env,
                      cwd=home / "project") as term:
            seen[name] = _section(term.wait_for("[Theme conflicts]", timeout=30), "[Theme conflicts]")
    assert seen["ours"] == seen["pi16"] == [
        '"twin" collision:',
        "✓ auto (project) ~/project/.pi/themes/twin.json",
        "✗ ~/agent/themes/twin.json (skipped)",
    ]
