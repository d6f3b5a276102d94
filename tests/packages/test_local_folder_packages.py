"""``pi install ./folder`` for an unpacked pi package (a ``package.json``, or pi's
resource folders): recorded in settings.json ``packages`` relative to the settings file's
folder and loaded from where it is, without copying, as pi 1.6 does; ``pi remove`` takes
the same path back. Compared with the real pi 1.6 when it is here."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from support.npm_registry import FIXTURES
from support.programs import node_for, real_available, require_real

pytestmark = pytest.mark.process


def _home(root: Path) -> tuple[dict, Path, Path]:
    """(environment, project folder, unpacked pi-themes) under ``root``."""
    with tarfile.open(FIXTURES / "pi-themes-1.0.1.tgz") as archive:
        archive.extractall(root, filter="data")
    (root / "agent").mkdir()
    (root / "proj").mkdir()
    env = {"PATH": __import__("os").environ["PATH"], "HOME": str(root / "home"),
           "PI_CODING_AGENT_DIR": str(root / "agent"), "PI_OFFLINE": "1"}
    return env, root / "proj", root / "package"


def _ours(env: dict, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pi_plugins.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def _pi16(env: dict, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    package = require_real("pi16")
    return subprocess.run([node_for("pi16"), str(package / "dist" / "cli.js"), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def _scenario(run, root: Path) -> dict:
    """Install the folder for the user and the project, list, then remove both."""
    env, project, _ = _home(root)
    user = run(env, project, "install", "../package")
    local = run(env, project, "install", "../package", "-l", "--approve")
    listed = run(env, project, "list")
    settings = {"user": json.loads((root / "agent" / "settings.json").read_text()),
                "project": json.loads((project / ".pi" / "settings.json").read_text())}
    removed = run(env, project, "remove", "../package")
    after = json.loads((root / "agent" / "settings.json").read_text())
    return {"codes": [user.returncode, local.returncode, listed.returncode, removed.returncode],
            # (ours adds a note naming the package's TypeScript extension, which cannot run here)
            "out": ["\n".join(done.stdout.splitlines()[:2]) for done in (user, local, removed)],
            "listed": listed.stdout, "settings": settings, "after": after}


def test_a_local_pi_package_is_recorded_relative_to_its_settings_file_and_removed_by_its_path(tmp_path):
    ours = _scenario(_ours, tmp_path)
    assert ours["codes"] == [0, 0, 0, 0]
    assert ours["settings"] == {"user": {"packages": ["../package"]},
                                "project": {"packages": ["../../package"]}}
    assert ours["out"] == ["Installing ../package...\nInstalled ../package",
                           "Installing ../package...\nInstalled ../package",
                           "Removing ../package...\nRemoved ../package"]
    assert str(tmp_path / "package") in ours["listed"]  # loaded from where it is
    assert ours["after"] == {"packages": []}
    assert not (tmp_path / "agent" / "npm").exists()  # nothing copied or fetched
    if real_available("pi16"):
        theirs = _scenario(_pi16, tmp_path / "pi16")
        assert theirs["codes"] == ours["codes"] and theirs["settings"] == ours["settings"]
        assert theirs["out"] == ours["out"] and theirs["after"] == ours["after"]


def test_a_python_plugin_folder_still_goes_to_extensions(tmp_path):
    env, project, _ = _home(tmp_path)
    plugin = tmp_path / "my_plugin"
    plugin.mkdir()
    (plugin / "__init__.py").write_text("from pi_core import hookimpl\n")
    done = _ours(env, project, "install", str(plugin))
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "agent" / "settings.json").read_text()) == {"extensions": [str(plugin)]}


def _skill_package(root: Path) -> Path:
    folder = root / "skpkg"
    (folder / "skills" / "demo").mkdir(parents=True)
    (folder / "skills" / "demo" / "SKILL.md").write_text(
        "---\nname: demo-skill\ndescription: A skill of a folder package.\n---\nDo it.\n")
    (folder / "package.json").write_text('{"name": "skpkg", "version": "1.0.0"}')
    return folder


def test_e_with_a_pi_package_folder_loads_its_skills_for_the_run(tmp_path, server):
    from support.llm_server import Reply

    env, project, _ = _home(tmp_path)
    _skill_package(tmp_path)
    (tmp_path / "agent" / "models.json").write_text(json.dumps(server.models_json("local", apiKey="k")))
    runs = [("ours", _ours)] + ([("pi16", _pi16)] if real_available("pi16") else [])
    for who, run in runs:
        server.push(Reply(text="ok"))
        extra = ["-ne"] if who == "pi16" else []  # pi's own extensions would add tools of their own
        done = run(env, project, "-e", "../skpkg", *extra, "--model", "local/test-model", "--no-session", "-p", "hi")
        assert done.returncode == 0, f"{who}: {done.stderr}"
        system = server.requests[-1].body["messages"][0]["content"]
        system = system if isinstance(system, str) else "".join(part["text"] for part in system)
        assert "<name>demo-skill</name>" in system, who
        assert "failed" not in done.stderr, done.stderr
    assert not (tmp_path / "agent" / "settings.json").exists()  # for the run only
