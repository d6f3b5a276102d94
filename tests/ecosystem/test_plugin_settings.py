"""plugins.enabled / plugins.disabled: which discovered plugins load, and pi plugins."""

import json
import subprocess
import sys

import pytest

from support.cli import trust_project

from pi_core.app.discovery import PluginPolicy, load_plugins
from pi_core.app.settings import Settings


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


TURN_END = "from pi_core import hookimpl\n\n@hookimpl\ndef turn_end(event):\n    pass\n"
EXPLODES = "raise RuntimeError('this plugin must never be imported')\n"


def home(tmp_path, settings=None, project_settings=None):
    agent, cwd = tmp_path / "agent", tmp_path / "project"
    agent.mkdir(exist_ok=True)
    cwd.mkdir(exist_ok=True)
    if settings is not None:
        write(agent / "settings.json", json.dumps(settings))
    if project_settings is not None:
        write(cwd / ".pi" / "settings.json", json.dumps(project_settings))
        trust_project(agent, cwd)  # a project's settings apply once it is trusted
    return agent, cwd


def loaded(tmp_path, **kwargs):
    agent, cwd = tmp_path / "agent", tmp_path / "project"
    return load_plugins(cwd=cwd, agent_dir=agent, **kwargs)


def test_a_disabled_builtin_is_not_loaded_and_is_reported_as_skipped(tmp_path):
    home(tmp_path, {"plugins": {"disabled": ["tools", "print_mode"]}})
    plugins = loaded(tmp_path)
    names = [i.name for i in plugins.infos]
    assert "tools" not in names and "print_mode" not in names and "compaction" in names
    assert [(s.name, s.source, s.distribution, s.reason) for s in plugins.skipped] == [
        ("tools", "builtin", "pi-harness", "disabled (plugins.disabled)"),
        ("print_mode", "builtin", "pi-harness", "disabled (plugins.disabled)"),
    ]


def test_a_disabled_plugin_file_is_never_imported(tmp_path):
    agent, cwd = home(tmp_path, {"plugins": {"disabled": ["explodes"]}})
    write(agent / "extensions" / "explodes.py", EXPLODES)
    write(cwd / ".pi" / "extensions" / "fine.py", TURN_END)
    trust_project(agent, cwd)
    plugins = loaded(tmp_path)
    assert not plugins.errors
    assert "fine" in [i.name for i in plugins.infos]
    [skipped] = plugins.skipped
    assert (skipped.name, skipped.source, skipped.location) == (
        "explodes", "file", str(agent / "extensions" / "explodes.py"))


def test_the_allow_list_keeps_out_unlisted_discovered_plugins_but_not_builtins(tmp_path):
    agent, cwd = home(tmp_path, {"plugins": {"enabled": ["wanted"]}})
    write(agent / "extensions" / "wanted.py", TURN_END)
    write(agent / "extensions" / "unwanted.py", EXPLODES)
    plugins = loaded(tmp_path)
    names = [i.name for i in plugins.infos]
    assert "wanted" in names and "unwanted" not in names
    assert "tools" in names and "system_prompt" in names  # built-ins need no listing
    assert [(s.name, s.reason) for s in plugins.skipped] == [("unwanted", "not in plugins.enabled")]


def test_disabled_wins_over_enabled(tmp_path):
    agent, _ = home(tmp_path, {"plugins": {"enabled": ["both"], "disabled": ["both"]}})
    write(agent / "extensions" / "both.py", TURN_END)
    plugins = loaded(tmp_path)
    assert [(s.name, s.reason) for s in plugins.skipped] == [("both", "disabled (plugins.disabled)")]


def test_a_projects_list_replaces_the_global_one(tmp_path):
    agent, _ = home(tmp_path, {"plugins": {"disabled": ["first"]}},
                    project_settings={"plugins": {"disabled": ["second"]}})
    write(agent / "extensions" / "first.py", TURN_END)
    write(agent / "extensions" / "second.py", TURN_END)
    plugins = loaded(tmp_path)
    assert "first" in [i.name for i in plugins.infos]
    assert [s.name for s in plugins.skipped] == ["second"]


def test_names_match_whatever_their_spelling_of_dashes_and_case(tmp_path):
    home(tmp_path, {"plugins": {"disabled": ["Print-Mode", "PI_HARNESS"]}})
    plugins = loaded(tmp_path)
    assert plugins.infos == []  # pi-harness, the distribution, covers every built-in
    assert len(plugins.skipped) > 10


def test_explicit_paths_load_even_when_disabled(tmp_path):
    home(tmp_path, {"plugins": {"disabled": ["mine"], "enabled": []}})
    mine = write(tmp_path / "mine.py", TURN_END)
    plugins = loaded(tmp_path, extension_paths=[mine])
    assert ("mine", "cli") in [(i.name, i.source) for i in plugins.infos]


