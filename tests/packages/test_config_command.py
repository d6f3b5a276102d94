"""``pi config`` lists the configured packages' resources as pi 1.6's resource screen
does: a group per package and scope, user before project, each type's files by name; in
the project scope (``-l``) the user's marked "inherited global" and the project's own
entry's overrides as ``[+]``/``[-]``."""

import json

import pytest

from pi_plugins.packages.config_command import config_lines

from .test_package_resources import unpack_into


@pytest.fixture
def agent(tmp_path, monkeypatch):
    agent, project = tmp_path / "agent", tmp_path / "proj"
    project.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(project)
    for tarball in ("pi-themes-1.0.1.tgz", "pi-prompt-template-model-0.12.2.tgz"):
        unpack_into(agent / "npm", tarball)
    (agent / "settings.json").write_text(json.dumps({"packages": [
        "npm:pi-themes", {"source": "npm:pi-prompt-template-model@0.12.2", "extensions": []}]}))
    (project / ".pi").mkdir()
    (project / ".pi" / "settings.json").write_text(json.dumps({"packages": [
        {"source": "npm:pi-themes", "autoload": False, "themes": ["-themes/nord.json"]}]}))
    return project


def packages_part(lines):
    return lines[3:lines.index("  Built-in" if lines[0] == "Global Resources" else "  Built-in · inherited global")]


THEMES = ["catppuccin-latte", "catppuccin-mocha", "dracula", "gruvbox-dark", "gruvbox-light", "nord",
          "one-dark", "solarized-dark", "solarized-light", "tokyo-night"]


def test_the_global_scope_lists_each_packages_resources_as_pi16_does(agent):
    lines = config_lines(str(agent), local=False, approve=False)
    assert lines[:3] == ["Global Resources", "~/.pi/agent/settings.json", ""]
    assert packages_part(lines) == [
        "  npm:pi-prompt-template-model@0.12.2 (user)",
        "    Extensions",
        "      [ ] pi-prompt-template-model/index.ts",
        "    Skills",
        "      [x] prompt-template-authoring",
        "  npm:pi-themes (user)",
        "    Extensions",
        "      [x] pi-themes/index.ts",
        "    Themes",
        *[f"      [x] {name}.json" for name in THEMES],
    ]


def test_the_project_scope_marks_inherited_resources_and_the_projects_overrides(agent):
    lines = packages_part(config_lines(str(agent), local=True, approve=True))
    assert lines[:5] == [
        "  npm:pi-prompt-template-model@0.12.2 (user) · inherited global",
        "    Extensions",
        "      [ ] pi-prompt-template-model/index.ts  inherited global",
        "    Skills",
        "      [x] prompt-template-authoring  inherited global",
    ]
    assert "      [x] dracula.json  inherited global" in lines
    assert lines[-3:] == ["  npm:pi-themes (project)", "    Themes", "      [-] nord.json  project unload"]


def test_a_project_package_of_its_own_is_not_inherited(agent):
    """A project entry without ``autoload: false`` replaces the user's, with a copy of
    its own under ``.pi/npm``: nothing of it is inherited."""
    unpack_into(agent / ".pi" / "npm", "pi-themes-1.0.1.tgz")
    (agent / ".pi" / "settings.json").write_text(json.dumps({"packages": [
        {"source": "npm:pi-themes", "themes": ["+themes/nord.json"], "extensions": []}]}))
    lines = packages_part(config_lines(str(agent), local=True, approve=True))
    assert "  npm:pi-themes (user) · inherited global" not in lines
    project = lines[lines.index("  npm:pi-themes (project)"):]
    assert project[:5] == ["  npm:pi-themes (project)", "    Extensions",
                           "      [-] pi-themes/index.ts  project unload", "    Themes",
                           "      [x] catppuccin-latte.json"]
    assert "      [+] nord.json  project load" in project


def test_the_project_scope_needs_a_trusted_project(agent):
    from click.testing import CliRunner

    from pi_plugins.packages.config_command import config_command

    done = CliRunner().invoke(config_command, ["-l", "-na"])
    assert done.exit_code == 1
    assert "Project is not trusted. Use --approve to modify local resource config." in done.output


def test_the_users_and_the_projects_own_folders_are_listed_around_the_builtins(agent, tmp_path):
    """pi 1.6's order: packages, ``User (<agent dir>/)``, Built-in, ``User settings``,
    then (``-l``) ``Project (<project>/.pi/)``; a file a settings pattern leaves out is off."""
    home = tmp_path / "agent"
    (home / "skills" / "mine").mkdir(parents=True)
    (home / "skills" / "mine" / "SKILL.md").write_text("---\nname: mine\ndescription: M.\n---\nx\n")
    (home / "prompts").mkdir()
    (home / "prompts" / "review.md").write_text("Review\n")
    settings = json.loads((home / "settings.json").read_text())
    (home / "settings.json").write_text(json.dumps({**settings, "prompts": ["-prompts/review.md"]}))
    (agent / ".pi" / "skills" / "here").mkdir(parents=True)
    (agent / ".pi" / "skills" / "here" / "SKILL.md").write_text("---\nname: here\ndescription: H.\n---\nx\n")
    user = config_lines(str(agent), local=False, approve=False)
    start = user.index(f"  User ({home}/)")
    assert user[start:start + 6] == [f"  User ({home}/)", "    Skills", "      [x] mine", "    Prompts",
                                     "      [ ] review.md", "  Built-in"]
    assert not any(line.startswith("  Project (") for line in user)
    project = config_lines(str(agent), local=True, approve=True)
    assert f"  User ({home}/) · inherited global" in project
    assert "      [x] mine  inherited global" in project
    assert project[-3:] == [f"  Project ({agent}/.pi/)", "    Skills", "      [x] here"]
