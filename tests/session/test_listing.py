"""Listing sessions for /resume and -r, finding one by id, continuing the latest."""

from __future__ import annotations

import json
import os
import shutil
from datetime import datetime, timezone

import pytest

from pi_plugins.session_listing.listing import (
    continue_recent,
    find_session,
    list_all_sessions,
    list_sessions,
    most_recent_session,
    read_session_info,
)
from pi_plugins.session_listing.listing_index import listing_index_path
from pi_core.session import Session, session_dir_for
from support.sessions import FIXTURES, assistant, pi_probe, user


def make(directory, cwd="/w", texts=("q", "a"), name=None, stamp=None):
    session = Session.create(cwd, directory)
    session.append_model_change("p", "m")
    for i, text in enumerate(texts):
        message = user(text) if i % 2 == 0 else assistant(text)
        if stamp is not None:
            message.timestamp = stamp + i
        session.append_message(message)
    if name:
        session.append_session_info(name)
    session.close()
    return session


def test_listing_shows_name_first_message_count_and_times(tmp_path):
    older = make(tmp_path, texts=("old question", "old answer"), stamp=1_700_000_000_000)
    newer = make(tmp_path, texts=("new question", "new answer", "follow-up", "more"),
                 name="  Named one ", stamp=1_800_000_000_000)
    infos = list_sessions(tmp_path)
    assert [i.path for i in infos] == [newer.file, older.file]
    first = infos[0]
    assert (first.id, first.cwd, first.name, first.message_count, first.first_message) == (
        newer.id, "/w", "Named one", 4, "new question")
    assert first.modified == datetime.fromtimestamp(1_800_000_000_003 / 1000, timezone.utc)
    assert first.created == datetime.fromisoformat(newer.header.timestamp.replace("Z", "+00:00"))
    assert infos[1].name is None and infos[1].parent_session is None


def test_listing_skips_other_files_and_survives_damage(tmp_path):
    good = make(tmp_path, texts=("question", "answer"))
    (tmp_path / "notes.jsonl").write_text('{"not":"a session"}\n')
    (tmp_path / "README.md").write_text("hi")
    with open(good.file, "ab") as f:
        f.write(b'{"type":"message","id":"x","parentId":null,"message":{"role":"user","con')
    (info,) = list_sessions(tmp_path)
    assert info.message_count == 2 and info.first_message == "question"


