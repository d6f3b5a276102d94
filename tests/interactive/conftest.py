"""The interactive mode against the scripted LLM server, in a real terminal (tmux) or in
this process on an emulated screen.

``pi_tui(*args, settings=..., plugin=..., files=...)`` starts ``pi`` in a 100×40 tmux pane, in a
project folder under a HOME of its own (so the footer reads ``~/project``), with a
models.json naming two local models served by the scripted server. ``pi_screen`` takes
the same arguments and runs the interactive app in this process, keys through
prompt_toolkit's pipe input and the screen emulated (``support.screen``): for dialogs and
drawing; what needs a real terminal (its modes, signals, resizes) uses ``pi_tui``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import textwrap
import threading
import traceback
from pathlib import Path

import pytest

from support.cli import parse_run_args, use_environment
from support.programs import require_program
from support.terminal import Terminal


class PiScreenHelpers:
    """What tests ask of a screen running ``pi`` (a tmux pane or an emulated one), and
    the paths a test needs."""

    home: Path
    cwd: Path
    agent_dir: Path
    #: How long the program must have been quiet for an idle screen to count (a real
    #: terminal receives a full-screen frame in pieces; the emulated one whole).
    settle_options: dict = {}

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
                             and "(auto)" in s, timeout, **self.settle_options)

    def submit(self, text: str) -> None:
        self.type(text)
        self.press("Enter")


class PiTerminal(PiScreenHelpers, Terminal):
    """A tmux pane running ``pi``."""

    settle_options = {"settle": 0.05}


class PiScreen(PiScreenHelpers):
    """``pi`` (the interactive mode) on a thread of this process, on an emulated screen."""

    def __init__(self, flags: list[str], width: int, height: int) -> None:
        from prompt_toolkit.input import create_pipe_input

        from support.screen import EmulatedTerminal

        self._pipe_context = create_pipe_input()
        self._pipe = self._pipe_context.__enter__()
        self.terminal = EmulatedTerminal(self._pipe, width, height)
        self.type, self.press = self.terminal.type, self.terminal.press
        self.screen, self.wait_for = self.terminal.screen, self.terminal.wait_for
        self._app = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._started = threading.Event()
        self.error: str | None = None
        self.exit_code: int | None = None
        self._thread = threading.Thread(target=self._main, args=(parse_run_args(*flags),),
                                        name="pi-interactive", daemon=True)
        self._thread.start()

    def _main(self, args) -> None:
        try:
            self.exit_code = asyncio.run(self._serve(args))
        except BaseException:
            self.error = traceback.format_exc()
        finally:
            self._started.set()

    async def _serve(self, args) -> int:
        from pi_plugins.cli.wiring import build_app
        from pi_plugins.interactive.app import InteractiveApp

        app = await build_app(args, chat=True)  # the chat, as the terminal runs it
        try:
            self._app = InteractiveApp(app, input=self._pipe, output=self.terminal.output)
            self._loop = asyncio.get_running_loop()
            self._started.set()
            return await self._app.run()
        finally:
            await app.harness.close()

    def close(self) -> None:
        """Quit the app (as its SIGTERM handler would) and wait for the thread."""
        self._started.wait(20)
        if self._loop is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._app.exit)
        self._thread.join(10)
        self._pipe_context.__exit__(None, None, None)
        if self._thread.is_alive():
            raise AssertionError("the interactive app did not end within 10 s of exit()")
        if self.error:
            raise AssertionError(f"the interactive app crashed:\n{self.error}")


class _PiHome:
    """A HOME with an agent dir (models.json on the server) and a project folder, and the
    environment and flags that start pi there."""

    def __init__(self, tmp_path: Path, server) -> None:
        self.tmp_path = tmp_path
        self.home = tmp_path
        self.cwd = self.home / "project"
        self.agent_dir = self.home / "agent"
        self.cwd.mkdir()
        self.agent_dir.mkdir()
        models = server.models_json("local", models=[
            {"id": "test-model", "name": "Test Model", "contextWindow": 128000, "reasoning": True,
             "input": ["text", "image"],
             "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}},
            {"id": "other-model", "name": "Other Model", "contextWindow": 64000},
            {"id": "third-model", "name": "Third Model", "contextWindow": 32000},
        ])
        (self.agent_dir / "models.json").write_text(json.dumps(models))
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "PI_CODING_AGENT_DIR": str(self.agent_dir),
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "SHELL": "/bin/sh",
            "PYTHONUNBUFFERED": "1",
        }

    def flags(self, args, settings: dict | None, plugin: str | None, files: dict[str, str] | None,
              agent_files: dict[str, str] | None = None) -> list[str]:
        for name, text in (agent_files or {}).items():
            (self.agent_dir / name).parent.mkdir(parents=True, exist_ok=True)
            (self.agent_dir / name).write_text(text)
        for name, text in (files or {}).items():
            (self.cwd / name).parent.mkdir(parents=True, exist_ok=True)
            (self.cwd / name).write_text(text)
        if settings is not None:
            (self.agent_dir / "settings.json").write_text(json.dumps(settings))
        extra = []
        if plugin is not None:
            path = self.tmp_path / "test_plugin.py"
            path.write_text(textwrap.dedent(plugin))
            extra = ["-e", str(path)]
        return ["--model", "local/test-model", *extra, *args]

    def paths_of(self, term):
        term.home, term.cwd, term.agent_dir = self.home, self.cwd, self.agent_dir
        return term


@pytest.fixture
def pi_tui(tmp_path, server):
    require_program("tmux", ".ci/run installs it")
    started: list[PiTerminal] = []
    place = _PiHome(tmp_path, server)

    def start(*args: str, settings: dict | None = None, plugin: str | None = None,
              files: dict[str, str] | None = None, agent_files: dict[str, str] | None = None,
              width: int = 100, height: int = 40, ready: str = "(auto)",
              env: dict[str, str] | None = None, tmux_options: dict[str, str] | None = None) -> PiTerminal:
        argv = [sys.executable, "-m", "pi_plugins.cli", *place.flags(args, settings, plugin, files, agent_files)]
        term = PiTerminal(tmp_path, argv, env={**place.env, **(env or {})}, cwd=place.cwd, width=width,
                          height=height, options=tmux_options)
        place.paths_of(term)
        started.append(term)
        term.wait_for(ready, timeout=20)
        return term

    yield start
    for term in started:
        term.close()


@pytest.fixture
def pi_screen(tmp_path, server, monkeypatch):
    """Like ``pi_tui``, with the app in this process on an emulated screen (``PiScreen``)."""
    started: list[PiScreen] = []
    place = _PiHome(tmp_path, server)
    use_environment(monkeypatch, place.env, place.cwd)

    def start(*args: str, settings: dict | None = None, plugin: str | None = None,
              files: dict[str, str] | None = None, agent_files: dict[str, str] | None = None,
              width: int = 100, height: int = 40) -> PiScreen:
        term = place.paths_of(PiScreen(place.flags(args, settings, plugin, files, agent_files), width, height))
        started.append(term)
        term.wait_for("(auto)", timeout=20)
        return term

    yield start
    for term in started:
        term.close()
