"""``/export NAME.jsonl`` and ``/debug`` side by side with pi 1.6 in a real terminal.

``/export x.jsonl`` writes the current branch as a session file of its own (a fresh
header with the session's id and folder, the entries re-chained from ``null``) and says
``Session exported to: <absolute path>``; ``/debug`` writes ``pi-debug.log`` in the agent
dir: the terminal's size, every drawn line with its visible width, the messages as JSONL."""

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


def _run(tmp_path: Path, server, who: str, argv: list[str]) -> dict:
    home = tmp_path / who
    (home / "project").mkdir(parents=True)
    (home / "agent").mkdir()
    (home / "agent" / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PI_CODING_AGENT_DIR": str(home / "agent"),
           "TERM": "xterm-256color", "LANG": "C.UTF-8", "SHELL": "/bin/sh", "PI_OFFLINE": "1"}
    server.push(Reply(text="First answer."), Reply(text="Second answer."))
    with Terminal(home, [*argv, "--approve", "--model", "local/test-model"], env=env, cwd=home / "project",
                  width=100, height=40) as term:
        term.wait_for("test-model", timeout=30)
        for question, answer in (("one", "First answer."), ("two", "Second answer.")):
            term.type(question)
            term.press("Enter")
            term.wait_for(answer, timeout=30)
        term.type("/export out/branch.jsonl")
        term.press("Enter")
        exported = term.wait_for(lambda s: "branch.jsonl" in "".join(s.split()) and "exported" in s, timeout=30)
        term.type("/debug")
        term.press("Enter")
        debugged = term.wait_for("Debug log written", timeout=30)
    [session_file] = list((home / "agent" / "sessions").rglob("*.jsonl"))
    return {"exported": "".join(exported.split()), "debugged": "".join(debugged.split()),
            "file": home / "project" / "out" / "branch.jsonl", "session": session_file,
            "debug": home / "agent" / "pi-debug.log"}


def test_export_jsonl_and_debug_write_what_pi16_writes(tmp_path, server):
    package = require_real("pi16")
    seen = {who: _run(tmp_path, server, who, argv) for who, argv in (
        ("pi16", [str(NODE22), str(package / "dist" / "cli.js")]),
        ("ours", [sys.executable, "-m", "pi_plugins.cli"]))}
    shapes = {}
    for who, got in seen.items():
        assert f"Sessionexportedto:{got['file']}" in got["exported"], who
        lines = [json.loads(line) for line in got["file"].read_text().splitlines()]
        original = [json.loads(line) for line in got["session"].read_text().splitlines()]
        header, entries = lines[0], lines[1:]
        assert list(header) == ["type", "version", "id", "timestamp", "cwd"], who
        assert header["id"] == original[0]["id"] and header["cwd"] == original[0]["cwd"], who
        assert [e["id"] for e in entries] == [e["id"] for e in original[1:]], who
        assert [e["parentId"] for e in entries] == [None, *(e["id"] for e in entries[:-1])], who
        shapes[who] = [(e["type"], e.get("message", {}).get("role")) for e in entries
                       if e.get("message", {}).get("role") != "system"]

        assert f"Debuglogwritten{got['debug']}" in got["debugged"], who
        text = got["debug"].read_text()
        head = text.split("\n")
        assert re.fullmatch(r"Debug output at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", head[0]), who
        assert head[1] == "Terminal: 100x40", who
        drawn = int(head[2].removeprefix("Total lines: "))
        assert head[3:5] == ["", "=== All rendered lines with visible widths ==="], who
        rows = head[5:5 + drawn]
        assert all(re.fullmatch(rf'\[{i}\] \(w=\d+\) ".*"', row) for i, row in enumerate(rows)), who
        assert "test-model" in rows[-1] and "~/project" in rows[-2], who  # the footer, drawn last
        tail = head[5 + drawn:]
        assert tail[:2] == ["", "=== Agent messages (JSONL) ==="] and tail[-1] == "", who
        messages = [json.loads(line) for line in tail[2:-1]]
        # (pi 1.6's leading session `system` message: not here yet, see docs/pi-compatibility.md)
        assert [m["role"] for m in messages if m["role"] != "system"] == ["user", "assistant"] * 2, who
    assert shapes["ours"] == shapes["pi16"]
