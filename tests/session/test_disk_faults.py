"""The faults a laptop's disk meets, run for real on a small tmpfs: full (during an append,
then space returned) and read-only. An I/O error, which no disk here can be made to give
on demand, is injected at the write call. Whatever the fault, an entry the writer
acknowledged is on disk when the file is reopened, and no two entries share a line."""

from __future__ import annotations

import errno
import json
import os
import random

import pytest
from support.sessions import assistant, user
from support.small_disk import PAGE, SmallDisk, mounted

from pi_core.session import Session, SessionWriteError, store


@pytest.fixture(scope="module")
def small_disk():
    with mounted(512 * 1024) as disk:
        yield disk


@pytest.fixture
def disk(small_disk):
    small_disk.clear()
    yield small_disk
    small_disk.writable()
    small_disk.clear()


def random_text(rng: random.Random) -> str:
    """Text of a random length, with characters of one to four bytes (a cut can fall
    inside one)."""
    return "".join(rng.choice("abc déf 漢字 🙂\n\"\\") for _ in range(rng.randint(1, 2500)))


def saved(session: Session) -> list[str]:
    """The ids the writer has acknowledged as on disk: every entry but those it says are
    not."""
    left = {entry.id for entry in session.unsaved}
    return [entry.id for entry in session.entries if entry.id not in left]


def check_reopens_as_acknowledged(path, acknowledged: list[str]) -> None:
    """The file reopens with exactly the acknowledged entries, and every line but a torn
    last one is one whole entry (none merged into another)."""
    lines = path.read_bytes().split(b"\n")
    torn = lines.pop()  # b"" when the file ends in a newline
    ids = [json.loads(line)["id"] for line in lines[1:] if line]
    with Session.open(path, read_only=True) as reopened:
        assert [entry.id for entry in reopened.entries] == acknowledged
        assert ids == acknowledged  # no line lost, none twice, none glued to another
        if torn:
            (problem,) = reopened.problems
            assert "incomplete last line" in problem.message
        else:
            assert reopened.problems == []


def full_disk_run(disk: SmallDisk, rng: random.Random, name: str) -> tuple[int, int]:
    """One run: a few entries, the disk filled so that it runs out inside a random line,
    appends that fail, then (mostly) space returned and more appends. Returns (entries
    cut by the fault, entries written once space returned)."""
    session = Session.create("/w", disk.root / name)
    for _ in range(rng.randint(0, 4)):
        session.append_message(user(random_text(rng)))
    disk.fill(leave=rng.randint(0, 2) * PAGE)
    acknowledged: list[str] = []
    failures = 0
    for turn in range(rng.randint(2, 8)):
        message = user(random_text(rng)) if turn % 2 else assistant(random_text(rng))
        try:
            session.append_message(message)
        except SessionWriteError as exc:
            failures += 1
            assert "No space left on device" in str(exc)
            assert exc.unsaved == session.unsaved and exc.unsaved[-1].message is message
        now = saved(session)
        assert now[:len(acknowledged)] == acknowledged  # nothing acknowledged is taken back
        acknowledged = now
    kept = len(session.unsaved)
    if rng.random() < 0.75:
        disk.give_back()
        session.append_message(user("the disk has room again"))
        assert session.unsaved == []
    session.close()  # (one last write: on a disk still full, the log names what is lost)
    check_reopens_as_acknowledged(session.file, saved(session))
    return failures, kept


def test_a_full_disk_at_200_random_cut_points_loses_no_acknowledged_entry_and_merges_no_line(disk):
    rng = random.Random(41)
    cut = kept = 0
    for run in range(200):
        failures, unsaved = full_disk_run(disk, rng, f"run{run}")
        cut, kept = cut + bool(failures), kept + unsaved
        disk.clear()
    assert cut >= 150 and kept >= 300  # the disk really did fill during most runs


def test_space_returned_writes_the_kept_entries_in_order_and_the_cut_line_is_finished(disk):
    session = Session.create("/w", disk.root)
    first = session.append_message(user("before the disk filled"))
    disk.fill_to_the_brim()
    before = session.file.read_bytes()
    with pytest.raises(SessionWriteError) as failed:
        session.append_message(assistant("x" * 3 * PAGE))
    answer = session.leaf
    assert failed.value.unsaved == [answer] == session.unsaved
    assert f"Not on disk: 1 entry (assistant message {answer.id})" in str(failed.value)
    assert "written with the next entry once the disk has room again" in str(failed.value)
    cut = session.file.read_bytes()
    assert cut.startswith(before) and not cut.endswith(b"\n")  # the disk took part of it
    assert session.leaf is answer and [m.id for m in session.path()] == [first.id, answer.id]

    with pytest.raises(SessionWriteError):
        session.append_message(user("still full"))
    disk.give_back()
    last = session.append_message(user("room again"))
    assert session.unsaved == []
    session.close()

    with Session.open(session.file, read_only=True) as reopened:
        assert reopened.problems == []  # the cut line was finished: nothing to skip
        assert [e.id for e in reopened.path()] == [first.id, answer.id, session.entries[2].id,
                                                   last.id]


