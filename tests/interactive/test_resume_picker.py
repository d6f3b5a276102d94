"""/resume: pi's session picker, across projects, with rename, delete, sort and filters."""

import json

import pytest
from support.llm_server import Reply

pytestmark = pytest.mark.process  # starts real processes (see tests/conftest.py)


def _write_session(agent_dir, cwd: str, stamp: str, uid: str, question: str, name: str | None = None):
    folder = agent_dir / "sessions" / ("--" + cwd.strip("/").replace("/", "-") + "--")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stamp}_{uid}.jsonl"
    lines = [
        {"type": "session", "version": 3, "id": uid, "timestamp": "2026-11-01T10:00:00.000Z", "cwd": cwd},
        {"type": "message", "id": "a1b2c3d4", "parentId": None, "timestamp": "2026-11-01T10:00:01.000Z",
         "message": {"role": "user", "content": [{"type": "text", "text": question}], "timestamp": 1793527201000}},
        {"type": "message", "id": "b2c3d4e5", "parentId": "a1b2c3d4", "timestamp": "2026-11-01T10:00:02.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": f"Answer to {question}."}],
                     "api": "openai-completions", "provider": "local", "model": "test-model",
                     "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                               "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                     "stopReason": "stop", "timestamp": 1793527202000}},
    ]
    if name:
        lines.append({"type": "session_info", "id": "c3d4e5f6", "parentId": "b2c3d4e5",
                      "timestamp": "2026-11-01T10:00:03.000Z", "name": name})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_resume_across_projects_finds_another_folders_session_renames_it_and_opens_it(pi_tui, tmp_path):
    agent = tmp_path / "agent"
    other = _write_session(agent, "/srv/other-app", "2026-11-01T10-00-00-000Z",
                           "11111111-2222-4333-8444-555555555555", "question from the other app")
    term = pi_tui()
    term.submit("/resume")
    picker = term.wait_for("Resume Session (Current Folder)")
    assert "◉ Current Folder | ○ All" in picker and "No matches" in picker
    term.press("Tab")
    picker = term.wait_for("Resume Session (All)")
    assert "→ question from the other app" in picker and "/srv/other-app" in picker
    term.press("C-r")
    term.wait_for("Rename session")
    term.type("billing fix")
    term.press("Enter")
    picker = term.wait_for(lambda s: "Renamed to billing fix" in s and "→ billing fix" in s)
    assert "Resume Session (All)" in picker  # the picker stays where it was
    entries = [json.loads(line) for line in other.read_text().splitlines()]
    assert entries[-1]["type"] == "session_info" and entries[-1]["name"] == "billing fix"
    assert entries[-1]["parentId"] == "b2c3d4e5"
    term.press("Enter")
    term.wait_for("Session cwd does not exist: /srv/other-app")  # its folder is not here: pi 1.6 asks
    term.press("Enter")  # continue here
    screen = term.wait_drawn("Resumed session in")
    assert "question from the other app" in screen and "Answer to question from the other app." in screen


def test_resume_deletes_after_a_confirmation_and_filters_named_sessions(pi_tui, tmp_path):
    agent = tmp_path / "agent"
    cwd = str(tmp_path / "project")
    keep = _write_session(agent, cwd, "2026-11-01T10-00-00-000Z", "11111111-2222-4333-8444-000000000001",
                          "the kept question", name="kept work")
    doomed = _write_session(agent, cwd, "2026-11-01T11-00-00-000Z", "11111111-2222-4333-8444-000000000002",
                            "the doomed question")
    term = pi_tui()
    term.submit("/resume")
    picker = term.wait_for("Resume Session (Current Folder)")
    assert "kept work" in picker and "the doomed question" in picker
    term.press("C-n")
    picker = term.wait_for("Name: Named")
    assert "kept work" in picker and "the doomed question" not in picker
    term.press("C-n")
    term.wait_for("Name: All")
    term.press("C-s")
    term.wait_for("Sort: Recent")
    term.type("doomed")
    term.wait_for(lambda s: "→ the doomed question" in s and "kept work" not in s)
    term.press("C-d")
    term.wait_for("Delete session?")
    term.press("Down", "Enter")  # No
    term.wait_for(lambda s: "Resume Session" in s and "→ the doomed question" in s)
    assert doomed.exists()
    term.press("C-d")
    term.wait_for("Delete session?")
    term.press("Enter")  # Yes
    term.wait_for(lambda s: "Deleted " in s and "the doomed question" not in s)
    assert not doomed.exists() and keep.exists()
    term.press("Escape")
    term.wait_drawn(lambda s: "Resume Session" not in s)


def test_resume_search_takes_quoted_phrases_and_re_regular_expressions(pi_tui, tmp_path):
    agent = tmp_path / "agent"
    cwd = str(tmp_path / "project")
    for n, question in enumerate(["fix the node cve in the parser", "node upgrade then read the cve list",
                                  "prepare release v2.10 notes"]):
        _write_session(agent, cwd, f"2026-11-01T1{n}-00-00-000Z", f"11111111-2222-4333-8444-00000000000{n}", question)
    term = pi_tui()
    term.submit("/resume")
    picker = term.wait_for("Resume Session (Current Folder)")
    assert 're:<pattern> regex · "phrase" exact' in picker
    term.type("node cve")  # words match fuzzily: both node sessions
    term.wait_for(lambda s: "fix the node cve" in s and "node upgrade" in s and "release" not in s)
    term.press("C-u")
    term.type('"node cve"')  # a quoted phrase matches exactly
    term.wait_for(lambda s: "→ fix the node cve" in s and "node upgrade" not in s)
    term.press("C-u")
    term.type(r"re:V\d+\.\d+")  # a regular expression, case aside
    picker = term.wait_for(lambda s: "→ prepare release v2.10 notes" in s and "node" not in s.split(" > ")[-1])
    term.press("C-u")
    term.type("re:node(")  # an invalid one matches nothing
    picker = term.wait_for(lambda s: "No matches" in s)
    assert "fix the node cve" not in picker and "node upgrade" not in picker
    term.press("BSpace")
    term.wait_for(lambda s: "fix the node cve" in s and "node upgrade" in s and "release" not in s)
    term.press("Enter")
    term.wait_drawn("Resumed ")
