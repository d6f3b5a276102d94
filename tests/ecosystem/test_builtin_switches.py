"""pi 1.6's switches for built-in plugins: ``-builtin:NAME`` / ``+builtin:NAME`` in the
settings ``extensions`` list (the project's entry over the user's) and ``-e builtin:NAME``,
by the names ``pi plugins`` shows; so a package can replace a built-in such as compaction."""

import json
import subprocess
import sys

import pytest
from support.cli import trust_project
from support.llm_server import Reply

from pi_core.app.discovery import load_plugins

REPLACEMENT = '''
from pi_core import hookimpl


@hookimpl
def session_before_compact(event, ctx):
    return {"cancel": True}
'''


def home(tmp_path, user=None, project=None, trusted=True):
    agent, cwd = tmp_path / "agent", tmp_path / "project"
    agent.mkdir(exist_ok=True)
    (cwd / ".pi").mkdir(parents=True, exist_ok=True)
    if user is not None:
        (agent / "settings.json").write_text(json.dumps({"extensions": user}))
    if project is not None:
        (cwd / ".pi" / "settings.json").write_text(json.dumps({"extensions": project}))
        trust_project(agent, cwd, trusted)
    return agent, cwd


def loaded(tmp_path, **kwargs):
    return load_plugins(cwd=tmp_path / "project", agent_dir=tmp_path / "agent", **kwargs)


def names(plugins):
    return [i.name for i in plugins.infos]


def reasons(plugins):
    return {s.name: s.reason for s in plugins.skipped}


def test_minus_builtin_drops_a_built_in_and_says_why(tmp_path):
    home(tmp_path, user=["-builtin:compaction"])
    plugins = loaded(tmp_path)
    assert "compaction" not in names(plugins) and "budget" in names(plugins)
    assert reasons(plugins) == {"compaction": "dropped (-builtin:compaction in the user settings)"}
    assert not plugins.errors  # a switch is not a path to load


def test_a_package_replaces_the_dropped_built_in(tmp_path):
    agent, _ = home(tmp_path, user=["-builtin:compaction"])
    (agent / "extensions").mkdir()
    (agent / "extensions" / "my_compaction.py").write_text(REPLACEMENT)
    plugins = loaded(tmp_path)
    assert [i.plugin for i in plugins.impls("session_before_compact")] == ["my_compaction"]


def test_the_projects_entry_overrides_the_users(tmp_path):
    home(tmp_path, user=["-builtin:compaction", "-builtin:budget"], project=["+builtin:compaction"])
    plugins = loaded(tmp_path)
    assert "compaction" in names(plugins)
    assert reasons(plugins) == {"budget": "dropped (-builtin:budget in the user settings)"}
    home(tmp_path, user=["+builtin:compaction"], project=["-builtin:compaction"])
    assert reasons(loaded(tmp_path)) == {"compaction": "dropped (-builtin:compaction in the project settings)"}


def test_an_untrusted_projects_entry_does_not_apply(tmp_path):
    home(tmp_path, project=["-builtin:compaction"], trusted=False)
    assert "compaction" in names(loaded(tmp_path))


def test_in_one_list_a_drop_wins(tmp_path):
    for entries in (["+builtin:compaction", "-builtin:compaction"], ["-builtin:compaction", "+builtin:compaction"]):
        home(tmp_path, user=entries)
        assert "compaction" not in names(loaded(tmp_path))


def test_a_switch_overrides_plugins_disabled_for_that_built_in(tmp_path):
    agent, _ = home(tmp_path)
    (agent / "settings.json").write_text(json.dumps(
        {"plugins": {"disabled": ["compaction", "budget"]}, "extensions": ["+builtin:compaction"]}))
    plugins = loaded(tmp_path)
    assert "compaction" in names(plugins)
    assert reasons(plugins) == {"budget": "disabled (plugins.disabled)"}


def test_names_match_whatever_their_spelling_of_dashes_and_case(tmp_path):
    home(tmp_path, user=["-builtin:Print-Mode"])
    assert "print_mode" not in names(loaded(tmp_path))


def test_dash_e_builtin_loads_a_built_in_whatever_settings_say(tmp_path):
    agent, _ = home(tmp_path, user=["-builtin:compaction"])
    plugins = loaded(tmp_path, extension_paths=["builtin:compaction"])
    assert ("compaction", "builtin") in [(i.name, i.source) for i in plugins.infos]
    assert not plugins.errors
    # its place is the built-ins' place, not the command line's
    assert names(plugins).index("compaction") < names(plugins).index("print_mode")
    only = loaded(tmp_path, extension_paths=["builtin:compaction"], builtins=False)
    assert names(only) == ["compaction"]


def test_dash_e_minus_builtin_drops_a_built_in_for_the_run_over_the_settings(tmp_path):
    """``-e -builtin:NAME`` is the settings entry for one run: it wins over the settings'
    ``+builtin:NAME``, and over ``-e builtin:NAME`` beside it. (pi 1.6 refuses it as an
    extension path that does not exist; here it does what the settings entry does.)"""
    home(tmp_path, user=["+builtin:compaction"])
    plugins = loaded(tmp_path, extension_paths=["-builtin:compaction"])
    assert "compaction" not in names(plugins) and "budget" in names(plugins)
    assert reasons(plugins) == {"compaction": "dropped (-e -builtin:compaction)"}
    assert not plugins.errors  # a switch is not a path to load
    both = loaded(tmp_path, extension_paths=["builtin:compaction", "-builtin:compaction"], builtins=False)
    assert "compaction" not in names(both)
    assert "compaction" in names(loaded(tmp_path, extension_paths=["+builtin:compaction"], builtins=False))


def test_an_unknown_built_in_is_reported(tmp_path):
    home(tmp_path, user=["-builtin:nope"])
    plugins = loaded(tmp_path, extension_paths=["builtin:neither", "-builtin:nor"])
    problems = " ".join(str(e) for e in plugins.errors)
    assert "builtin:nope" in problems and "builtin:neither" in problems and "-e -builtin:nor:" in problems
    assert "compaction" in names(plugins)


@pytest.mark.process
def test_pi_plugins_shows_the_dropped_built_in_and_why(tmp_path):
    home(tmp_path, user=["-builtin:compaction"])
    run = subprocess.run([sys.executable, "-m", "pi_plugins.cli", "plugins"], cwd=tmp_path / "project",
                         capture_output=True, text=True, timeout=60,
                         env={"PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "PATH": "/usr/bin:/bin",
                              "HOME": str(tmp_path / "home")})
    assert run.returncode == 0, run.stderr
    assert ("compaction  (builtin, pi-harness 0.1.0)  pi_plugins.compaction  "
            "[dropped (-builtin:compaction in the user settings)]") in run.stdout
    assert "budget  (builtin, pi-harness 0.1.0)  pi_plugins.budget\n" in run.stdout
    assert not run.stderr


@pytest.mark.process
def test_the_real_pi_drops_and_loads_back_a_built_in(pi, server, tmp_path):
    """Through the command line: the print mode is a built-in like any other."""
    (pi.agent_dir / "settings.json").write_text(json.dumps({"extensions": ["-builtin:print_mode"]}))
    server.push(Reply(text="back"))
    dropped = pi.run("-p", "hi")
    assert dropped.returncode == 2 and "--mode text: no plugin provides this mode" in dropped.stderr
    loaded_back = pi.run("-e", "builtin:print_mode", "-p", "hi")
    assert loaded_back.returncode == 0, loaded_back.stderr
    assert loaded_back.stdout == "back\n"
