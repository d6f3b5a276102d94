"""``/bug`` side by side with pi 1.6 in a real terminal: no transcript, a summary the
current model writes instead, exported as a zip. Both ask the scripted model once with
the conversation and the description, write ``pi-bug-report-<id>.zip`` holding
``summary.md`` and no transcript, record a ``pi.bug-report`` entry in the session, and say
where the zip went with its id."""

from __future__ import annotations

import json
import re
import sys
import zipfile
from pathlib import Path

import pytest
from support.llm_server import Reply
from support.programs import NODE22, require_real
from support.terminal import Terminal

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]
SUMMARY = "## What the user was doing\nAsking.\n\n## What went wrong\nNothing."


def _report(tmp_path: Path, server, who: str, argv: list[str]) -> dict:
    home = tmp_path / who
    (home / "project").mkdir(parents=True)
    (home / "agent").mkdir()
    (home / "agent" / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PI_CODING_AGENT_DIR": str(home / "agent"),
           "TERM": "xterm-256color", "LANG": "C.UTF-8", "SHELL": "/bin/sh", "PI_OFFLINE": "1"}
    server.push(Reply(text="An answer."), Reply(text=SUMMARY))
    before = len(server.requests)
    with Terminal(home, [*argv, "--approve", "--model", "local/test-model"], env=env, cwd=home / "project",
                  width=120, height=50) as term:
        term.wait_for("test-model", timeout=30)
        term.type("a question")
        term.press("Enter")
        term.wait_for("An answer.", timeout=30)
        term.type("/bug it went wrong")
        term.press("Enter")
        term.wait_for("Report a bug", timeout=30)
        term.press("Enter")
        term.wait_for("Include the session transcript?")
        term.press("Down")
        term.press("Enter")
        term.wait_for("Attach a summary written by")
        term.press("Enter")
        term.wait_for("Export as Zip")
        if who == "pi16":
            term.press("Down")  # past "Upload Report"
        term.press("Enter")
        screen = term.wait_for(lambda s: re.search(r"ReportID:[0-9a-f-]{36}", "".join(s.split())) and
                               re.search(r"exportedto:/\S+\.zip", "".join(s.split())), timeout=60)
    [archive] = list((home / "project").glob("pi-bug-report-*.zip"))
    [session_file] = list((home / "agent" / "sessions").rglob("*.jsonl"))
    entries = [json.loads(line) for line in session_file.read_text().splitlines() if line.strip()]
    with zipfile.ZipFile(archive) as zipped:
        names, summary = sorted(zipped.namelist()), zipped.read("summary.md").decode()
    return {"screen": "".join(screen.split()), "archive": archive, "names": names, "summary": summary,
            "entries": [e for e in entries if e.get("type") == "custom"],
            "asked": server.requests[before + 1:]}  # the summary's request


def test_bug_with_a_summary_writes_what_pi16_writes(tmp_path, server):
    package = require_real("pi16")
    seen = {who: _report(tmp_path, server, who, argv) for who, argv in (
        ("pi16", [str(NODE22), str(package / "dist" / "cli.js")]),
        ("ours", [sys.executable, "-m", "pi_plugins.cli"]))}
    for who, got in seen.items():
        [entry] = got["entries"]
        assert entry["customType"] == "pi.bug-report", who
        data = entry["data"]
        assert set(data) == {"id", "createdAt", "hint", "sessionIncluded", "summaryIncluded", "delivery", "path"}, who
        assert data["hint"] == "it went wrong" and data["sessionIncluded"] is False and data["summaryIncluded"] is True
        assert data["delivery"] == "zip" and data["path"] == str(got["archive"])
        assert got["archive"].name == f"pi-bug-report-{data['id']}.zip", who
        assert f"Bugreportexportedto:{got['archive']}ReportID:{data['id']}" in got["screen"], who
        assert f"ReportID:{data['id']}" in got["screen"], who
        assert got["summary"].strip() == SUMMARY.strip(), who
        assert "summary.md" in got["names"] and "session.jsonl" not in got["names"], who
        [asked] = got["asked"]
        text = json.dumps(asked.body)
        assert "a question" in text and "An answer." in text and "it went wrong" in text, who
    pi, ours = (seen[w]["asked"][0].body for w in ("pi16", "ours"))
    assert {k: v for k, v in ours.items() if k != "messages"} == {k: v for k, v in pi.items() if k != "messages"}
    assert [m["role"] for m in ours["messages"]] == [m["role"] for m in pi["messages"]] == ["system", "user"]
