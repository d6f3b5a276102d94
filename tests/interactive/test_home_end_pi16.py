"""Home and End in the editor, Ctrl+Home and Ctrl+End in the fullscreen transcript, side
by side with pi 1.6 in a real terminal (its ``tui.editor.cursorLineStart`` /
``cursorLineEnd`` and ``tui.altScreen.top`` / ``bottom``): the same editor text and the
same ends of the conversation in view."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support.long_session import write_long_session
from support.programs import NODE22, require_real
from support.terminal import Terminal

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]
ANSWERS = 6


def _keys(tmp_path: Path, server, who: str, argv: list[str]) -> dict[str, object]:
    home = tmp_path / who
    (home / "project").mkdir(parents=True)
    (home / "agent").mkdir()
    (home / "agent" / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    (home / "agent" / "settings.json").write_text(json.dumps({"tuiMode": "fullscreen"}))
    session = write_long_session(home / "resumed.jsonl", home / "project", ANSWERS, answer_size=1500)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PI_CODING_AGENT_DIR": str(home / "agent"),
           "TERM": "xterm-256color", "LANG": "C.UTF-8", "SHELL": "/bin/sh", "PI_OFFLINE": "1"}
    seen: dict[str, object] = {}
    with Terminal(home, [*argv, "--model", "local/test-model", "--session", str(session)], env=env,
                  cwd=home / "project") as term:
        last = f"end of answer {ANSWERS - 1}"
        screen = term.wait_for(last, timeout=30)
        seen["resumed: the first question in view"] = "question 0" in screen
        term.type("middle words")
        term.press("Home")
        term.type("<")
        term.press("End")
        term.type(">")
        screen = term.wait_for("<middle words>", timeout=10)
        seen["editor"] = "<middle words>"
        term.press("C-Home")
        screen = term.wait_for("question 0", timeout=10)
        seen["Ctrl+Home: the last answer in view"] = last in screen
        term.press("C-End")
        screen = term.wait_for(last, timeout=10)
        seen["Ctrl+End: the first question in view"] = "question 0" in screen
        seen["Ctrl+End: the editor kept"] = "<middle words>" in screen
    return seen


def test_home_end_move_in_the_line_and_ctrl_home_end_scroll_the_transcript_as_pi16(tmp_path, server):
    package = require_real("pi16")
    seen = {who: _keys(tmp_path, server, who, argv) for who, argv in (
        ("pi16", [str(NODE22), str(package / "dist" / "cli.js")]),
        ("ours", [sys.executable, "-m", "pi_plugins.cli"]))}
    assert seen["ours"] == seen["pi16"]
    assert seen["ours"] == {"resumed: the first question in view": False, "editor": "<middle words>",
                            "Ctrl+Home: the last answer in view": False,
                            "Ctrl+End: the first question in view": False, "Ctrl+End: the editor kept": True}
