"""``pi install git:HOST/OWNER/REPO[@REF]`` (and pi's ``https://``/``ssh://`` URL forms),
``pi update``, ``pi remove`` and ``pi list`` for git packages, against a real git
server on 127.0.0.1 that git reaches as ``git.example.com``: cloned where pi 1.6 keeps
them, checked out at their ref, recorded in settings as typed."""

import json
import os

import pytest

from pi_plugins.packages.configured import load
from pi_plugins.packages.manage import run_install, run_list, run_remove, run_update
from support.git_server import run_git

SKILL = "---\nname: {name}\ndescription: {text}\n---\nDo it.\n"
SOURCE = "git:git.example.com/owner/pkg"


@pytest.fixture
def repo(git_server):
    repo = git_server.repo("owner/pkg")
    repo.v1 = repo.commit({"package.json": json.dumps({"name": "pkg", "pi": {"skills": ["./skills"]}}),
                           "skills/helper/SKILL.md": SKILL.format(name="helper", text="Version one.")},
                          tag="v1")
    return repo


def clone_of(home, project=False):
    base = home.project / ".pi" if project else home.agent
    return base / "git" / "git.example.com" / "owner" / "pkg"


def skill_text(home):
    return (clone_of(home) / "skills" / "helper" / "SKILL.md").read_text()


def loaded_skills(home):
    from pi_core.app.settings import Settings

    settings = Settings.load(str(home.project), home.agent, project_trusted=True)
    return [r.path for r in load(settings, home.agent, home.project, True).enabled("skills")]


def test_a_git_package_is_cloned_where_pi_keeps_it_and_recorded_as_typed(home, repo, capsys):
    assert run_install(SOURCE, [], cwd=str(home.project)) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Installing {SOURCE}...\n") and f"Installed {SOURCE}\n" in out
    assert run_git("rev-parse", "HEAD", cwd=clone_of(home)) == repo.v1
    assert home.settings()["packages"] == [SOURCE]
    assert (home.agent / "git" / ".gitignore").read_text() == "*\n!.gitignore\n"
    assert loaded_skills(home) == [clone_of(home) / "skills" / "helper" / "SKILL.md"]
    assert run_list(cwd=str(home.project)) == 0
    assert capsys.readouterr().out.startswith(f"User packages:\n  {SOURCE}\n    {clone_of(home)}\n")


def test_update_moves_an_unpinned_package_to_the_branch_tip(home, repo, capsys):
    assert run_install(SOURCE, [], cwd=str(home.project)) == 0
    (clone_of(home) / "stray.txt").write_text("left by hand")
    v2 = repo.commit({"skills/helper/SKILL.md": SKILL.format(name="helper", text="Version two.")})
    capsys.readouterr()
    assert run_update(None, [], extensions=True, cwd=str(home.project)) == 0
    out = capsys.readouterr().out
    assert f"Updating {SOURCE}...\n" in out
    assert f"Updated 1 package:\n  {SOURCE} {repo.v1[:7]} -> {v2[:7]}\n" in out
    assert "Version two." in skill_text(home)
    assert not (clone_of(home) / "stray.txt").exists()  # pi's git clean -fdx
    assert run_update(SOURCE, [], cwd=str(home.project)) == 0
    assert capsys.readouterr().out.endswith(f"{SOURCE} is already up to date\n")


def test_a_pinned_tag_stays_put_on_update_and_a_new_ref_moves_the_checkout(home, repo, capsys):
    assert run_install(f"{SOURCE}@v1", [], cwd=str(home.project)) == 0
    v2 = repo.commit({"skills/helper/SKILL.md": SKILL.format(name="helper", text="Version two.")}, tag="v2")
    assert run_update(None, [], extensions=True, cwd=str(home.project)) == 0
    assert run_git("rev-parse", "HEAD", cwd=clone_of(home)) == repo.v1
    assert "Version one." in skill_text(home)
    assert "Packages are already up to date" in capsys.readouterr().out

    assert run_install(f"{SOURCE}@v2", [], cwd=str(home.project)) == 0
    assert run_git("rev-parse", "HEAD", cwd=clone_of(home)) == v2
    assert home.settings()["packages"] == [f"{SOURCE}@v2"]  # replaced in place, by identity


