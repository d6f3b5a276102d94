"""The skills, prompt templates and themes of pi packages configured in settings.json
load as pi 1.6 loads them: per the package's ``pi`` manifest (or its conventional
folders), after the project's and the user's own, in settings order, filtered by the
object form, project packages only in a trusted project."""

import json
import shutil
import tarfile
from pathlib import Path

import pytest

from pi_core.app.settings import Settings
from pi_core.context import Context
from pi_core.plugins import Plugins
from pi_core.protocol.options import ResourceOptions
from pi_plugins import packages, prompt_templates, skills
from pi_plugins.interactive.themes import load_themes
from pi_plugins.packages.configured import extension_label, load
from support.npm_registry import FIXTURES
from support.agents import run
from support.resources import write_skill

PI16_SKILL_ORDER = ["proj-skill", "user-skill", "prompt-template-authoring", "council-mode", "pi-subagents"]


def unpack_into(root: Path, tarball: str) -> Path:
    """A package laid out as ``npm install`` leaves it (the tarball's ``package/``)."""
    with tarfile.open(FIXTURES / tarball) as archive:
        name = json.load(archive.extractfile("package/package.json"))["name"]
        target = root / "node_modules" / name
        for member in archive.getmembers():
            member.name = member.name.partition("/")[2]
        archive.extractall(target, members=[m for m in archive.getmembers() if m.name], filter="data")
    return target


def settings(agent: Path, data: dict) -> None:
    (agent / "settings.json").write_text(json.dumps(data))


@pytest.fixture
def pi_dir(tmp_path, monkeypatch):
    """An agent dir as pi 1.6 leaves it after installing the three packages, with one
    user skill, and a project with one project skill."""
    agent, project = tmp_path / "agent", tmp_path / "proj"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for tarball in ("pi-themes-1.0.1.tgz", "pi-prompt-template-model-0.12.2.tgz", "pi-subagents-0.67.0.tgz"):
        unpack_into(agent / "npm", tarball)
    settings(agent, {"packages": ["npm:pi-themes", "npm:pi-prompt-template-model@0.12.2", "npm:pi-subagents@0.67.0"]})
    write_skill(agent / "skills" / "user-skill", description="A user skill.")
    write_skill(project / ".pi" / "skills" / "proj-skill", description="A project skill.")
    return agent, project


def skills_of(ctx):
    return run(skills.find_skills(ctx))


def templates_of(ctx):
    return run(prompt_templates.find_templates(ctx))


def make_ctx(agent: Path, project: Path, trusted: bool = True, options=None, with_packages=True) -> Context:
    plugins = Plugins()
    for plugin in (packages, skills, prompt_templates) if with_packages else (skills, prompt_templates):
        plugins.register(plugin)
    return Context(cwd=str(project), plugins=plugins, agent_dir=agent, options=options or ResourceOptions(),
                   settings=Settings.load(str(project), agent, project_trusted=trusted))


def test_package_skills_come_after_the_projects_and_the_users_in_settings_order(pi_dir):
    found = skills_of(make_ctx(*pi_dir))
    assert [s.name for s in found.skills] == PI16_SKILL_ORDER
    authoring = found.get("prompt-template-authoring")
    assert authoring.path == pi_dir[0] / "npm/node_modules/pi-prompt-template-model/skills/prompt-template-authoring/SKILL.md"
    assert authoring.description.endswith("best-of-N compare flows.\n")  # the | block's newline, as pi
    assert found.problems == []


def test_without_the_packages_builtin_the_settings_packages_give_nothing(pi_dir):
    """``-builtin:packages`` switches pi packages off: what is on disk does not load."""
    found = skills_of(make_ctx(*pi_dir, with_packages=False))
    assert [s.name for s in found.skills] == ["proj-skill", "user-skill"]
    assert [t.name for t in templates_of(make_ctx(*pi_dir, with_packages=False)).templates] == []


def test_e_minus_builtin_packages_switches_them_off_for_the_run_as_the_settings_entry_does(pi_dir):
    from pi_core.app.discovery import load_plugins

    agent, project = pi_dir
    trusted = Settings.load(str(project), agent, project_trusted=True)

    def skill_names(extension_paths):
        plugins = load_plugins(cwd=project, agent_dir=agent, settings=trusted, extension_paths=extension_paths)
        ctx = Context(cwd=str(project), plugins=plugins, agent_dir=agent, options=ResourceOptions(),
                      settings=trusted)
        return [s.name for s in skills_of(ctx).skills], plugins

    found, plugins = skill_names(["-builtin:packages"])
    assert found == ["proj-skill", "user-skill"]
    assert {s.name: s.reason for s in plugins.skipped}["packages"] == "dropped (-e -builtin:packages)"
    assert not plugins.errors  # not "no plugin at .../-builtin:packages"
    assert skill_names([])[0] == PI16_SKILL_ORDER


def test_package_prompt_templates_load_per_the_manifest(pi_dir):
    found = templates_of(make_ctx(*pi_dir))
    assert [t.name for t in found.templates] == ["council", "gather-context-and-clarify", "parallel-cleanup",
                                                 "parallel-research", "parallel-review", "review-loop"]
    assert found.get("council").argument_hint  # examples/, agents/ and docs/ are not prompts
    assert found.get("best-of-n") is None


