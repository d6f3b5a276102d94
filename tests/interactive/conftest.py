"""The interactive mode in a real terminal (tmux) against the scripted LLM server.

``pi_tui(*args, settings=..., plugin=..., files=...)`` starts ``pi`` in a 100×40 tmux pane, in a
project folder under a HOME of its own (so the footer reads ``~/project``), with a
models.json naming two local models served by the scripted server.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from support.llm_server import LlmServer
from support.programs import require_program
from support.terminal import Terminal



@pytest.fixture
def server():
    with LlmServer() as running:
        yield running


class PiTerminal(Terminal):
    """A terminal running ``pi``, with the paths a test needs."""

    home: Path
    cwd: Path
    agent_dir: Path

    def sessions(self) -> list[Path]:
        return sorted((self.agent_dir / "sessions").rglob("*.jsonl"))

    def entries(self) -> list[dict]:
        [session] = self.sessions()
        return [json.loads(line) for line in session.read_text().splitlines()[1:]]

    def wait_drawn(self, check, timeout: float = 10.0) -> str:
        """Like ``wait_for``, on a screen where the editor and footer are drawn (printing
        into the scrollback hides them for a moment)."""
        test = (lambda s: check in s) if isinstance(check, str) else check
        return self.wait_for(lambda s: "(auto)" in "".join(s.rstrip().split("\n")[-3:]) and test(s), timeout)

    def editor(self, screen: str) -> str:
        """The editor's text on a drawn screen: what stands between its two borders."""
        lines = screen.rstrip().split("\n")
        borders = [i for i, line in enumerate(lines) if line and set(line) == {"─"}]
        if len(borders) < 2:
            return ""
        top, bottom = borders[-2], borders[-1]
        return "\n".join(line.strip() for line in lines[top + 1:bottom]).strip()

    def wait_idle(self, timeout: float = 10.0) -> str:
        """The screen once the agent is done (no working line) and the editor is back."""
        return self.wait_for(lambda s: "Working..." not in s and "esc to cancel" not in s
                             and "(auto)" in s, timeout)

    def submit(self, text: str) -> None:
        self.type(text)
        self.press("Enter")


@pytest.fixture
def pi_tui(tmp_path, server):
    require_program("tmux", ".ci/run installs it")
    started: list[PiTerminal] = []
    home = tmp_path
    cwd = home / "project"
    agent_dir = home / "agent"
    cwd.mkdir()
    agent_dir.mkdir()
    models = server.models_json("local", models=[
        {"id": "test-model", "name": "Test Model", "contextWindow": 128000, "reasoning": True,
         "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}},
        {"id": "other-model", "name": "Other Model", "contextWindow": 64000},
    ])
    (agent_dir / "models.json").write_text(json.dumps(models))

    def start(*args: str, settings: dict | None = None, plugin: str | None = None,
              files: dict[str, str] | None = None, width: int = 100, height: int = 40) -> PiTerminal:
        for name, text in (files or {}).items():
            (cwd / name).parent.mkdir(parents=True, exist_ok=True)
            (cwd / name).write_text(text)
        if settings is not None:
            (agent_dir / "settings.json").write_text(json.dumps(settings))
        extra = []
        if plugin is not None:
            path = tmp_path / "test_plugin.py"
            path.write_text(textwrap.dedent(plugin))
            extra = ["-e", str(path)]
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "PI_CODING_AGENT_DIR": str(agent_dir),
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "SHELL": "/bin/sh",
            "PYTHONUNBUFFERED": "1",
        }
        argv = [sys.executable, "-m", "pi_core.cli", "--model", "local/test-model", *extra, *args]
        term = PiTerminal(tmp_path, argv, env=env, cwd=cwd, width=width, height=height)
        term.home, term.cwd, term.agent_dir = home, cwd, agent_dir
        started.append(term)
        term.wait_for("(auto)", timeout=20)
        return term

    yield start
    for term in started:
        term.close()
