"""The same full disk for ours, pi 0.73.1 and pi 1.6.0: three `pi -p` runs on one session,
the disk filling during the second answer and given back before the third.

What the docs (`docs/sessions.md`, "When the disk fails") say pi does is asserted here, so
the comparison stays true: pi 0.73.1 exits 0 without a word and glues the next prompt
onto the cut line (both lost); pi 1.6.0 exits 1 with `ENOSPC` and loses the answer; ours
exits 1 naming what was not saved, and on the next open keeps every prompt and the
whole answer (the answer journal keeps it when the disk refuses it; it comes back aborted)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from support.llm_server import Reply
from support.real_clients import PiHome
from support.small_disk import PAGE, mounted

pytestmark = pytest.mark.process

PROMPTS = ["first", "second " + "x" * 100, "third"]


def _roles(session_dir) -> tuple[list[str], int]:
    """Each message line's ``role:stopReason`` (or ``user:TEXT``) and the unreadable lines;
    pi 1.6's ``system`` messages (the prompt's declaration, not a prompt) left out."""
    (file,) = session_dir.glob("*.jsonl")
    roles, broken = [], 0
    for line in file.read_bytes().splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            broken += 1
            continue
        if entry.get("type") == "message":
            message = entry["message"]
            if message["role"] == "system":
                continue
            if message["role"] == "user":
                roles.append("user:" + message["content"][0]["text"][:6])
            else:
                roles.append(f"{message['role']}:{message.get('stopReason')}")
                if message.get("stopReason") == "aborted":  # the journal's copy: all of it
                    assert message["content"] == [{"type": "text", "text": "B" * 12000}]
    return roles, broken


def _three_runs(tmp_path, server, which: str):
    with mounted(256 * 1024) as disk:
        home = PiHome(tmp_path, server, which)
        sessions = disk.root / "sessions"
        sessions.mkdir()

        def pi(*args: str) -> subprocess.CompletedProcess:
            return subprocess.run(["pi", "--session-dir", str(sessions), *args], cwd=home.cwd,
                                  env={**os.environ, **home.env}, capture_output=True, text=True,
                                  timeout=60)

        server.push(Reply(text="answer one"))
        first = pi("-p", PROMPTS[0])
        disk.fill(leave=PAGE)  # one page left: the 12 KB answer is cut by the full disk
        server.push(Reply(text="B" * 12000))
        second = pi("-c", "-p", PROMPTS[1])
        disk.give_back()
        server.push(Reply(text="answer three"))
        third = pi("-c", "-p", PROMPTS[2])
        roles, broken = _roles(sessions)
        return (first, second, third), roles, broken


def test_ours_stops_says_what_was_not_saved_and_keeps_every_prompt(tmp_path, server):
    (first, second, third), roles, broken = _three_runs(tmp_path, server, "ours")
    assert first.returncode == 0 and third.returncode == 0
    assert second.returncode == 1
    assert "the session could not be saved (No space left on device)" in second.stderr
    assert "lost on closing" in second.stderr  # the process ends: what it could not keep
    assert broken == 1  # the line the disk cut stays, skipped, never joined to the next
    assert roles == ["user:first", "assistant:stop", "user:second", "assistant:aborted",
                     "user:third", "assistant:stop"]


@pytest.mark.requires("pi")
def test_pi_0_73_1_says_nothing_and_loses_the_next_prompt_into_the_cut_line(tmp_path, server):
    (_, second, _), roles, broken = _three_runs(tmp_path, server, "real")
    assert second.returncode == 0 and second.stderr == ""
    assert broken == 1
    assert "user:third" not in roles  # glued onto the cut answer: both unreadable


@pytest.mark.requires("pi16")
def test_pi_1_6_exits_with_enospc_and_loses_the_answer(tmp_path, server):
    (_, second, _), roles, broken = _three_runs(tmp_path, server, "real16")
    assert second.returncode == 1 and "ENOSPC" in second.stderr
    assert broken == 1
    assert "user:third" in roles and "assistant:aborted" not in roles
    assert roles.count("assistant:stop") == 2  # the second answer is gone


def _resume_read_only(tmp_path, server, which: str) -> subprocess.CompletedProcess:
    with mounted(256 * 1024) as disk:
        home = PiHome(tmp_path, server, which)
        sessions = disk.root / "sessions"
        sessions.mkdir()

        def pi(*args: str) -> subprocess.CompletedProcess:
            return subprocess.run(["pi", "--session-dir", str(sessions), *args], cwd=home.cwd,
                                  env={**os.environ, **home.env}, capture_output=True, text=True, timeout=60)

        server.push(Reply(text="answer one"))
        assert pi("-p", "first").returncode == 0
        disk.read_only()
        server.push(Reply(text="answer two"))
        try:
            return pi("-c", "-p", "second")
        finally:
            disk.writable()


@pytest.mark.parametrize("which", ["ours", pytest.param("real", marks=pytest.mark.requires("pi")),
                                   pytest.param("real16", marks=pytest.mark.requires("pi16"))])
def test_resuming_on_a_read_only_disk(tmp_path, server, which):
    """Ours refuses before asking the model; pi 0.73.1 answers and saves nothing without a
    word; pi 1.6.0 stops with EROFS (what docs/sessions.md says)."""
    done = _resume_read_only(tmp_path, server, which)
    if which == "ours":
        assert done.returncode == 2 and "could not be saved (Read-only file system)" in done.stderr
        assert len(server.requests) == 1  # the second prompt never reached the model
    elif which == "real":
        assert done.returncode == 0 and done.stderr == "" and "answer two" in done.stdout
    else:
        assert done.returncode == 1 and "EROFS" in done.stderr
