"""``/session`` side by side with pi 1.6 in a real terminal: the same ``Session Info``
layout (file and id; messages; tokens; cache warming; the cost) after the same answer,
line for line once the session file's name and id are set aside."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from support.llm_server import Reply
from support.programs import NODE22, require_real
from support.terminal import Terminal

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]
MODEL = {"id": "test-model", "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}


def _session_info(tmp_path: Path, server, who: str, argv: list[str]) -> list[str]:
    home = tmp_path / who
    (home / "project").mkdir(parents=True)
    (home / "agent").mkdir()
    (home / "agent" / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key",
                                                                              models=[MODEL])))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PI_CODING_AGENT_DIR": str(home / "agent"),
           "TERM": "xterm-256color", "LANG": "C.UTF-8", "SHELL": "/bin/sh", "PI_OFFLINE": "1"}
    server.push(Reply(text="Running.", tool_calls=[("bash", {"command": "echo hi"})]), Reply(text="Done now."))
    with Terminal(home, [*argv, "--approve", "--model", "local/test-model"], env=env, cwd=home / "project",
                  width=120, height=50) as term:
        term.wait_for("test-model", timeout=30)
        term.type("a question")
        term.press("Enter")
        term.wait_for("Done now.", timeout=30)
        term.type("/session")
        term.press("Enter")
        screen = term.wait_for(lambda s: re.search(r"Total: \$", s), timeout=30)
    lines = [line.strip() for line in screen.splitlines()]
    info = lines[lines.index("Session Info"):]
    info = info[:next(n for n, line in enumerate(info) if line.startswith("Total: $")) + 1]
    ids = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f-]*|\d{4}-\d\d-\d\dT[\d-]+Z_")
    info = [line for line in info if line]
    start, end = info.index("File:"), next(n for n, line in enumerate(info) if line.startswith("ID:"))
    path = "".join(info[start + 1:end])  # the long path wraps where each renderer breaks words
    assert path == str(next((home / "agent" / "sessions").rglob("*.jsonl"))), who
    return [ids.sub("<id>", line) for line in [*info[:start + 1], "<the session file>", *info[end:]]]


def test_session_info_is_laid_out_as_pi16_lays_it_out(tmp_path, server):
    package = require_real("pi16")
    seen = {who: _session_info(tmp_path, server, who, argv) for who, argv in (
        ("pi16", [str(NODE22), str(package / "dist" / "cli.js")]),
        ("ours", [sys.executable, "-m", "pi_plugins.cli"]))}
    assert seen["ours"] == seen["pi16"]
    assert seen["ours"][:2] == ["Session Info", "File:"]
    assert "Messages" in seen["ours"] and "Tokens" in seen["ours"] and "Cache Warming" in seen["ours"]
    assert seen["ours"][-2:] == ["Cost", "Total: $0.000"]
