"""Real writer processes: one writer per file (a lock), and nothing written is lost to SIGKILL."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pi_core.session import Session, SessionLockedError
from support.sessions import assistant, user

WRITER = Path(__file__).with_name("session_writer.py")

pytestmark = [pytest.mark.skipif(sys.platform == "win32", reason="POSIX locks and signals"), pytest.mark.process]


def writer(path: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(WRITER), str(path), *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def make_session(tmp_path: Path) -> Path:
    session = Session.create("/w", tmp_path)
    session.append_message(user("q"))
    session.append_message(assistant("a"))
    session.close()
    return session.file


def test_second_writer_process_is_stopped_by_the_lock(tmp_path):
    path = make_session(tmp_path)
    holder = writer(path, "hold")
    try:
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(SessionLockedError) as raised:
            Session.open(path)
        message = str(raised.value)
        assert str(path) in message and "another pi process" in message
        reader = Session.open(path, read_only=True)  # reading needs no lock
        assert len(reader) == 2
    finally:
        holder.stdin.close()
        assert holder.wait(timeout=10) == 0
    with Session.open(path) as session:  # released when the holder exits
        session.append_message(user("mine now"))


def test_writer_process_is_refused_while_we_hold_the_session(tmp_path):
    path = make_session(tmp_path)
    with Session.open(path):
        other = writer(path, "hold")
        _, err = other.communicate(timeout=20)
        assert other.returncode == 3
        assert "is open for writing in another pi process" in err
    again = writer(path, "hold")
    assert again.stdout.readline().strip() == "ready"
    again.stdin.close()
    assert again.wait(timeout=10) == 0


def test_sigkill_mid_append_loses_nothing_complete(tmp_path):
    """Writers appending large lines are killed at random moments, again and again; every
    entry a writer reported written is still there and the file always opens."""
    path = tmp_path / "crash.jsonl"
    rng = random.Random(7)
    acknowledged: list[str] = []
    for _ in range(6):
        proc = writer(path, "append", str(rng.choice([200, 100_000, 1_000_000])))
        first = proc.stdout.readline()  # started and wrote once: kill it during the next ones
        assert first, proc.stderr.read()
        time.sleep(rng.uniform(0.0, 0.05))
        proc.send_signal(signal.SIGKILL)
        out, err = proc.communicate(timeout=10)
        out = first + out
        assert proc.returncode == -signal.SIGKILL, err
        acknowledged += out.split()

        session = Session.open(path, read_only=True)
        assert all("skipped" in p.message for p in session.problems)  # torn fragments only
        ids = {e.id for e in session.entries}
        assert set(acknowledged) <= ids, "an entry reported as written was lost"

    assert len(acknowledged) > 6
    before = path.read_bytes()
    with Session.open(path) as final:  # a torn tail from the last kill stays where it is
        assert all("incomplete last line" in p.message or "skipped" in p.message
                   for p in final.problems)
        ids = [e.id for e in final.path()]
        assert set(acknowledged) <= set(ids), "entries must form one unbroken line of descent"
        final.append_message(user("after the crashes"))
    assert path.read_bytes().startswith(before)
    # no side file for the torn tails, nor the offset index (it lives in the cache folder)
    assert [p.name for p in tmp_path.glob("crash.jsonl.*")] == []
