"""Run the real ``pi`` in a subprocess against the scripted LLM server (or set up this
process as one would be, for running pi in-process)."""

import json
import os
import subprocess
import sys
from pathlib import Path


def parse_run_args(*flags: str):
    """``pi``'s flags as the :class:`pi_core.app.RunArgs` its command line makes of them."""
    from pi_plugins.cli.run_args import RunArgs
    from pi_plugins.cli.main import run_command

    params = run_command.make_context("pi", list(flags)).params
    return RunArgs(messages=list(params.pop("messages")), print=params.pop("print_"), **params)


def use_environment(monkeypatch, env: dict[str, str], cwd: Path) -> None:
    """This process's environment becomes ``env`` alone (pytest's own variables kept) and
    its working directory ``cwd``, as for a subprocess started with them; undone after
    the test."""
    for name in list(os.environ):
        if name not in env and not name.startswith("PYTEST_"):
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(cwd)


class PiRunner:
    """A home for one test: an agent dir whose models.json points at the server, a
    project folder, and a way to run ``pi`` there."""

    def __init__(self, tmp_path: Path, server, api: str = "openai-completions"):
        self.server = server
        self.agent_dir = tmp_path / "agent"
        self.cwd = tmp_path / "project"
        self.agent_dir.mkdir(parents=True)
        self.cwd.mkdir(parents=True)
        (self.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", api)))
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(tmp_path / "home"),
            "PI_CODING_AGENT_DIR": str(self.agent_dir),
            "PYTHONUNBUFFERED": "1",
        }

    def flags(self, *args: str) -> list[str]:
        """pi's arguments for a run on the test model."""
        return ["--model", "local/test-model", *args]

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "pi_plugins.cli", *self.flags(*args)]

    def run(self, *args: str, input: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run(self.command(*args), cwd=self.cwd, env=self.env, input=input,
                              capture_output=True, text=True, timeout=timeout)

    def popen(self, *args: str) -> subprocess.Popen:
        return subprocess.Popen(self.command(*args), cwd=self.cwd, env=self.env, text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def sessions(self) -> list[Path]:
        return sorted((self.agent_dir / "sessions").rglob("*.jsonl"))

    def trust_project(self, trusted: bool = True) -> None:
        """Save a project trust decision for the project in this agent dir (what
        ``/trust`` does), so its ``.pi`` resources load in every mode."""
        trust_project(self.agent_dir, self.cwd, trusted)


def trust_project(agent_dir: Path, cwd: Path, trusted: bool = True) -> None:
    """Save a project trust decision for ``cwd`` in ``agent_dir``'s trust.json."""
    from pi_core.testing import trust_project as save

    save(agent_dir, cwd, trusted)


def pi16(runner: PiRunner, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """The real pi 1.6 run as ``runner`` runs ours (same flags, agent dir and project),
    offline so it never reaches for its model catalogue."""
    from support.programs import node_for, require_real

    package = require_real("pi16")
    return subprocess.run([node_for("pi16"), str(package / "dist" / "cli.js"), *runner.flags(*args)],
                          cwd=runner.cwd, env={**runner.env, "PI_OFFLINE": "1"}, capture_output=True,
                          text=True, timeout=timeout)