def test_the_manifests_theme_folder_loads_and_the_unlisted_one_does_not(pi_dir):
    agent, project = pi_dir
    themes, problems = load_themes(cwd=project, agent_dir=agent, settings=Settings.load(str(project), agent))
    loaded = {n: p.source for n, p in themes.items() if p.source != "builtin"}
    assert sorted(loaded) == ["catppuccin-latte", "catppuccin-mocha", "dracula", "gruvbox-dark", "gruvbox-light",
                              "nord", "one-dark", "solarized-dark", "solarized-light", "tokyo-night"]
    assert all("/pi-themes/themes/" in source for source in loaded.values())


def test_the_object_form_filters_what_a_package_gives(pi_dir):
    agent, project = pi_dir
    settings(agent, {"packages": [
        {"source": "npm:pi-subagents@0.67.0", "skills": ["!council-mode"], "prompts": ["prompts/review-*.md"]},
        {"source": "npm:pi-prompt-template-model@0.12.2", "skills": []},
    ]})
    ctx = make_ctx(agent, project)
    assert [s.name for s in (skills_of(ctx)).skills] == ["proj-skill", "user-skill", "pi-subagents"]
    assert [t.name for t in (templates_of(ctx)).templates] == ["review-loop"]


def test_a_project_entry_with_autoload_false_changes_only_what_it_names(pi_dir):
    agent, project = pi_dir
    (project / ".pi" / "settings.json").write_text(json.dumps({"packages": [
        {"source": "npm:pi-subagents@0.67.0", "autoload": False, "skills": ["-skills/council-mode/SKILL.md"]}]}))
    names = [s.name for s in (skills_of(make_ctx(agent, project))).skills]
    assert names == ["proj-skill", "user-skill", "prompt-template-authoring", "pi-subagents"]


def test_project_packages_load_only_in_a_trusted_project(pi_dir, tmp_path):
    agent, project = pi_dir
    settings(agent, {})
    unpack_into(project / ".pi" / "npm", "pi-subagents-0.67.0.tgz")
    (project / ".pi" / "settings.json").write_text('{"packages": ["npm:pi-subagents"]}')
    assert [s.name for s in (skills_of(make_ctx(agent, project, trusted=False))).skills] == ["user-skill"]
    assert [s.name for s in (skills_of(make_ctx(agent, project))).skills] == \
        ["proj-skill", "user-skill", "council-mode", "pi-subagents"]


def test_no_skills_leaves_package_skills_out_too(pi_dir):
    found = skills_of(make_ctx(*pi_dir, options=ResourceOptions(skills=False)))
    assert found.skills == []


def test_a_package_pi_installed_with_npm_install_g_is_found_in_the_global_npm_root(pi_dir, monkeypatch, tmp_path):
    """pi 0.73.1 installed user packages with ``npm install -g``; pi 1.6 still finds them."""
    agent, project = pi_dir
    shutil.rmtree(agent / "npm")
    prefix = tmp_path / "global"
    unpack_into(prefix / "lib", "pi-subagents-0.67.0.tgz")
    monkeypatch.setenv("npm_config_prefix", str(prefix))
    settings(agent, {"packages": ["npm:pi-subagents", "npm:not-installed"]})
    ctx = make_ctx(agent, project)
    found = skills_of(ctx)
    assert found.get("council-mode").path.is_relative_to(prefix / "lib" / "node_modules")
    resources = load(ctx.settings, agent, project, True)
    assert any("npm:not-installed is not installed" in p for p in resources.problems)


def test_package_extensions_are_named_as_pis_header_names_them(pi_dir):
    agent, project = pi_dir
    resources = load(Settings.load(str(project), agent), agent, project, True)
    assert [extension_label(r) for r in resources.enabled("extensions")] == \
        ["pi-themes", "pi-prompt-template-model@0.12.2", "pi-subagents@0.67.0"]


def test_a_package_without_a_manifest_uses_the_conventional_folders(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    agent, project, package = tmp_path / "agent", tmp_path / "proj", tmp_path / "pkg"
    project.mkdir()
    (package / "prompts" / "deep").mkdir(parents=True)
    (package / "prompts" / "deep" / "nested.md").write_text("Nested.")
    (package / "prompts" / ".hidden.md").write_text("Hidden.")
    write_skill(package / "skills" / "one")
    (package / "skills" / "loose.md").write_text("---\ndescription: Loose.\n---\n")
    (package / "extensions" / "tool").mkdir(parents=True)
    (package / "extensions" / "a.ts").write_text("")
    (package / "extensions" / "tool" / "index.js").write_text("")
    (package / ".gitignore").write_text("")
    (package / "skills" / ".gitignore").write_text("one/\n")
    agent.mkdir()
    settings(agent, {"packages": ["../pkg"]})  # a local path, relative to the agent dir
    resources = load(Settings.load(str(project), agent), agent, project, True)
    rel = {kind: [r.relative for r in resources.enabled(kind)] for kind in ("skills", "prompts", "extensions")}
    assert rel == {"skills": ["skills/loose.md"], "prompts": ["prompts/deep/nested.md"],
                   "extensions": ["extensions/a.ts", "extensions/tool/index.js"]}
