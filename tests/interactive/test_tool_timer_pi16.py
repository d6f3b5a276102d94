"""The timer line of codemode and bash rows, side by side with pi 1.6 in a real terminal
(its ``toolTimerText``): ``Elapsed 1.2s`` under a running bash row's output, counting on,
and ``Took 1.2s`` under each finished row, in the same place."""

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
SCRIPT = 'const t = Date.now(); while (Date.now() - t < 300) {}\nreturn "script over"'
TIME = re.compile(r"\d+\.\ds")


def _rows(tmp_path: Path, server, who: str, argv: list[str]) -> dict[str, object]:
    home = tmp_path / who
    (home / "project").mkdir(parents=True)
    (home / "agent").mkdir()
    (home / "agent" / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PI_CODING_AGENT_DIR": str(home / "agent"),
           "TERM": "xterm-256color", "LANG": "C.UTF-8", "SHELL": "/bin/sh", "PI_OFFLINE": "1"}
    marker = home / "go"
    server.push(Reply(tool_calls=[("bash", {"command": f"echo started; while [ ! -e {marker} ]; do sleep 0.1; done;"
                                                       " echo finished"})]),
                Reply(tool_calls=[("codemode", {"code": SCRIPT})]), Reply(text="All done."))
    seen: dict[str, object] = {}
    with Terminal(home, [*argv, "--approve", "--tools", "+codemode", "--model", "local/test-model"], env=env,
                  cwd=home / "project", width=100, height=50) as term:
        term.wait_for("test-model", timeout=30)
        term.type("go")
        term.press("Enter")
        screen = term.wait_for(lambda s: re.search(r"Elapsed [1-9]\.\ds", s), timeout=30)
        lines = [line.strip() for line in screen.splitlines()]
        running = lines[lines.index("started"):]
        seen["running bash row"] = [TIME.sub("N.Ns", line) for line in running[:3]]
        marker.write_text("")
        screen = term.wait_for("All done.", timeout=30)
        lines = [line.strip() for line in screen.splitlines()]
        finished = lines[lines.index("started") + 1:]  # the output's (the command wraps differently)
        seen["finished bash row"] = [TIME.sub("N.Ns", line) for line in finished[:3]]
        over = lines.index("script over")
        seen["codemode row"] = [TIME.sub("N.Ns", line) for line in lines[over:over + 3]]
        seen["took"] = [line for line in lines if line.startswith("Took ")]
    return seen


def test_codemode_and_bash_rows_show_elapsed_then_took_as_pi16(tmp_path, server):
    package = require_real("pi16")
    seen = {who: _rows(tmp_path, server, who, argv) for who, argv in (
        ("pi16", [str(NODE22), str(package / "dist" / "cli.js")]),
        ("ours", [sys.executable, "-m", "pi_plugins.cli"]))}
    took = {who: seen[who].pop("took") for who in seen}
    assert seen["ours"] == seen["pi16"]
    assert seen["ours"]["running bash row"][1:] == ["", "Elapsed N.Ns"]
    assert seen["ours"]["codemode row"][1:] == ["", "Took N.Ns"]
    assert len(took["ours"]) == len(took["pi16"]) == 2
