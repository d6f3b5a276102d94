"""pi install / remove of plugin files: recorded in settings.json "extensions", like pi's
local paths (global by default, the project's with -l)."""

import json

import pytest

from support.cli import trust_project

from pi_core.app.discovery import load_plugins
from pi_plugins.packages.manage import classify, plugin_files, run_install, run_list, run_remove

TURN_END = "from pi_core import hookimpl\n\n@hookimpl\ndef turn_end(event):\n    pass\n"


@pytest.fixture
def where(tmp_path, monkeypatch):
    agent, cwd = tmp_path / "agent", tmp_path / "project"
    cwd.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    return agent, cwd


def test_a_plugin_file_is_added_to_global_settings_and_loads_on_the_next_run(where, capsys):
    agent, cwd = where
    (cwd / "notes.py").write_text(TURN_END)
    assert run_install("./notes.py", [], cwd=str(cwd)) == 0
    settings = agent / "settings.json"
    assert capsys.readouterr().out == f"Added plugin file {cwd / 'notes.py'} (plugin notes) in {settings}\n"
    assert json.loads(settings.read_text()) == {"extensions": [str(cwd / "notes.py")]}
    plugins = load_plugins(cwd=cwd, agent_dir=agent)
    assert ("notes", "settings") in [(i.name, i.source) for i in plugins.infos]

    assert run_install(str(cwd / "notes.py"), [], cwd=str(cwd)) == 0  # idempotent
    assert "Already listed" in capsys.readouterr().out
    assert json.loads(settings.read_text()) == {"extensions": [str(cwd / "notes.py")]}

    assert run_remove("./notes.py", [], cwd=str(cwd)) == 0
    assert json.loads(settings.read_text()) == {"extensions": []}
    assert "notes" not in [i.name for i in load_plugins(cwd=cwd, agent_dir=agent).infos]


def test_local_install_records_a_path_relative_to_the_projects_pi_folder(where, capsys):
    agent, cwd = where
    (cwd / "plugins" / "review").mkdir(parents=True)
    (cwd / "plugins" / "review" / "__init__.py").write_text(TURN_END)
    existing = {"defaultModel": "x/y", "extensions": ["other.py"]}
    (cwd / ".pi").mkdir()
    (cwd / ".pi" / "settings.json").write_text(json.dumps(existing))
    trust_project(agent, cwd)  # the project's settings are read once it is trusted
    assert run_install("plugins/review", [], local=True, cwd=str(cwd)) == 0
    data = json.loads((cwd / ".pi" / "settings.json").read_text())
    assert data == {"defaultModel": "x/y", "extensions": ["other.py", "../plugins/review"]}
    assert not (agent / "settings.json").exists()
    assert [f["path"] for f in plugin_files(cwd)][-1] == str(cwd / "plugins" / "review")

    assert run_remove("plugins/review", [], cwd=str(cwd)) == 1  # not in the global file
    assert "(a project's entry needs -l)" in capsys.readouterr().err
    assert run_remove("plugins/review", [], local=True, cwd=str(cwd)) == 0
    assert json.loads((cwd / ".pi" / "settings.json").read_text())["extensions"] == ["other.py"]


def test_a_plugin_file_that_does_not_load_is_refused_and_settings_stay_as_they_were(where, capsys):
    agent, cwd = where
    (cwd / "bad.py").write_text("from pi_core import hookimpl\n\n@hookimpl\ndef turn_ned(event):\n    pass\n")
    assert run_install("./bad.py", [], cwd=str(cwd)) == 1
    assert "no hook named 'turn_ned'" in capsys.readouterr().err
    assert not (agent / "settings.json").exists()


def test_invalid_settings_json_is_never_overwritten(where, capsys):
    agent, cwd = where
    agent.mkdir()
    (agent / "settings.json").write_text("{ not json")
    (cwd / "ok.py").write_text(TURN_END)
    assert run_install("./ok.py", [], cwd=str(cwd)) == 1
    assert "is not valid JSON" in capsys.readouterr().err
    assert (agent / "settings.json").read_text() == "{ not json"


