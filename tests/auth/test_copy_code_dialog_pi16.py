"""The chat's copy-code sign-in side by side with pi 1.6 in a real terminal: ``/login
anthropic``, "Copy code login (headless)", against a local stand-in for Anthropic; one
login dialog (title, link, words, paste box) compared line by line, then the pasted
``code#state`` signs in."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from auth.test_copy_code_pi16 import LINK, _shown_code
from support.programs import NODE22, require_real
from support.signin_server import SignInServer
from support.terminal import Terminal

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]

SHIM = Path(__file__).parents[1] / "support" / "node" / "provider_origins.mjs"


def _dialog(tmp_path: Path, server, signin: SignInServer, who: str, argv: list[str]) -> list[str]:
    home = tmp_path / who
    (home / "project").mkdir(parents=True)
    (home / "agent").mkdir()
    (home / "agent" / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PI_CODING_AGENT_DIR": str(home / "agent"),
           "TERM": "xterm-256color", "LANG": "C.UTF-8", "SHELL": "/bin/sh", "PI_OFFLINE": "1",
           "PI_PROVIDER_ORIGINS": signin.origins()}
    with Terminal(home, [*argv, "--approve", "--model", "local/test-model"], env=env, cwd=home / "project",
                  width=1000, height=50) as term:
        term.wait_for("test-model", timeout=30)
        for _ in range(20):  # pi 1.6 turns /login away until its start-up is done
            term.type("/login anthropic")
            term.press("Enter")
            shown = term.wait_for(lambda s: "Select authentication method for" in s or "still in progress" in s,
                                  timeout=30)
            if "Select authentication method for" in shown:
                break
            term.wait_for(lambda s: "still in progress" not in s, timeout=30)
        term.press("Enter")  # the subscription
        term.wait_for("Copy code login (headless)", timeout=30)
        term.press("Down")
        term.press("Enter")
        screen = term.wait_for(lambda s: "after you sign in:" in s and "to cancel)" in s, timeout=30)
        term.type(_shown_code(signin.url + LINK.search(screen).group(1)))
        term.press("Enter")
        term.wait_for("Logged in to", timeout=60)
    assert json.loads((home / "agent" / "auth.json").read_text())["anthropic"]["type"] == "oauth"
    lines = [line.strip() for line in screen.splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith("Login to"))
    end = next(i for i, line in enumerate(lines) if line.startswith("(esc"))
    return [re.sub(r"\s{2,}.*$", "", LINK.sub("LINK", line)) for line in lines[start:end + 1] if line]


def test_the_chat_copy_code_sign_in_is_one_dialog_as_pi16s(tmp_path, server):
    package = require_real("pi16")
    with SignInServer() as signin:
        seen = {who: _dialog(tmp_path, server, signin, who, argv) for who, argv in (
            ("pi16", [str(NODE22), "--import", str(SHIM), str(package / "dist" / "cli.js")]),
            ("ours", [sys.executable, "-m", "pi_plugins.cli"]))}
    assert seen["ours"] == seen["pi16"], seen
