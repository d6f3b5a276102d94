import json
import os
import subprocess
from pathlib import Path

import pytest

from support.wheels import make_venv, tool_wheel


class PluginEnv:
    """A venv that sees this environment's packages (a fresh one, or ``python``'s), a home
    with an agent dir and a project folder; runs ``pi`` (``python -m pi_plugins.cli``) there."""

    def __init__(self, base: Path, python: Path | None = None):
        self.base = base
        self.python = python or make_venv(base / "venv")
        self.agent_dir = base / "agent"
        self.cwd = base / "project"
        self.wheels = base / "wheels"
        for folder in (self.agent_dir, self.cwd, self.wheels):
            folder.mkdir(parents=True, exist_ok=True)
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(base / "home"),
                    "PI_CODING_AGENT_DIR": str(self.agent_dir), "PIP_NO_INDEX": "1"}

    def pi(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([self.python, "-m", "pi_plugins.cli", *args], cwd=cwd or self.cwd,
                              env=self.env, capture_output=True, text=True, timeout=120)

    def python_run(self, code: str) -> subprocess.CompletedProcess:
        return subprocess.run([self.python, "-c", code], cwd=self.cwd, env=self.env,
                              capture_output=True, text=True, timeout=60)

    def wheel(self, dist: str, version: str = "1.0.0", tools: dict[str, str] | None = None) -> Path:
        """A wheel of ``dist`` whose plugins (name → tool name) each register one tool."""
        return tool_wheel(self.wheels, dist, version, tools)

    def settings(self, data: dict, project: bool = False) -> Path:
        path = (self.cwd / ".pi" if project else self.agent_dir) / "settings.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data))
        if project:  # a project's settings apply once it is trusted
            from support.cli import trust_project

            trust_project(self.agent_dir, self.cwd)
        return path

    def plugins_json(self, *args: str) -> dict:
        out = self.pi("plugins", "--json", *args)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    def tools(self) -> list[str]:
        """The tools an agent built by plugin discovery gets in this environment."""
        out = self.python_run(
            "import asyncio\n"
            "from pi_core import Agent\n"
            "from pi_core.app.discovery import load_plugins\n"
            "from pi_core.testing import scripted_model\n"
            "agent = Agent(model=scripted_model(), plugins=load_plugins(), providers=[])\n"
            "asyncio.run(agent.setup())\n"
            "print(' '.join(sorted(t.name for t in agent.tools)))\n")
        assert out.returncode == 0, out.stderr
        return out.stdout.split()


@pytest.fixture
def plugin_env(tmp_path):
    return PluginEnv(tmp_path)


@pytest.fixture
def sample_plugin_env(tmp_path, sample_venv):
    """A :class:`PluginEnv` in the shared venv of sample plugins (``support.wheels.SAMPLES``):
    for tests that only look; they must not install or remove anything."""
    return PluginEnv(tmp_path, python=sample_venv)
