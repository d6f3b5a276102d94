"""``pi install npm:NAME[@VERSION]`` without Node: fetched from the registry npm is
configured to use, checked against the published integrity, unpacked with its dependency
tree where pi 1.6 keeps it, and recorded as pi records it."""

import json
import os

import pytest

from pi_plugins.packages.manage import run_install, run_list, run_remove, run_update


def test_an_npm_package_is_installed_where_pi_keeps_it_and_recorded_in_pis_format(home, capsys):
    (home.agent / "settings.json").write_text('{"theme": "dark", "zeta": 1}')
    assert run_install("npm:pi-themes", [], cwd=str(home.project)) == 0
    out = capsys.readouterr().out
    assert out.startswith("Installing npm:pi-themes...\n") and "Installed npm:pi-themes\n" in out
    assert "pi-themes (index.ts): TypeScript extension for pi (Node); cannot run here" in out
    package = home.agent / "npm" / "node_modules" / "pi-themes"
    assert json.loads((package / "package.json").read_text())["version"] == "1.0.1"
    assert (package / "themes" / "dracula.json").is_file()
    text = (home.agent / "settings.json").read_text()
    assert text == '{\n  "theme": "dark",\n  "zeta": 1,\n  "packages": [\n    "npm:pi-themes"\n  ]\n}'
    root = json.loads((home.agent / "npm" / "package.json").read_text())
    assert root == {"name": "pi-extensions", "private": True, "dependencies": {"pi-themes": "^1.0.1"}}
    assert (home.agent / "npm" / ".gitignore").read_text() == "*\n!.gitignore\n"


def test_the_dependency_tree_is_installed_beside_the_package_as_npm_lays_it_out(home, registry):
    assert run_install("npm:pi-prompt-template-model@0.12.2", [], cwd=str(home.project)) == 0
    modules = home.agent / "npm" / "node_modules"
    assert sorted(os.listdir(modules)) == ["balanced-match", "brace-expansion", "minimatch",
                                           "pi-prompt-template-model"]
    assert json.loads((modules / "minimatch" / "package.json").read_text())["version"] == "10.2.6"
    assert home.settings()["packages"] == ["npm:pi-prompt-template-model@0.12.2"]
    root = json.loads((home.agent / "npm" / "package.json").read_text())
    assert root["dependencies"] == {"pi-prompt-template-model": "^0.12.2"}


def test_a_tampered_tarball_is_refused_and_nothing_is_installed(home, registry, capsys):
    registry.tamper("minimatch")  # a dependency: the whole tree is checked before writing
    assert run_install("npm:pi-prompt-template-model", [], cwd=str(home.project)) == 1
    err = capsys.readouterr().err
    assert "minimatch@10.2.6: integrity check failed" in err and "nothing was installed" in err
    assert not (home.agent / "npm").exists()
    assert not (home.agent / "settings.json").exists()


def test_a_package_the_registry_does_not_have_is_a_clear_error(home, capsys):
    assert run_install("npm:no-such-package", [], cwd=str(home.project)) == 1
    assert "npm package no-such-package not found in the registry" in capsys.readouterr().err


def test_reinstalling_replaces_the_entry_in_place(home):
    assert run_install("npm:pi-themes", [], cwd=str(home.project)) == 0
    assert run_install("npm:pi-prompt-template-model", [], cwd=str(home.project)) == 0
    assert run_install("npm:pi-themes@1.0.1", [], cwd=str(home.project)) == 0
    assert home.settings()["packages"] == ["npm:pi-themes@1.0.1", "npm:pi-prompt-template-model"]


def test_remove_deletes_the_package_and_what_only_it_needed(home, capsys):
    assert run_install("npm:pi-themes", [], cwd=str(home.project)) == 0
    assert run_install("npm:pi-prompt-template-model", [], cwd=str(home.project)) == 0
    capsys.readouterr()
    assert run_remove("npm:pi-prompt-template-model", [], cwd=str(home.project)) == 0
    assert capsys.readouterr().out.endswith("Removed npm:pi-prompt-template-model\n")
    assert os.listdir(home.agent / "npm" / "node_modules") == ["pi-themes"]
    assert home.settings()["packages"] == ["npm:pi-themes"]
    assert json.loads((home.agent / "npm" / "package.json").read_text())["dependencies"] == {"pi-themes": "^1.0.1"}
    assert run_remove("npm:pi-prompt-template-model", [], cwd=str(home.project)) == 1
    assert "No matching package found for npm:pi-prompt-template-model" in capsys.readouterr().err


def test_project_packages_need_a_trusted_project(home, capsys):
    (home.project / ".pi").mkdir()
    (home.project / ".pi" / "settings.json").write_text("{}")  # a file that asks for trust
    assert run_install("npm:pi-themes", [], local=True, cwd=str(home.project)) == 1
    assert "Project is not trusted. Use --approve to modify local package config." in capsys.readouterr().err
    assert run_install("npm:pi-themes", [], local=True, cwd=str(home.project), approve=True) == 0
    assert (home.project / ".pi" / "npm" / "node_modules" / "pi-themes").is_dir()
    assert home.settings(project=True) == {"packages": ["npm:pi-themes"]}


def test_list_shows_pi_packages_as_pi_does(home, capsys):
    assert run_install("npm:pi-themes", [], cwd=str(home.project)) == 0
    assert run_install("npm:pi-prompt-template-model@0.12.2", [], local=True, cwd=str(home.project)) == 0
    capsys.readouterr()
    assert run_list(cwd=str(home.project), approve=True) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "User packages:\n"
        "  npm:pi-themes\n"
        f"    {home.agent}/npm/node_modules/pi-themes\n"
        "\n"
        "Project packages:\n"
        "  npm:pi-prompt-template-model@0.12.2\n"
        f"    {home.project}/.pi/npm/node_modules/pi-prompt-template-model\n")
    assert out.count("pi-themes (index.ts)") == 1 and out.count("pi-prompt-template-model@0.12.2 (index.ts)") == 1


def test_update_brings_an_unpinned_package_to_the_latest_and_leaves_a_pinned_one(home, capsys):
    assert run_install("npm:pi-themes", [], cwd=str(home.project)) == 0
    manifest = home.agent / "npm" / "node_modules" / "pi-themes" / "package.json"
    manifest.write_text(manifest.read_text().replace('"version": "1.0.1"', '"version": "1.0.0"'))
    capsys.readouterr()
    assert run_update(None, [], extensions=True, cwd=str(home.project)) == 0
    out = capsys.readouterr().out
    assert "Updated 1 package:\n  npm:pi-themes 1.0.0 -> 1.0.1\n" in out
    assert run_update("npm:pi-themes", [], cwd=str(home.project)) == 0
    assert "npm:pi-themes is already up to date" in capsys.readouterr().out
    assert run_update("npm:pi-nothing", [], cwd=str(home.project)) == 1


def test_the_registry_comes_from_npmrc_when_the_environment_names_none(home, registry, monkeypatch):
    monkeypatch.delenv("npm_config_registry")
    (home.agent.parent / "home").mkdir()
    (home.agent.parent / "home" / ".npmrc").write_text(f"registry={registry.url}\n")
    assert run_install("npm:pi-themes", [], cwd=str(home.project)) == 0
    assert "pi-themes" in registry.requests


@pytest.mark.parametrize("source", ["npm:pi-themes", "git:github.com/user/repo"])
def test_a_bare_name_stays_a_pypi_package(source):
    from pi_plugins.packages.pi_commands import is_pi_source

    assert is_pi_source(source) and not is_pi_source("pi-themes")
