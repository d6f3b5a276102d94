"""/changelog, the news after an update, and /import FILE."""

import json

import pytest
from support.llm_server import Reply

pytestmark = pytest.mark.process  # starts real processes (see tests/conftest.py)


def test_changelog_shows_the_projects_released_versions(pi_tui):
    term = pi_tui()
    term.submit("/changelog")
    screen = term.wait_drawn("What's New")
    assert "[0.1.0]" in screen and "pluggy" in screen
    assert "Unreleased" not in screen


def test_a_fresh_install_records_its_version_and_shows_no_news(pi_tui):
    term = pi_tui()
    assert "What's New" not in term.screen()
    assert json.loads((term.agent_dir / "settings.json").read_text())["lastChangelogVersion"] == "0.1.0"


def test_the_first_start_after_an_update_shows_whats_new_once(pi_tui):
    term = pi_tui(settings={"lastChangelogVersion": "0.0.9"})
    screen = term.screen()
    assert "What's New" in screen and "[0.1.0]" in screen
    assert json.loads((term.agent_dir / "settings.json").read_text())["lastChangelogVersion"] == "0.1.0"
    term.submit("/quit")  # the next start has seen this version
    term.wait_for_exit()


def test_collapse_changelog_shows_one_line(pi_tui):
    term = pi_tui(settings={"lastChangelogVersion": "0.0.9", "collapseChangelog": True})
    screen = term.screen()
    assert "Updated to v0.1.0. Use /changelog to view full changelog." in screen
    assert "What's New" not in screen


def test_import_copies_a_session_file_and_resumes_it(pi_tui, server, tmp_path):
    server.push(Reply(text="Continuing the imported chat."))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    lines = [
        {"type": "session", "version": 3, "id": "0b5e4c1e-1111-4222-8333-944445555666",
         "timestamp": "2026-11-01T10:00:00.000Z", "cwd": str(tmp_path / "project")},
        {"type": "message", "id": "a1b2c3d4", "parentId": None, "timestamp": "2026-11-01T10:00:01.000Z",
         "message": {"role": "user", "content": [{"type": "text", "text": "the imported question"}],
                     "timestamp": 1793527201000}},
        {"type": "message", "id": "b2c3d4e5", "parentId": "a1b2c3d4", "timestamp": "2026-11-01T10:00:02.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "The imported answer."}],
                     "api": "openai-completions", "provider": "local", "model": "test-model",
                     "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                               "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                     "stopReason": "stop", "timestamp": 1793527202000}},
    ]
    source = elsewhere / "shared-session.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    term = pi_tui()
    term.submit("/import")
    term.wait_drawn("Usage: /import <path.jsonl>")
    term.submit(f"/import {source}")
    term.wait_for(lambda s: "Import session" in s and "Replace current session with" in s)
    term.press("Enter")
    screen = term.wait_drawn("Session imported from:")
    assert "the imported question" in screen and "The imported answer." in screen
    [copied] = term.sessions()
    assert copied.name == "shared-session.jsonl" and source.exists()
    term.submit("go on")
    term.wait_for("Continuing the imported chat.")
    messages = server.requests[0].body["messages"]
    assert "the imported question" in json.dumps(messages)
    assert json.loads(copied.read_text().splitlines()[-1])["message"]["role"] == "assistant"