def test_a_new_session_on_a_full_disk_keeps_everything_and_writes_it_with_its_header_later(disk):
    disk.fill_to_the_brim()
    session = Session.create("/w", disk.root / "project")
    session.append_model_change("openai", "gpt-4o")
    with pytest.raises(SessionWriteError, match="No space left on device"):
        session.append_message(user("hello"))
    assert [e.type for e in session.unsaved] == ["model_change", "message"]
    disk.give_back()
    session.save()
    assert session.unsaved == [] and session.on_disk
    session.close()
    check_reopens_as_acknowledged(session.file, [e.id for e in session.entries])


def test_closing_on_a_full_disk_names_the_entries_that_were_not_saved(disk, caplog):
    session = Session.create("/w", disk.root)
    session.append_message(user("saved"))
    disk.fill_to_the_brim()
    with pytest.raises(SessionWriteError):
        session.append_message(user("not saved " * PAGE))
    lost = session.leaf
    session.close()
    assert f"user message {lost.id}" in caplog.text and "could not be saved" in caplog.text
    assert "lost on closing" in caplog.text and "kept in memory" not in caplog.text  # it is not
    check_reopens_as_acknowledged(session.file, saved(session))


def test_a_read_only_disk_refuses_clearly_and_the_entries_are_written_once_it_is_writable(disk):
    session = Session.create("/w", disk.root / "project")
    disk.read_only()
    with pytest.raises(SessionWriteError) as failed:
        session.append_message(user("hello"))
    assert "Read-only file system" in str(failed.value)
    assert "once the file system is writable again" in str(failed.value)
    assert len(session.unsaved) == 1
    with pytest.raises(SessionWriteError):
        session.append_message(assistant("hi"))
    disk.writable()
    session.append_message(user("again"))
    session.close()
    check_reopens_as_acknowledged(session.file, [e.id for e in session.entries])
    assert len(session.entries) == 3


def test_a_session_on_a_read_only_disk_opens_read_only_and_refuses_to_open_for_writing(disk):
    with Session.create("/w", disk.root) as session:
        session.append_message(user("hello"))
    disk.read_only()
    with pytest.raises(SessionWriteError, match="Read-only file system"):
        Session.open(session.file)
    with Session.open(session.file, read_only=True) as viewed:
        assert len(viewed.entries) == 1


class FailingWrites:
    """``os`` for the store, whose ``write`` takes ``allow`` more bytes and then fails
    with ``error`` until :attr:`broken` is cleared: the I/O error no disk here gives on
    demand."""

    def __init__(self, error: int, allow: int) -> None:
        self.error, self.allow, self.broken = error, allow, True

    def __getattr__(self, name):
        return getattr(os, name)

    def write(self, fd, data):
        if not self.broken:
            return os.write(fd, data)
        if self.allow <= 0:
            raise OSError(self.error, os.strerror(self.error))
        taken = os.write(fd, bytes(data[:self.allow]))
        self.allow -= taken
        return taken


@pytest.mark.parametrize("error", [errno.EIO, errno.EROFS, errno.ENOSPC, errno.EDQUOT])
@pytest.mark.parametrize("allow", [0, 1, 40, 4000])
def test_a_write_error_part_way_through_a_line_never_merges_it_with_the_next(
        tmp_path, monkeypatch, error, allow):
    session = Session.create("/w", tmp_path)
    session.append_message(user("first"))
    faulty = FailingWrites(error, allow)
    monkeypatch.setattr(store, "os", faulty)
    with pytest.raises(SessionWriteError) as failed:
        session.append_message(assistant("a" * 5000))
    assert os.strerror(error) in str(failed.value)
    faulty.broken = False
    session.append_message(user("after"))
    session.close()
    check_reopens_as_acknowledged(session.file, [e.id for e in session.entries])


def test_a_cut_line_that_is_not_the_next_to_be_written_ends_on_a_line_of_its_own(tmp_path, monkeypatch):
    """What the writer cannot finish (it no longer has the line) it closes with a
    newline: a damaged line the reader skips, never glued to the next entry."""
    session = Session.create("/w", tmp_path)
    session.append_message(user("first"))
    faulty = FailingWrites(errno.EIO, 30)
    monkeypatch.setattr(store, "os", faulty)
    with pytest.raises(SessionWriteError):
        session.append_message(user("cut"))
    faulty.broken = False
    session._unsaved.clear()  # (as if the entry had been given up)
    session._tree.leaf_id = session.entries[0].id
    after = session.append_message(user("after"))
    session.close()
    lines = session.file.read_bytes().split(b"\n")
    assert len(lines[2]) == 30 and json.loads(lines[3])["id"] == after.id