def test_a_branch_ref_follows_its_branch_on_update(home, repo, capsys):
    assert run_install(f"{SOURCE}@main", [], cwd=str(home.project)) == 0
    v2 = repo.commit({"skills/helper/SKILL.md": SKILL.format(name="helper", text="Version two.")})
    capsys.readouterr()
    assert run_update(f"{SOURCE}@main", [], cwd=str(home.project)) == 0
    assert f"  {SOURCE}@main {repo.v1[:7]} -> {v2[:7]}\n" in capsys.readouterr().out
    assert "Version two." in skill_text(home)


def test_project_git_packages_go_under_the_project(home, repo, capsys):
    assert run_install(SOURCE, [], local=True, cwd=str(home.project)) == 0
    assert run_git("rev-parse", "HEAD", cwd=clone_of(home, project=True)) == repo.v1
    assert home.settings(project=True) == {"packages": [SOURCE]}
    assert not (home.agent / "git").exists()
    v2 = repo.commit({"skills/helper/SKILL.md": SKILL.format(name="helper", text="Version two.")})
    capsys.readouterr()
    assert run_update(None, [], extensions=True, cwd=str(home.project), approve=True) == 0
    assert f"  {SOURCE} (project) {repo.v1[:7]} -> {v2[:7]}\n" in capsys.readouterr().out
    assert run_remove(SOURCE, [], local=True, cwd=str(home.project), approve=True) == 0
    assert not (home.project / ".pi" / "git" / "git.example.com").exists()
    assert home.settings(project=True) == {"packages": []}


def test_remove_deletes_the_clone_and_the_folders_it_leaves_empty(home, repo, capsys):
    assert run_install(SOURCE, [], cwd=str(home.project)) == 0
    capsys.readouterr()
    assert run_remove(SOURCE, [], cwd=str(home.project)) == 0
    assert capsys.readouterr().out == f"Removing {SOURCE}...\nRemoved {SOURCE}\n"
    assert sorted(os.listdir(home.agent / "git")) == [".gitignore"]
    assert home.settings()["packages"] == []
    assert run_remove(SOURCE, [], cwd=str(home.project)) == 1
    assert f"No matching package found for {SOURCE}" in capsys.readouterr().err


@pytest.mark.parametrize("url", ["https://git.example.com/owner/pkg.git", "ssh://git@git.example.com/owner/pkg"])
def test_pis_url_forms_are_git_packages_too(home, repo, url):
    assert run_install(url, [], cwd=str(home.project)) == 0
    assert run_git("rev-parse", "HEAD", cwd=clone_of(home)) == repo.v1
    assert home.settings()["packages"] == [url]
    assert run_remove(url, [], cwd=str(home.project)) == 0
    assert not clone_of(home).exists()


def test_a_repository_that_cannot_be_cloned_is_a_clear_error_and_leaves_nothing(home, git_server, capsys):
    assert run_install("git:git.example.com/owner/missing", [], cwd=str(home.project)) == 1
    err = capsys.readouterr().err
    assert "git clone https://git.example.com/owner/missing failed" in err
    assert not (home.agent / "git" / "git.example.com").exists()
    assert not (home.agent / "settings.json").exists()


def test_an_unknown_ref_is_refused_and_the_clone_removed(home, repo, capsys):
    assert run_install(f"{SOURCE}@v9", [], cwd=str(home.project)) == 1
    assert "git checkout v9 failed" in capsys.readouterr().err
    assert not clone_of(home).exists() and not (home.agent / "settings.json").exists()


def test_a_git_packages_runtime_dependencies_are_installed_in_its_clone(home, git_server, registry):
    repo = git_server.repo("owner/pkg")
    repo.commit({"package.json": json.dumps({"name": "pkg", "dependencies": {"minimatch": "^10.2.5"}})})
    assert run_install(SOURCE, [], cwd=str(home.project)) == 0
    modules = clone_of(home) / "node_modules"
    assert sorted(os.listdir(modules)) == ["balanced-match", "brace-expansion", "minimatch"]