def test_a_malformed_setting_is_reported_and_ignored(tmp_path):
    agent, _ = home(tmp_path, {"plugins": {"disabled": "tools", "enabled": ["x", 3]}})
    write(agent / "extensions" / "kept.py", TURN_END)
    plugins = loaded(tmp_path)
    assert "tools" in [i.name for i in plugins.infos] and "kept" in [i.name for i in plugins.infos]
    problems = [str(e) for e in plugins.errors]
    assert any("plugins.disabled must be a list" in p for p in problems)
    assert any("plugins.enabled must be a list" in p for p in problems)


def test_settings_given_by_the_caller_are_used_instead_of_the_files(tmp_path):
    home(tmp_path, {"plugins": {"disabled": ["tools"]}})
    plugins = loaded(tmp_path, settings=Settings({"plugins": {"disabled": ["skills"]}}))
    names = [i.name for i in plugins.infos]
    assert "tools" in names and "skills" not in names


def test_a_settings_extension_named_twice_loads_once(tmp_path):
    plugin = write(tmp_path / "shared.py", TURN_END)
    home(tmp_path, {"extensions": [str(plugin)]}, project_settings={"extensions": [str(plugin)]})
    plugins = loaded(tmp_path, extension_paths=[plugin])
    assert [(i.name, i.source) for i in plugins.infos if i.name.startswith("shared")] == [
        ("shared", "settings")]


def test_unmatched_names_are_found_for_warnings():
    policy = PluginPolicy(enabled=["pi-todo", "typo"], disabled=["Tools"])
    assert policy.unmatched(["todo", "pi-todo", "tools"]) == ["typo"]


# ---------------------------------------------------------------- pi plugins


def pi(tmp_path, *args):
    return subprocess.run([sys.executable, "-m", "pi_plugins.cli", *args], cwd=tmp_path / "project",
                          capture_output=True, text=True, timeout=60,
                          env={"PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "PATH": "/usr/bin:/bin",
                               "HOME": str(tmp_path / "home")})


@pytest.mark.process
def test_pi_plugins_shows_disabled_plugins_as_disabled(tmp_path):
    agent, _ = home(tmp_path, {"plugins": {"disabled": ["compaction", "mine", "typo"]}})
    write(agent / "extensions" / "mine.py", EXPLODES)
    out = pi(tmp_path, "plugins")
    assert out.returncode == 0, out.stderr
    assert ("compaction  (builtin, pi-harness 0.1.0)  pi_plugins.compaction  [disabled (plugins.disabled)]\n"
            "    hooks: (not loaded)\n") in out.stdout
    assert f"mine  (file)  {agent / 'extensions' / 'mine.py'}  [disabled (plugins.disabled)]" in out.stdout
    assert "warning: settings name a plugin that is not installed: typo" in out.stderr
    rows = {r["name"]: r for r in json.loads(pi(tmp_path, "plugins", "--json").stdout)["plugins"]}
    assert (rows["compaction"]["enabled"], rows["compaction"]["hooks"]) == (False, None)
    assert rows["tools"]["enabled"] is True  # an enabled plugin lists the hooks it implements
    assert {"register_tools", "session_start"} <= set(rows["tools"]["hooks"])


@pytest.mark.process
def test_pi_plugins_still_works_with_every_plugin_disabled(tmp_path):
    home(tmp_path, {"plugins": {"disabled": ["pi-harness"]}})
    out = pi(tmp_path, "plugins", "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["plugins"]
    assert rows and all(not r["enabled"] for r in rows)
    assert pi(tmp_path, "--help").returncode == 0


@pytest.mark.process
def test_disabling_by_distribution_covers_all_its_plugins_in_a_venv(sample_plugin_env):
    plugin_env = sample_plugin_env  # pi-pair is installed there, with plugins left and right
    assert {"left_tool", "right_tool"} <= set(plugin_env.tools())
    plugin_env.settings({"plugins": {"disabled": ["pi-pair"]}})
    assert not {"left_tool", "right_tool"} & set(plugin_env.tools())
    rows = [r for r in plugin_env.plugins_json()["plugins"] if r["distribution"] == "pi-pair"]
    assert [(r["name"], r["enabled"], r["reason"]) for r in rows] == [
        ("left", False, "disabled (plugins.disabled)"), ("right", False, "disabled (plugins.disabled)")]
    plugin_env.settings({"plugins": {"enabled": ["right"]}}, project=True)
    plugin_env.settings({})
    tools = plugin_env.tools()
    assert "right_tool" in tools and "left_tool" not in tools
