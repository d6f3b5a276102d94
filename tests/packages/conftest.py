"""Fixtures for pi packages: the local npm registry serving the real tarballs of
``tests/fixtures/pi-packages``, and a home (agent dir, project) that uses it."""

import json
from pathlib import Path

import pytest

from support.npm_registry import NpmRegistry


@pytest.fixture
def registry():
    with NpmRegistry() as running:
        yield running


class Home:
    """An agent dir and a project folder; ``pi(...)`` runs our pi command in-process."""

    def __init__(self, tmp_path: Path, monkeypatch, registry) -> None:
        self.agent = tmp_path / "agent"
        self.project = tmp_path / "project"
        self.agent.mkdir()
        self.project.mkdir()
        monkeypatch.setenv("PI_CODING_AGENT_DIR", str(self.agent))
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        monkeypatch.setenv("npm_config_registry", registry.url)
        monkeypatch.delenv("PI_OFFLINE", raising=False)
        monkeypatch.chdir(self.project)

    def settings(self, project: bool = False) -> dict:
        return json.loads((self.project / ".pi" / "settings.json" if project
                           else self.agent / "settings.json").read_text())


@pytest.fixture
def home(tmp_path, monkeypatch, registry):
    return Home(tmp_path, monkeypatch, registry)


@pytest.fixture
def git_server(tmp_path, monkeypatch):
    """A git server reached as ``git.example.com`` through a global git config."""
    from support.git_server import GitServer
    from support.programs import require_program

    require_program("git", "git packages are cloned with git")
    with GitServer(tmp_path / "git-server") as running:
        for name, value in running.env.items():
            monkeypatch.setenv(name, value)
        yield running
