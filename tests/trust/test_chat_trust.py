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


def _answer(term, number):
    """Choose the ``number``th answer (from 1) as in pi 1.6's selector: arrows, then Enter."""
    term.wait_for("escape/ctrl+c cancel", timeout=20)
    for _ in range(number - 1):
        term.press("Down")
    term.press("Enter")


@pytest.mark.parametrize("answer, loaded", [(1, True), (4, False)])
def test_the_chat_asks_once_and_remembers_the_answer(project, tmp_path, answer, loaded):
    with _chat(project, tmp_path, "first") as term:
        screen = term.wait_for("Trust project folder?", timeout=20)
        assert "Do not trust (this session only)" in screen
        assert not project.marker.exists()  # nothing of the project ran before the answer
        _answer(term, answer)
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
            _answer(term, 3)
            term.wait_for("(auto)", timeout=20)
            assert project.marker.exists()
            _quit(term)
    assert not project.trust_file.exists()


def test_slash_trust_saves_a_decision_for_the_next_run(project, tmp_path):
    with _chat(project, tmp_path, "first") as term:
        term.wait_for("Trust project folder?", timeout=20)
        _answer(term, 5)  # do not trust, this session only
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
        term.type("/trust")
        term.press("Enter")
        screen = term.wait_for("Saved decision: trusted", timeout=20)
        assert "✓ Trust" in screen and "✓ Do not trust" not in screen  # pi 1.6 marks the saved answer
        term.press("Escape")
        term.wait_for(lambda s: "Saved decision" not in s, timeout=20)  # Esc alone, not Alt+/
        _quit(term)


def _question(term) -> list[str]:
    """The trust question as drawn: from its top border to its bottom one."""
    def drawn(screen: str) -> bool:  # a frame arrives in pieces: wait for the bottom border whole
        borders = [line for line in screen.split("\n") if line.startswith("───")]
        return "escape/ctrl+c cancel" in screen and len(borders) >= 2 and len(borders[-1]) == term.width

    lines = term.wait_for(drawn, timeout=30).rstrip().split("\n")
    top = next(i for i, line in enumerate(lines) if line.startswith("───"))
    bottom = next(i for i in range(len(lines) - 1, top, -1) if lines[i].startswith("───"))
    return [line.rstrip() for line in lines[top:bottom + 1]]


def _run_and_answer(program, argv, project, tmp_path, number):
    """Start ``argv`` in the project with an agent dir of its own, choose answer
    ``number``; the question's lines and what the agent dir's trust.json holds after."""
    import json
    import shutil

    agent = tmp_path / f"agent-{program}-{number}"
    shutil.copytree(project.agent_dir, agent)
    (agent / "trust.json").unlink(missing_ok=True)
    env = {**project.env, "PI_CODING_AGENT_DIR": str(agent), "TERM": "xterm-256color", "LANG": "C.UTF-8",
           "SHELL": "/bin/sh"}
    folder = tmp_path / f"{program}-{number}"
    folder.mkdir()
    with Terminal(folder, [*argv, "--model", "local/test-model"], env=env, cwd=project.cwd) as term:
        question = _question(term)
        _answer(term, number)
        term.wait_for(lambda s: "Trust project folder?" not in s and "(auto)" in s, timeout=30)
    saved = json.loads((agent / "trust.json").read_text()) if (agent / "trust.json").exists() else None
    return question, saved


@pytest.mark.parametrize("number", [1, 2, 3, 4, 5])
def test_the_five_answers_read_and_save_what_pi_16s_do(project, tmp_path, number):
    """Side by side with pi 1.6 in the same project: the same question, drawn the same,
    and each answer leaves the same trust.json (the folder, its parent, or nothing)."""
    import os

    from support.programs import NODE22, require_real

    require_program("tmux", ".ci/run installs it")
    package = require_real("pi16")
    ours = _run_and_answer("ours", [sys.executable, "-m", "pi_plugins.cli"], project, tmp_path, number)
    pi16 = _run_and_answer("pi16", [str(NODE22), str(package / "dist" / "cli.js")], project, tmp_path, number)
    assert ours[0] == pi16[0]
    here = os.path.realpath(project.cwd)
    expected = {1: {here: True}, 2: {os.path.dirname(here): True}, 3: None, 4: {here: False}, 5: None}
    assert ours[1] == pi16[1] == expected[number]


def test_slash_trust_starts_on_the_saved_answer(project, tmp_path):
    """pi 1.6's ``/trust`` selector opens on the answer in force, so Enter keeps it."""
    with _chat(project, tmp_path, "first") as term:
        term.wait_for("Trust project folder?", timeout=20)
        _answer(term, 4)  # do not trust, saved
        term.wait_for("(auto)", timeout=20)
        _quit(term)
    with _chat(project, tmp_path, "second") as term:
        term.wait_for("(auto)", timeout=20)
        term.type("/trust")
        term.press("Enter")
        screen = term.wait_for("Saved decision: untrusted", timeout=20)
        assert "→ ✓ Do not trust" in screen and "→   Trust" not in screen
        assert "enter save" in screen
        term.press("Enter")
        term.wait_for("Saved trust decision: untrusted", timeout=20)
        _quit(term)
    assert not project.marker.exists()