def test_pi_list_shows_plugin_files_with_their_scope(where, capsys):
    agent, cwd = where
    (cwd / "a.py").write_text(TURN_END)
    run_install("./a.py", [], cwd=str(cwd))
    (cwd / ".pi").mkdir()
    (cwd / ".pi" / "settings.json").write_text(json.dumps({"extensions": ["gone.py"]}))
    assert run_list(cwd=str(cwd)) == 0  # not trusted yet: the project's file is not read
    assert ".pi" not in capsys.readouterr().out
    assert run_list(cwd=str(cwd), approve=True) == 0
    assert f"  {cwd / '.pi' / 'gone.py'}  (project, missing)\n" in capsys.readouterr().out
    trust_project(agent, cwd)
    capsys.readouterr()
    assert run_list(cwd=str(cwd)) == 0
    out = capsys.readouterr().out
    assert f"  {cwd / 'a.py'}  (global)\n" in out
    assert f"  {cwd / '.pi' / 'gone.py'}  (project, missing)\n" in out


def test_pi_list_leaves_the_extensions_patterns_and_builtin_switches_out(where, capsys):
    """``!glob``, ``+path``, ``-path`` and ``±builtin:NAME`` name no file (pi 1.6's ``pi
    list`` does not show them either); a file a pattern leaves out says so."""
    agent, cwd = where
    agent.mkdir()
    (agent / "a.py").write_text(TURN_END)
    (agent / "b.py").write_text(TURN_END)
    (agent / "settings.json").write_text(json.dumps({"extensions": [
        "!glob/*.ts", "+path/x.py", "-path/y.py", "-builtin:mcp", "+builtin:skills", "builtin:themes",
        "./a.py", "./b.py", "-./b.py"]}))
    assert run_list(cwd=str(cwd)) == 0
    assert capsys.readouterr().out == (
        'Plugin files (settings.json "extensions"):\n'
        f"  {agent / 'a.py'}  (global)\n"
        f"  {agent / 'b.py'}  (global, left out)\n")
    loaded = [i.name for i in load_plugins(cwd=cwd, agent_dir=agent).infos]
    assert "a" in loaded and "b" not in loaded  # as the list says
    (agent / "ext.ts").write_text("export default function () {}\n")
    (agent / "settings.json").write_text(json.dumps({"extensions": ["./ext.ts"]}))  # pi's: named, not run
    assert run_list(cwd=str(cwd)) == 0
    assert f"  {agent / 'ext.ts'}  (global, for pi on Node: cannot run here)\n" in capsys.readouterr().out
    (agent / "settings.json").write_text(json.dumps({"extensions": ["!*.py", "-builtin:mcp"]}))
    assert run_list(cwd=str(cwd)) == 0
    assert "No packages installed." in capsys.readouterr().out
    assert plugin_files(cwd) == []


@pytest.mark.parametrize("source, kind, value", [
    ("pi-todo", "pip", "pi-todo"),
    ("pi-todo>=1.2", "pip", "pi-todo>=1.2"),
    ("git+https://example.com/u/r@v1", "pip", "git+https://example.com/u/r@v1"),
    ("git:github.com/user/repo@v1", "pip", "git+https://github.com/user/repo@v1"),
    ("git:git@github.com:user/repo", "pip", "git+ssh://git@github.com/user/repo"),
    ("git:https://example.com/u/r", "pip", "git+https://example.com/u/r"),
])
def test_sources_are_read_as_pi_reads_them(tmp_path, source, kind, value):
    found = classify(source, tmp_path)
    assert (found.kind, found.value) == (kind, value)


def test_a_folder_is_a_package_when_it_has_a_project_file_else_a_plugin_folder(tmp_path):
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "pyproject.toml").write_text("[project]\nname='x'\n")
    (tmp_path / "plug").mkdir()
    (tmp_path / "plug" / "__init__.py").write_text("")
    (tmp_path / "empty").mkdir()
    assert classify("./proj", tmp_path).kind == "pip"
    assert classify("./plug", tmp_path).kind == "file"
    with pytest.raises(Exception, match="a folder needs a pyproject.toml"):
        classify("./empty", tmp_path)


def test_the_built_ins_are_declared_once_in_load_order_and_not_as_entry_points():
    """One list (pi_core.app.builtins) names the built-ins and their order; pyproject
    declares no entry point for them, so there is no second list to keep equal."""
    import importlib
    import importlib.util
    import tomllib
    from pathlib import Path

    from pi_core.app.builtins import BUILTINS

    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert "pi.plugins" not in pyproject["project"].get("entry-points", {})
    for location in BUILTINS.values():  # a module, or ``module:attr``
        module, _, attr = location.partition(":")
        assert importlib.util.find_spec(module), location
        assert not attr or hasattr(importlib.import_module(module), attr), location


