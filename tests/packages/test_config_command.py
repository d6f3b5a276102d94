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


def own_files(agent_dir, project):
    """Your own skills, prompts and a theme in the agent dir, a prompt of the project's."""
    for name in ("mine", "other"):
        (agent_dir / "skills" / name).mkdir(parents=True)
        (agent_dir / "skills" / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: D.\n---\nx\n")
    (agent_dir / "prompts").mkdir()
    (agent_dir / "prompts" / "review.md").write_text("Review\n")
    (agent_dir / "prompts" / "fix.md").write_text("Fix\n")
    (agent_dir / "themes").mkdir()
    (agent_dir / "themes" / "t1.json").write_text('{"name": "t1"}')
    (project / ".pi" / "prompts").mkdir(parents=True, exist_ok=True)
    (project / ".pi" / "prompts" / "local.md").write_text("Local\n")


def without_builtins(lines):
    """The lines after the packages, the built-ins left out (pi 1.6's are other ones)."""
    start = next(i for i, line in enumerate(lines) if line.startswith("  User ("))
    kept, skipping = [], False
    for line in lines[start:]:
        if line.startswith("  "):
            skipping = line.startswith("  Built-in") if not line.startswith("    ") else skipping
        if not skipping:
            kept.append(line)
    return kept


def test_the_projects_marks_on_your_own_files_are_shown_as_pi16_shows_them(tmp_path, monkeypatch):
    """Project entries naming one of your own files (by its path from ``.pi``, from its
    own folder, or absolute; a skill by its ``SKILL.md``) load it ``[+]`` or unload it
    ``[-]``; pi 1.6's ``pi config -l`` with these settings, its built-ins left out."""
    agent_dir, project = tmp_path / "agent", tmp_path / "proj"
    (project / ".pi").mkdir(parents=True)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent_dir))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    own_files(agent_dir, project)
    (agent_dir / "settings.json").write_text(json.dumps({"prompts": ["-prompts/fix.md"]}))
    (project / ".pi" / "settings.json").write_text(json.dumps({
        "skills": [f"-{agent_dir}/skills/mine", "+skills/other/SKILL.md"],  # a skill's folder names nothing
        "prompts": ["-prompts/review.md", f"+{agent_dir}/prompts/fix.md"],
        "themes": ["-../../agent/themes/t1.json"]}))
    assert without_builtins(config_lines(str(project), local=True, approve=True)) == [
        f"  User ({agent_dir}/) · inherited global",
        "    Skills",
        "      [x] mine  inherited global",
        "      [+] other  project load",
        "    Prompts",
        "      [+] fix.md  project load",
        "      [-] review.md  project unload",
        "    Themes",
        "      [-] t1.json  project unload",
        f"  Project ({project}/.pi/)",
        "    Prompts",
        "      [x] local.md",
    ]


def test_your_files_the_project_lists_are_its_own_group_and_its_built_in_switches_another(tmp_path, monkeypatch):
    """pi 1.6: a file the project's settings list shows under "Project settings" (still
    "inherited global"); a path the user's settings list, under "User settings" rather
    than the folder it is in; the built-ins the project switches, in a group of their own."""
    agent_dir, project = tmp_path / "agent", tmp_path / "proj"
    (project / ".pi").mkdir(parents=True)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent_dir))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    own_files(agent_dir, project)
    (agent_dir / "settings.json").write_text(json.dumps({
        "prompts": ["-prompts/fix.md"], "skills": ["skills/other"], "extensions": ["-builtin:compaction"]}))
    (project / ".pi" / "settings.json").write_text(json.dumps({
        "skills": [f"{agent_dir}/skills/mine", f"-{agent_dir}/skills/mine"],
        "prompts": [f"{agent_dir}/prompts/fix.md", f"+{agent_dir}/prompts/fix.md"],
        "extensions": ["-builtin:mcp", "+builtin:compaction"]}))
    lines = config_lines(str(project), local=True, approve=True)
    assert without_builtins(lines) == [
        f"  User ({agent_dir}/) · inherited global",
        "    Prompts",
        "      [x] review.md  inherited global",
        "    Themes",
        "      [x] t1.json  inherited global",
        "  User settings · inherited global",
        "    Skills",
        "      [x] other  inherited global",
        f"  Project ({project}/.pi/)",
        "    Prompts",
        "      [x] local.md",
        "  Project settings",
        "    Skills",
        "      [ ] mine  inherited global",
        "    Prompts",
        "      [+] fix.md  project load",
    ]
    start = lines.index("  Built-in (project override)")  # between the project's folder and its settings
    assert lines[start - 1:start + 5] == ["      [x] local.md", "  Built-in (project override)", "    Extensions",
                                          "      [+] compaction  project load", "      [-] mcp  project unload",
                                          "  Project settings"]
    assert "      [x] budget  inherited global" in lines and not any(" mcp  inherited" in line for line in lines)
    user = config_lines(str(project), local=False, approve=False)
    assert "  Built-in (project override)" not in user and "      [ ] compaction" in user


def test_the_built_ins_are_listed_by_name_as_pi16_lists_them(agent):
    lines = config_lines(str(agent), local=False, approve=True)
    start = lines.index("  Built-in") + 2  # past the group's "Extensions" line
    names = []
    for line in lines[start:]:
        if not line.startswith("      ["):
            break
        names.append(line.split("] ", 1)[1])
    assert len(names) > 10 and "mcp" in names and "codemode" in names
    assert names == sorted(names, key=str.casefold)
