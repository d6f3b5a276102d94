"""pi install / pi remove / pi list, run as the real CLI in a fresh venv with real pip."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.process  # starts real processes (see tests/conftest.py)

ROOT = Path(__file__).parents[2]
#: The plugin package docs/plugins.md shows, installed here as a user would.
HELLO = ROOT / "docs" / "examples" / "hello-plugin"


def write_project(folder):
    shutil.copytree(HELLO, folder, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    return folder


def test_setuptools_can_build_a_local_project_offline(plugin_env):
    """pi install of a path builds it; with --no-build-isolation pip uses the installed
    setuptools (the [test] extra asks for one that builds wheels by itself)."""
    out = plugin_env.python_run("import setuptools.command.bdist_wheel, setuptools; print(setuptools.__version__)")
    assert out.returncode == 0, "setuptools>=70.1 is needed: pip install -e '.[test]'\n" + out.stderr


def test_installing_a_local_plugin_project_gives_the_next_run_its_tool_and_remove_takes_it_away(plugin_env):
    project = write_project(plugin_env.cwd / "hello-plugin")

    out = plugin_env.pi("install", "./hello-plugin", "--no-build-isolation")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "Installing ./hello-plugin...",
        "Installed pi-hello 0.1.0: plugins hello",
        "The plugins load the next time pi starts.",
    ]

    listed = plugin_env.plugins_json()["plugins"]
    [hello] = [p for p in listed if p["name"] == "hello"]
    assert (hello["source"], hello["distribution"], hello["version"], hello["location"], hello["hooks"]) == (
        "entry point", "pi-hello", "0.1.0", "pi_hello", ["register_tools"])
    assert "greet" in plugin_env.tools()

    out = plugin_env.pi("list")
    assert out.returncode == 0, out.stderr
    assert "  pi-hello 0.1.0\n    plugins: hello\n" in out.stdout
    assert f"    from: {project}\n" in out.stdout
    packages = json.loads(plugin_env.pi("list", "--json").stdout)["packages"]
    assert [(p["name"], p["plugins"], p["origin"], p["editable"]) for p in packages] == [
        ("pi-hello", ["hello"], str(project), False)]

    out = plugin_env.pi("remove", "./hello-plugin")  # the project path names the package
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["Removing pi-hello...", "Removed pi-hello 0.1.0: plugins hello"]
    assert "greet" not in plugin_env.tools()
    assert plugin_env.pi("list").stdout.startswith("No packages installed.")


def test_an_editable_install_is_listed_as_editable_and_sees_source_changes(plugin_env):
    project = write_project(plugin_env.base / "src" / "hello")
    out = plugin_env.pi("install", "--editable", str(project), "--no-build-isolation")
    assert out.returncode == 0, out.stderr
    assert "Installed pi-hello 0.1.0: plugins hello" in out.stdout
    assert f"    from: {project} (editable)" in plugin_env.pi("list").stdout
    init = project / "pi_hello" / "__init__.py"
    init.write_text(init.read_text().replace("def greet", "def salute").replace("[greet]", "[salute]"))
    assert "salute" in plugin_env.tools()


def test_an_upgrade_reports_versions_and_plugins_and_remove_finds_a_package_by_plugin_name(plugin_env):
    first = plugin_env.wheel("pi-multi", "1.0.0", {"alpha": "alpha_tool", "beta": "beta_tool"})
    out = plugin_env.pi("install", str(first))
    assert out.returncode == 0, out.stderr
    assert "Installed pi-multi 1.0.0: plugins alpha, beta" in out.stdout
    again = plugin_env.pi("install", str(first))
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[1:] == [
        "pi-multi 1.0.0 is installed: plugins alpha, beta",
        "Nothing new: " + str(first) + " was already installed (pip options such as --upgrade go after SOURCE).",
    ]

    plugin_env.settings({"plugins": {"disabled": ["alpha"], "enabled": ["alpha", "beta"]}})
    second = plugin_env.wheel("pi-multi", "2.0.0", {"alpha": "alpha_tool", "gamma": "gamma_tool"})
    out = plugin_env.pi("install", str(second))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[1:] == [
        "Updated pi-multi 1.0.0 -> 2.0.0: plugins alpha, gamma",
        "  no longer provides: beta",
        "note: plugin alpha will not load: disabled (plugins.disabled)",
        "note: plugin gamma will not load: not in plugins.enabled",
        "The plugins load the next time pi starts.",
    ]
    assert "    plugins: alpha (disabled), gamma (disabled)\n" in plugin_env.pi("list").stdout
    [row] = json.loads(plugin_env.pi("list", "--json").stdout)["packages"]
    assert (row["version"], row["plugins"], row["disabled"]) == ("2.0.0", ["alpha", "gamma"], ["alpha", "gamma"])

    plugin_env.settings({})
    tools = plugin_env.tools()
    assert {"alpha_tool", "gamma_tool"} <= set(tools) and "beta_tool" not in tools

    out = plugin_env.pi("remove", "gamma")
    assert out.returncode == 0, out.stderr
    assert "Removed pi-multi 2.0.0: plugins alpha, gamma" in out.stdout
    assert json.loads(plugin_env.pi("list", "--json").stdout)["packages"] == []


def test_installing_a_package_without_plugins_warns(plugin_env):
    plain = plugin_env.wheel("plain-lib", tools={})
    out = plugin_env.pi("install", str(plain))
    assert out.returncode == 0, out.stderr
    assert "installed plain-lib 1.0.0, but none of it provides pi plugins" in out.stderr


@pytest.mark.parametrize("args, message", [
    (["remove", "click"], "click is installed but provides no pi plugins"),
    (["remove", "pi-harness"], "pi-harness is pi itself"),
    (["install", "./missing"], "./missing: no such file or directory"),
    (["install", "--no-deps"], "give SOURCE first"),
    (["install", "-l", "pi-todo"], "-l applies to plugin files only"),
    (["remove", "-l", "pi-todo"], "-l applies to plugin files only"),
])
def test_requests_that_cannot_be_right_are_refused_with_exit_2_before_pip_runs(plugin_env, args, message):
    out = plugin_env.pi(*args)
    assert out.returncode == 2
    assert message in out.stderr
    assert "Installing" not in out.stdout and "Removing" not in out.stdout


def test_removing_what_is_not_installed_fails_with_exit_1(plugin_env):
    out = plugin_env.pi("remove", "pi-nothing-here")
    assert out.returncode == 1
    assert "No installed plugin package matches pi-nothing-here" in out.stderr


def test_a_failed_pip_install_shows_pips_output_and_changes_nothing(plugin_env):
    broken = plugin_env.cwd / "broken"
    broken.mkdir()
    (broken / "pyproject.toml").write_text("[project\nname = ")
    out = plugin_env.pi("install", "./broken", "--no-build-isolation")
    assert out.returncode == 1
    assert "pip could not install" in out.stderr and "TOMLDecodeError" in out.stderr
    assert json.loads(plugin_env.pi("list", "--json").stdout)["packages"] == []


def test_a_package_outside_the_environment_is_left_alone_and_reported(plugin_env, tmp_path):
    """A plugin package visible from a parent environment: pip will not uninstall it from
    here, and pi remove says so instead of claiming success."""
    from support.wheels import make_venv, pip_install

    inner = make_venv(tmp_path / "inner")
    pip_install(plugin_env.python, plugin_env.wheel("pi-outer"))
    outer_site = subprocess.run([plugin_env.python, "-c", "import site; print(site.getsitepackages()[0])"],
                                capture_output=True, text=True, check=True).stdout.strip()
    inner_site = subprocess.run([inner, "-c", "import site; print(site.getsitepackages()[0])"],
                                capture_output=True, text=True, check=True).stdout.strip()
    (Path(inner_site) / "zz_outer.pth").write_text(outer_site + "\n")
    out = subprocess.run([inner, "-m", "pi_plugins.cli", "remove", "pi-outer"], cwd=plugin_env.cwd,
                         env=plugin_env.env, capture_output=True, text=True)
    assert out.returncode == 1
    assert "pi-outer is still installed" in out.stderr and "outside the environment" in out.stderr
    assert "pi-outer" in plugin_env.pi("list").stdout
