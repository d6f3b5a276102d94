"""Quitting the fullscreen chat (``fullscreenExitOutput``): the transcript, as the view
showed it, goes back into the terminal's normal screen with the editor and footer under
it, as pi 1.6 leaves its chat; painting it again at exit kept a user who resumed a long
session waiting half a minute, so the view paints what is out of sight while the chat is
idle and the exit reuses it."""

import time

import pytest
from support.long_session import write_long_session
from support.terminal import Terminal

pytestmark = pytest.mark.process  # starts real processes (see tests/conftest.py)

#: What quitting may add to the terminal's own time to show the transcript (``cat`` of the
#: same output): generous for a loaded CI machine; painting a 1 MB transcript at exit
#: added 8-30 s.
QUIT_ALLOWANCE_SECONDS = 5


def _borders(lines: list[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if line and set(line) == {"─"}]


def _terminal_time_to_show(tmp_path, printed: str) -> float:
    """How long a tmux pane takes to show ``printed`` from ``cat`` (its own share of a quit)."""
    path = tmp_path / "printed.txt"
    path.write_text(printed)
    with Terminal(tmp_path, ["cat", str(path)], env={"PATH": "/usr/bin:/bin", "TERM": "xterm-256color"},
                  cwd=tmp_path) as term:
        started = time.monotonic()
        term.wait_for_exit(timeout=120)
        return time.monotonic() - started


def test_quitting_a_long_resumed_session_prints_it_whole_and_returns_quickly(pi_tui, tmp_path):
    answers = 100  # 1 MB: painting it at exit took 8-30 s
    session = write_long_session(tmp_path / "long.jsonl", tmp_path / "project", answers)
    term = pi_tui("--tui-mode", "fullscreen", "--session", str(session), ready=f"end of answer {answers - 1}")
    term.wait_program_idle(timeout=300)  # the view has painted what is out of sight
    term.type("/quit")
    started = time.monotonic()
    term.press("Enter")
    status, _ = term.wait_for_exit(timeout=120)
    took = time.monotonic() - started
    assert status == 0
    lines = term.screen(history=True).split("\n")
    first = lines.index(" question 0")
    last = next(i for i, line in enumerate(lines) if f"end of answer {answers - 1}" in line)
    hint = lines.index("To resume this session:")
    assert first < last < hint
    assert [line for line in lines[first:last] if line.startswith(" question ")] == [
        f" question {n}" for n in range(answers)]  # every message, in order
    printed = term._tmux("capture-pane", "-t", "t", "-p", "-e", "-S", "-")
    showing = _terminal_time_to_show(tmp_path, printed)
    assert took < showing + QUIT_ALLOWANCE_SECONDS, (
        f"/quit took {took:.1f} s to give the shell the terminal back; the terminal shows that output in "
        f"{showing:.1f} s")


def test_the_exit_transcript_ends_with_the_editor_and_footer_as_pi_16_leaves_them(pi_tui, tmp_path):
    session = write_long_session(tmp_path / "short.jsonl", tmp_path / "project", answers=2, answer_size=300)
    term = pi_tui("--tui-mode", "fullscreen", "--session", str(session), ready="end of answer 1")
    term.submit("/quit")
    term.wait_for_exit()
    lines = term.screen(history=True).split("\n")
    answer_end = next(i for i, line in enumerate(lines) if "end of answer 1" in line)
    hint = lines.index("To resume this session:")
    tail = lines[answer_end + 1:hint]
    assert len(_borders(tail)) == 2  # the editor between its borders
    footer = tail[_borders(tail)[1] + 1:]
    assert footer[0] == "~/project" and "test-model" in footer[-1]


def test_resume_hint_exit_output_prints_only_the_hint(pi_tui, tmp_path):
    session = write_long_session(tmp_path / "short.jsonl", tmp_path / "project", answers=3, answer_size=300)
    term = pi_tui("--tui-mode", "fullscreen", "--session", str(session), ready="end of answer 2",
                  settings={"fullscreenExitOutput": "resume-hint"})
    term.submit("/quit")
    status, _ = term.wait_for_exit()
    assert status == 0
    screen = term.screen(history=True)
    assert screen.count("To resume this session:") == 1
    assert "question 0" not in screen and "end of answer" not in screen and "test-model" not in screen
