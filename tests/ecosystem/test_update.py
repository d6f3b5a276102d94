"""pi update (pi 1.6's command) through pip, offline: a folder of wheels is the package
index (``--no-index --find-links DIR``), in a fresh venv, as the pi install tests do."""

from importlib import metadata

import pytest
from support.wheels import build_wheel, pip_install

pytestmark = pytest.mark.process


def _index(plugin_env):
    return ["--no-index", "--find-links", str(plugin_env.wheels)]


def test_update_extensions_upgrades_every_plugin_package_from_the_index(plugin_env):
    first = plugin_env.wheel("pi-multi", "1.0.0", {"alpha": "alpha_tool"})
    other = plugin_env.wheel("pi-other", "2.0.0", {"other": "other_tool"})
    for wheel in (first, other):
        assert plugin_env.pi("install", str(wheel)).returncode == 0
    plugin_env.wheel("pi-multi", "1.1.0", {"alpha": "alpha_tool", "beta": "beta_tool"})
    out = plugin_env.pi("update", "--extensions", *_index(plugin_env))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "Updating pi-multi, pi-other...",
        "Updated pi-multi 1.0.0 -> 1.1.0: plugins alpha, beta",
        "pi-other 2.0.0 is up to date",
        "The plugins load the next time pi starts.",
    ]
    assert "beta_tool" in plugin_env.tools()


def test_update_of_one_package_names_it_and_an_unknown_one_is_refused(plugin_env):
    assert plugin_env.pi("install", str(plugin_env.wheel("pi-multi", "1.0.0", {"alpha": "a_tool"}))).returncode == 0
    plugin_env.wheel("pi-multi", "1.2.0", {"alpha": "a_tool"})
    out = plugin_env.pi("update", "pi-multi", *_index(plugin_env))
    assert out.returncode == 0, out.stderr
    assert "Updated pi-multi 1.0.0 -> 1.2.0: plugins alpha" in out.stdout
    again = plugin_env.pi("update", "--extension", "alpha", *_index(plugin_env))  # by plugin name
    assert again.returncode == 0 and "pi-multi 1.2.0 is up to date" in again.stdout
    missing = plugin_env.pi("update", "pi-nothing", *_index(plugin_env))
    assert missing.returncode == 1 and "No installed plugin package matches pi-nothing" in missing.stderr


def test_update_itself_leaves_an_editable_checkout_alone_and_all_goes_on_with_the_plugins(plugin_env):
    # this suite's pi-harness is the editable install of the work tree: pip must not replace it
    out = plugin_env.pi("update", *_index(plugin_env))
    assert out.returncode == 1
    assert "pi-harness" in out.stderr and "editable install" in out.stderr
    assert plugin_env.pi("update", "self", *_index(plugin_env)).returncode == 1
    assert plugin_env.pi("install", str(plugin_env.wheel("pi-multi", "1.0.0", {"alpha": "a_tool"}))).returncode == 0
    plugin_env.wheel("pi-multi", "1.0.1", {"alpha": "a_tool"})
    out = plugin_env.pi("update", "--all", *_index(plugin_env))
    assert out.returncode == 0, out.stderr
    assert "editable install" in out.stderr
    assert "Updated pi-multi 1.0.0 -> 1.0.1: plugins alpha" in out.stdout


def _own_wheel(folder, version: str):
    """pi-harness at ``version`` as the index would hold it: its metadata and entry
    points (the code stays this work tree's, which the venv sees behind its own)."""
    points = metadata.distribution("pi-harness").entry_points
    groups: dict[str, dict[str, str]] = {}
    for point in points:
        groups.setdefault(point.group, {})[point.name] = point.value
    return build_wheel(folder, "pi-harness", version, {}, groups)


def test_update_upgrades_pi_harness_itself_from_the_index(plugin_env, tmp_path):
    installed = tmp_path / "installed"
    installed.mkdir()
    pip_install(plugin_env.python, _own_wheel(installed, "0.1.0"))  # installed from a wheel, not editable
    _own_wheel(plugin_env.wheels, "0.1.1")
    out = plugin_env.pi("update", *_index(plugin_env))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["Updating pi-harness...", "Updated pi-harness 0.1.0 -> 0.1.1"]
    again = plugin_env.pi("update", "self", *_index(plugin_env))
    assert again.returncode == 0 and "pi-harness 0.1.1 is up to date" in again.stdout
    assert "read" in plugin_env.tools()  # the built-ins still load
