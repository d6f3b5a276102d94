"""The device-code screen side by side with pi 1.6 in a real terminal: ``/login
openai-codex``, "Device code login (headless)", against a local stand-in of OpenAI's
device authorization that keeps the code pending; the login dialog's lines compared."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support.programs import NODE22, require_real
from support.signin_server import SignInServer
from support.terminal import Terminal

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]

SHIM = Path(__file__).parents[1] / "support" / "node" / "provider_origins.mjs"


def _screen(tmp_path: Path, server, signin: SignInServer, who: str, argv: list[str]) -> list[str]:
    home = tmp_path / who
    (home / "project").mkdir(parents=True)
    (home / "agent").mkdir()
    (home / "agent" / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PI_CODING_AGENT_DIR": str(home / "agent"),
           "TERM": "xterm-256color", "LANG": "C.UTF-8", "SHELL": "/bin/sh", "PI_OFFLINE": "1",
           "PI_PROVIDER_ORIGINS": signin.origins()}
    with Terminal(home, [*argv, "--approve", "--model", "local/test-model"], env=env, cwd=home / "project",
                  width=100, height=40) as term:
        term.wait_for("test-model", timeout=30)
        for _ in range(20):  # pi 1.6 turns /login away until its start-up is done
            term.type("/login openai-codex")
            term.press("Enter")
            shown = term.wait_for(lambda s: "Device code login (headless)" in s or "still in progress" in s,
                                  timeout=30)
            if "Device code login (headless)" in shown:
                break
            term.wait_for(lambda s: "still in progress" not in s, timeout=30)
        term.press("Down")
        term.press("Enter")
        screen = term.wait_for("Waiting for authentication...", timeout=30)
        term.press("Escape")
    lines = [line.strip() for line in screen.splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith("Login to"))
    end = next(i for i, line in enumerate(lines) if line.startswith("(esc"))
    return [line for line in lines[start:end + 1] if line]


def test_the_device_code_screen_shows_what_pi16_shows(tmp_path, server):
    package = require_real("pi16")
    with SignInServer() as signin:
        signin.device_polls_pending = 10_000
        seen = {who: _screen(tmp_path, server, signin, who, argv) for who, argv in (
            ("pi16", [str(NODE22), "--import", str(SHIM), str(package / "dist" / "cli.js")]),
            ("ours", [sys.executable, "-m", "pi_plugins.cli"]))}
    assert seen["ours"] == seen["pi16"]