def test_session_without_messages_says_so(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text('{"type":"session","version":3,"id":"x","timestamp":"2026-01-01T00:00:00.000Z",'
                    '"cwd":"/w"}\n')
    info = read_session_info(path)
    assert info.first_message == "(no messages)" and info.message_count == 0
    assert info.modified == datetime(2026, 1, 1, tzinfo=timezone.utc)


def test_lines_of_another_shape_are_read_line_by_line_with_the_same_result(tmp_path):
    session = make(tmp_path, texts=("question", "answer"), name="n")
    reordered = tmp_path / "reordered.jsonl"
    lines = session.file.read_text().splitlines()
    moved = [json.dumps(dict(reversed(json.loads(line).items()))) for line in lines[1:]]
    reordered.write_text("\n".join([lines[0], *moved]) + "\n\n")
    fast, slow = read_session_info(session.file), read_session_info(reordered)
    for field in ("id", "name", "message_count", "first_message", "modified", "created"):
        assert getattr(fast, field) == getattr(slow, field), field


def test_all_projects_are_listed(tmp_path):
    a = make(session_dir_for("/p/a", tmp_path), cwd="/p/a", stamp=1)
    b = make(session_dir_for("/p/b", tmp_path), cwd="/p/b", stamp=2)
    assert [i.path for i in list_all_sessions(tmp_path)] == [b.file, a.file]
    assert list_all_sessions(tmp_path / "missing") == []


def test_continue_recent_opens_the_last_modified_session(tmp_path):
    first = make(tmp_path)
    second = make(tmp_path)
    os.utime(first.file, (2_000_000_000, 2_000_000_000))
    assert most_recent_session(tmp_path) == first.file
    with continue_recent("/w", tmp_path) as session:
        assert session.file == first.file and len(session) == 3
    assert most_recent_session(tmp_path / "none") is None
    fresh = continue_recent("/w", tmp_path / "none")
    assert len(fresh) == 0 and not fresh.file.exists()
    assert second.file.exists()


def test_find_session_by_path_or_id_prefix(tmp_path):
    here = make(session_dir_for("/p/here", tmp_path), cwd="/p/here")
    there = make(session_dir_for("/p/there", tmp_path), cwd="/p/there")
    found = find_session(here.id[:13], "/p/here", root=tmp_path)
    assert (found.path, found.scope) == (here.file, "local")
    found = find_session(there.id, "/p/here", root=tmp_path)
    assert (found.path, found.scope, found.cwd) == (there.file, "global", "/p/there")
    assert find_session("some/file.jsonl", "/p/here", root=tmp_path).scope == "path"
    assert find_session("ffffffff", "/p/here", root=tmp_path) is None


@pytest.mark.process
@pytest.mark.requires("pi")
def test_listing_matches_pi_on_its_own_files_and_ours(tmp_path):
    for source in FIXTURES.glob("*.jsonl"):
        shutil.copyfile(source, tmp_path / source.name)
    make(tmp_path, texts=("our question", "our answer"), name="ours")
    theirs = pi_probe("list", str(tmp_path))
    ours = list_sessions(tmp_path)
    assert [str(i.path) for i in ours] == [t["path"] for t in theirs]
    for mine, pis in zip(ours, theirs):
        assert mine.id == pis["id"] and mine.cwd == pis["cwd"] and mine.name == pis["name"]
        assert mine.message_count == pis["messageCount"]
        assert mine.first_message == pis["firstMessage"]
        assert round(mine.modified.timestamp() * 1000) == pis["modified"]
        assert round(mine.created.timestamp() * 1000) == pis["created"]


# ---------------------------------------------------------------- the listing's index (in the cache folder)


def test_listing_keeps_an_index_and_rereads_nothing_unchanged(tmp_path):
    session = make(tmp_path, texts=("alpha question", "answer"))
    list_sessions(tmp_path)
    assert listing_index_path(tmp_path).exists()
    # Same size, same mtime, same inode: the listing trusts the index and reads nothing.
    stat = session.file.stat()
    session.file.write_bytes(session.file.read_bytes().replace(b"alpha", b"omega"))
    os.utime(session.file, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert list_sessions(tmp_path)[0].first_message == "alpha question"


def test_a_grown_file_is_read_only_from_where_the_last_listing_stopped(tmp_path):
    session = make(tmp_path, texts=("alpha question", "answer"), stamp=1_000)
    assert list_sessions(tmp_path)[0].message_count == 2
    data = session.file.read_bytes()
    session.file.write_bytes(data.replace(b"alpha", b"omega"))  # earlier bytes: not reread
    with open(session.file, "ab") as f:
        f.write(data.splitlines(keepends=True)[-1].replace(b"answer", b"later!"))
    (info,) = list_sessions(tmp_path)
    assert info.message_count == 3 and info.first_message == "alpha question"
    fresh = read_session_info(session.file)  # without the index: everything reread
    assert fresh.message_count == 3 and fresh.first_message == "omega question"


def test_index_follows_appends_names_and_deletions(tmp_path):
    keep = make(tmp_path, texts=("first", "a"), stamp=1_000)
    gone = make(tmp_path, texts=("second", "b"), stamp=2_000)
    list_sessions(tmp_path)
    with Session.open(keep.file) as session:
        session.append_session_info("renamed")
        session.append_message(user("third"))
    gone.file.unlink()
    (info,) = list_sessions(tmp_path)
    assert (info.name, info.message_count) == ("renamed", 3)
    assert info == read_session_info(keep.file)
    assert list(json.loads(listing_index_path(tmp_path).read_text())["files"]) == [keep.file.name]


def test_a_rewritten_file_is_read_again_whole(tmp_path):
    path = tmp_path / "old.jsonl"
    path.write_text('{"type":"session","id":"v1","timestamp":"2025-01-01T00:00:00.000Z",'
                    '"cwd":"/w"}\n{"type":"message","timestamp":"2025-01-01T00:00:01.000Z",'
                    '"message":{"role":"user","content":"old","timestamp":5}}\n')
    assert list_sessions(tmp_path)[0].message_count == 1
    Session.open(path).close()  # migration: a new file renamed over the old one
    (info,) = list_sessions(tmp_path)
    assert info == read_session_info(path) and info.message_count == 1


def test_a_damaged_index_is_rebuilt(tmp_path):
    make(tmp_path, texts=("q", "a"))
    listing_index_path(tmp_path).write_text("{not json")
    assert list_sessions(tmp_path)[0].first_message == "q"
    assert json.loads(listing_index_path(tmp_path).read_text())["version"] == 1


def test_the_sessions_folder_holds_only_the_sessions_even_read_only(tmp_path):
    session = make(tmp_path, texts=("q", "a"))
    tmp_path.chmod(0o555)
    try:
        assert list_sessions(tmp_path)[0].first_message == "q"
        assert listing_index_path(tmp_path).exists()  # in the cache folder
        assert list(tmp_path.iterdir()) == [session.file]
    finally:
        tmp_path.chmod(0o755)
