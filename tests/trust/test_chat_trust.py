"""The chat asks whether to trust a project once, and remembers the answer across runs
(in a real terminal, as tests/interactive drive it)."""

import sys

import pytest

from support.programs import require_program
from support.terminal import Terminal

pytestmark = pytest.mark.process


def _chat(project, tmp_path, name):
    require_program("tmux", ".ci/run installs it")
    env = {**project.env, "TERM": "xterm-256color", "LANG": "C.UTF-8", "SHELL": "/bin/sh"}
    folder = tmp_path / name
    folder.mkdir()
    return Terminal(folder, [sys.executable, "-m", "pi_plugins.cli", "--model", "local/test-model"],
                    env=env, cwd=project.cwd)


def _quit(term):
    term.type("/quit")
    term.press("Enter")
    code, _ = term.wait_for_exit(20)
    assert code == 0


@pytest.mark.parametrize("answer, loaded", [("1", True), ("4", False)])
def test_the_chat_asks_once_and_remembers_the_answer(project, tmp_path, answer, loaded):
    with _chat(project, tmp_path, "first") as term:
        screen = term.wait_for("Trust project folder?", timeout=20)
        assert "Do not trust (this session only)" in screen
        assert not project.marker.exists()  # nothing of the project ran before the answer
        term.type(answer)
        term.press("Enter")
        screen = term.wait_for("(auto)", timeout=20)
        assert project.marker.exists() is loaded
        _quit(term)
    project.marker.unlink(missing_ok=True)
    with _chat(project, tmp_path, "second") as term:
        screen = term.wait_for("(auto)", timeout=20)
        assert "Trust project folder?" not in term.screen(history=True)
        assert project.marker.exists() is loaded
        # a saved "do not trust" is said in the chat, as pi 1.6 warns there
        assert ("This project is not trusted." in term.screen(history=True)) is not loaded
        _quit(term)


def test_a_session_only_answer_is_asked_again(project, tmp_path):
    for name in ("first", "second"):
        with _chat(project, tmp_path, name) as term:
            term.wait_for("Trust project folder?", timeout=20)
            term.type("3")
            term.press("Enter")
            term.wait_for("(auto)", timeout=20)
            assert project.marker.exists()
            _quit(term)
    assert not project.trust_file.exists()


def test_slash_trust_saves_a_decision_for_the_next_run(project, tmp_path):
    with _chat(project, tmp_path, "first") as term:
        term.wait_for("Trust project folder?", timeout=20)
        term.type("5")  # do not trust, this session only
        term.press("Enter")
        term.wait_for("(auto)", timeout=20)
        assert not project.marker.exists()
        term.type("/trust")
        term.press("Enter")
        screen = term.wait_for("Saved decision: none", timeout=20)
        assert "Current session: untrusted" in screen and "Do not trust" in screen
        term.press("Enter")  # the first answer: Trust
        term.wait_for("Saved trust decision: trusted", timeout=20)
        _quit(term)
    with _chat(project, tmp_path, "second") as term:
        term.wait_for("(auto)", timeout=20)
        assert project.marker.exists()
        _quit(term)
