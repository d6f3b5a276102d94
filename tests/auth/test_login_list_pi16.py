"""``/login``'s provider list side by side with pi 1.6 in a real terminal: Radius and
OpenRouter first, marked ``✦``, the others by display name, each with how it is
configured (`` • not configured``, or `` • API key configured`` where a key is set and
the list offers accounts)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support.programs import NODE22, require_real
from support.terminal import Terminal

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]


def _list(tmp_path: Path, server, who: str, argv: list[str]) -> list[str]:
    home = tmp_path / who
    (home / "project").mkdir(parents=True)
    (home / "agent").mkdir()
    (home / "agent" / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PI_CODING_AGENT_DIR": str(home / "agent"),
           "TERM": "xterm-256color", "LANG": "C.UTF-8", "SHELL": "/bin/sh", "PI_OFFLINE": "1",
           "OPENAI_API_KEY": "sk-openai"}
    with Terminal(home, [*argv, "--approve", "--model", "local/test-model"], env=env, cwd=home / "project",
                  width=100, height=40) as term:
        term.wait_for("test-model", timeout=30)
        term.type("/login")
        term.press("Enter")
        term.wait_for("Sign in with an account", timeout=30)
        term.press("Enter")
        screen = term.wait_for("Select provider to configure:", timeout=30)
        shown = []
        for _ in range(3):  # eight rows at a time: page down through the list
            shown += [line.strip().lstrip("→ ").strip() for line in screen.splitlines()
                      if "configured" in line and "Select provider" not in line]
            for _ in range(8):
                term.press("Down")
            screen = term.wait_for(lambda s: "configured" in s, timeout=10)
        term.press("Escape")
    return list(dict.fromkeys(shown))


def test_the_login_list_orders_marks_and_words_the_providers_as_pi16(tmp_path, server):
    package = require_real("pi16")
    theirs = _list(tmp_path, server, "pi16", [str(NODE22), str(package / "dist" / "cli.js")])
    ours = _list(tmp_path, server, "ours", [sys.executable, "-m", "pi_plugins.cli"])
    assert theirs[:2] == ["Radius ✦ • not configured", "OpenRouter ✦ • not configured"]
    assert "OpenAI • API key configured" in theirs
    assert ours == theirs
