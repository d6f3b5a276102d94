"""Resuming, in the chat, a session whose stored working directory is gone: pi 1.6 asks
``Session cwd does not exist: …`` with Continue / Fork / Cancel (its ``main.js``); side
by side in a real terminal, the same question and, for each answer, the same outcome:
continued in the same file (asked again next time), forked into a new session with the
original kept, or ended with nothing written."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support.llm_server import Reply
from support.programs import NODE22, require_real
from support.terminal import Terminal, TerminalTimeout

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]
QUESTION = "Session cwd does not exist:"
HEADER = {"type": "session", "version": 3, "id": "0192f1a0-0000-7000-8000-000000000001",
          "timestamp": "2026-11-01T00:00:00.000Z"}


def _resume(tmp_path: Path, server, who: str, argv: list[str], keys: list[str]) -> dict[str, object]:
    home = tmp_path / who
    (home / "project").mkdir(parents=True)
    (home / "agent").mkdir()
    (home / "agent" / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    gone = home / "renamed-project"
    session = home / "old.jsonl"
    session.write_text(json.dumps({**HEADER, "cwd": str(gone)}) + "\n")
    before = session.read_bytes()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PI_CODING_AGENT_DIR": str(home / "agent"),
           "TERM": "xterm-256color", "LANG": "C.UTF-8", "SHELL": "/bin/sh", "PI_OFFLINE": "1"}
    server.push(Reply(text="Hi there."))
    seen: dict[str, object] = {}
    with Terminal(home, [*argv, "--model", "local/test-model", "--session", str(session)], env=env,
                  cwd=home / "project", width=120) as term:
        screen = term.wait_for("Cancel", timeout=30)
        lines = [line.strip() for line in screen.splitlines() if line.strip()]
        asked = lines[next(n for n, line in enumerate(lines) if line.startswith(QUESTION)):]
        asked = asked[:next(n for n, line in enumerate(asked) if line.endswith("Cancel")) + 1]
        # the words, wherever each selector wraps a long choice
        seen["asked"] = " ".join(line.lstrip("→> ").strip() for line in asked).replace(str(home), "HOME")
        term.press(*keys)
        if keys == ["Down", "Down", "Enter"]:
            status, _ = term.wait_for_exit(timeout=30)
            seen["exit"] = status
        else:
            term.wait_for("test-model", timeout=30)
            term.type("hello")
            for _ in range(30):  # pi 1.6 keeps a prompt sent before its start is over in the editor
                term.press("Enter")
                try:
                    term.wait_for("Hi there.", timeout=3)
                    break
                except TerminalTimeout:
                    pass
            term.wait_for("Hi there.", timeout=30)
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    seen["original kept as it was"] = session.read_bytes() == before
    seen["original header cwd"] = entries[0]["cwd"] == str(gone)
    seen["answers in the original"] = sum(1 for e in entries if e.get("message", {}).get("role") == "assistant")
    forks = [json.loads(path.read_text().splitlines()[0]) for path in (home / "agent").rglob("*.jsonl")]
    seen["forks"] = [(fork["cwd"] == str(home / "project"), fork.get("parentSession") == str(session))
                     for fork in forks]
    return seen


@pytest.mark.parametrize("keys", [["Enter"], ["Down", "Enter"], ["Down", "Down", "Enter"]],
                         ids=["continue", "fork", "cancel"])
def test_the_chat_asks_continue_fork_or_cancel_as_pi16(tmp_path, server, keys):
    package = require_real("pi16")
    seen = {who: _resume(tmp_path, server, who, argv, keys) for who, argv in (
        ("pi16", [str(NODE22), str(package / "dist" / "cli.js")]),
        ("ours", [sys.executable, "-m", "pi_plugins.cli"]))}
    assert seen["ours"] == seen["pi16"]
    assert seen["ours"]["asked"] == (f"{QUESTION} HOME/renamed-project Continue in HOME/project (asks again next "
                                     "time) Fork into HOME/project (new session ID, original kept) Cancel")


def _resume_in_chat(tmp_path: Path, who: str, argv: list[str], keys: list[str], server) -> dict[str, object]:
    from pi_core.session.locations import encode_cwd

    home = tmp_path / who
    project = home / "project"
    project.mkdir(parents=True)
    (home / "agent").mkdir()
    (home / "agent" / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    gone = home / "renamed-project"
    folder = home / "agent" / "sessions" / encode_cwd(project)
    folder.mkdir(parents=True)
    session = folder / "2026-11-01T00-00-00-000Z_0192f1a0-0000-7000-8000-000000000001.jsonl"
    question = {"type": "message", "id": "u0000001", "parentId": None, "timestamp": "2026-11-01T00:00:01.000Z",
                "message": {"role": "user", "content": [{"type": "text", "text": "an old question"}],
                            "timestamp": 1793527200000}}
    session.write_text(json.dumps({**HEADER, "cwd": str(gone)}) + "\n" + json.dumps(question) + "\n")
    before = session.read_bytes()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PI_CODING_AGENT_DIR": str(home / "agent"),
           "TERM": "xterm-256color", "LANG": "C.UTF-8", "SHELL": "/bin/sh", "PI_OFFLINE": "1"}
    seen: dict[str, object] = {}
    with Terminal(home, [*argv, "--model", "local/test-model"], env=env, cwd=project, width=160) as term:
        term.wait_for("test-model", timeout=30)
        term.type("/resume")
        for _ in range(30):  # pi 1.6 keeps what is sent before its start is over in the editor
            term.press("Enter")
            try:
                term.wait_for("an old question", timeout=3)
                break
            except TerminalTimeout:
                pass
        term.press("Enter")
        screen = term.wait_for("Cancel", timeout=30)
        seen["asked"] = QUESTION + " " + str(gone) in screen
        term.press(*keys)
        said = {"continue": f"Resumed session in {project}", "fork": "Forked into new session",
                "cancel": "Resume cancelled"}[{1: "continue", 2: "fork", 3: "cancel"}[len(keys)]]
        screen = term.wait_for(said, timeout=30)
        seen["old question shown"] = "an old question" in screen.split(QUESTION)[-1]
    seen["original kept as it was"] = session.read_bytes() == before
    forks = [path for path in (home / "agent").rglob("*.jsonl") if path != session
             and json.loads(path.read_text().splitlines()[0]).get("parentSession") == str(session)]
    seen["forks"] = len(forks)
    return seen


@pytest.mark.parametrize("keys", [["Enter"], ["Down", "Enter"], ["Down", "Down", "Enter"]],
                         ids=["continue", "fork", "cancel"])
def test_resume_in_the_chat_asks_the_same_as_pi16(tmp_path, server, keys):
    package = require_real("pi16")
    seen = {who: _resume_in_chat(tmp_path, who, argv, keys, server) for who, argv in (
        ("pi16", [str(NODE22), str(package / "dist" / "cli.js")]),
        ("ours", [sys.executable, "-m", "pi_plugins.cli"]))}
    assert seen["ours"] == seen["pi16"]
    assert seen["ours"]["asked"] is True
    assert seen["ours"]["original kept as it was"] is (len(keys) > 1)  # continued: written to (1.6 too)
    assert seen["ours"]["forks"] == (1 if len(keys) == 2 else 0)
    assert seen["ours"]["old question shown"] is (len(keys) < 3)  # resumed, or forked with it
