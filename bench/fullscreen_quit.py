"""The figure "quit a resumed 1 MB fullscreen session: time from /quit to the shell
prompt", in a real terminal (tmux), for bench_interactive.py.

The session is the first-frame figure's transcript written as a pi session file (100
questions, each answered in 10 KB of Markdown). ``/quit`` is timed until the shell has
the terminal back (the program's exit, after the transcript was printed): once the chat
has gone idle (the view paints what is out of sight meanwhile) and right after the first
frame (the rest painted at exit: no budget), beside pi 1.6 on the same file when it is
installed, and the terminal's own time to take in the same output (``cat``).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.llm_server import LlmServer  # noqa: E402
from support.long_session import write_long_session  # noqa: E402
from support.programs import NODE22, PI16  # noqa: E402
from support.terminal import Terminal  # noqa: E402

ANSWERS = 100


def _quit(root: Path, argv: list[str], env: dict, wait_idle: bool) -> tuple[float, str]:
    """(seconds from /quit to the exit, the terminal's scrollback with colours)."""
    with Terminal(root, argv, env=env, cwd=root / "project") as term:
        term.wait_for(f"end of answer {ANSWERS - 1}", timeout=180)
        if wait_idle:
            term.wait_program_idle(timeout=300)
        term.type("/quit")
        time.sleep(0.3)
        started = time.monotonic()
        term.press("Enter")
        term.wait_for_exit(timeout=300)
        took = time.monotonic() - started
        return took, term._tmux("capture-pane", "-t", "t", "-p", "-e", "-S", "-")


def _cat(root: Path, text: str, env: dict) -> float:
    """The terminal's time to take in ``text`` (what the quit printed) from ``cat``."""
    printed = root / "printed.txt"
    printed.write_text(text)
    with Terminal(root, ["cat", str(printed)], env=env, cwd=root) as term:
        started = time.monotonic()
        term.wait_for_exit(timeout=300)
        return time.monotonic() - started


def quit_figures() -> list[str]:
    if shutil.which("tmux") is None or not sys.platform.startswith("linux"):
        print("fullscreen: quitting a resumed 1 MB session: skipped (needs tmux on Linux)")
        return []
    failures: list[str] = []
    root = Path(tempfile.mkdtemp(prefix="bench-fullscreen-quit-"))
    try:
        (root / "project").mkdir()
        agent = root / "agent"
        agent.mkdir()
        session = write_long_session(root / "resumed.jsonl", root / "project", ANSWERS)
        with LlmServer() as server:
            models = server.models_json("local", models=[{"id": "test-model", "name": "Test Model",
                                                          "contextWindow": 128000}])
            (agent / "models.json").write_text(json.dumps(models))
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root), "TERM": "xterm-256color",
                   "PI_CODING_AGENT_DIR": str(agent), "LANG": "C.UTF-8", "SHELL": "/bin/sh"}
            resume = ["--model", "local/test-model", "--session", str(session)]
            ours = [sys.executable, "-m", "pi_plugins.cli", "--tui-mode", "fullscreen", *resume]
            idle, printed = _quit(root, ours, env, wait_idle=True)
            at_once, _ = _quit(root, ours, env, wait_idle=False)
            terminal = _cat(root, printed, env)
            theirs = None
            if (PI16 / "dist" / "cli.js").exists() and Path(NODE22).exists():
                (agent / "settings.json").write_text(json.dumps({"tuiMode": "fullscreen"}))
                theirs, _ = _quit(root, [str(NODE22), str(PI16 / "dist" / "cli.js"), *resume], env, wait_idle=True)
        budget = max(1.0, theirs * 1.25) if theirs is not None else max(1.0, terminal + 1.0)
        print(f"fullscreen: quit a resumed 1 MB session, once idle: {idle:.2f} s from /quit to the shell prompt "
              f"(budget {budget:.2f} s: " + (f"pi 1.6 {theirs:.2f} s, +25%" if theirs is not None
                                             else "the terminal's own time + 1 s") + ")")
        print(f"fullscreen: the same, quit right after the first frame: {at_once:.2f} s (no budget: the rest "
              f"is painted at exit); the terminal takes {terminal:.2f} s to show that output from cat")
        if idle > budget:
            failures.append("fullscreen: quit a resumed 1 MB session")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return failures
