"""Damaged files: nothing is ever rewritten, bad lines are named and cost only themselves."""

from __future__ import annotations

import json

import pytest

from pi_core.session import Session, SessionError
from pi_plugins.cli.sessions import fork_from
from support.sessions import assistant, copy_fixture, user

HEADER = ('{"type":"session","version":3,"id":"01a22aa0-0000-7000-8000-000000000000",'
          '"timestamp":"2026-11-30T04:04:46.971Z","cwd":"/w"}')


def entry(entry_id: str, parent: str | None, text: str = "hi", role: str = "user") -> str:
    return json.dumps({
        "type": "message", "id": entry_id, "parentId": parent,
        "timestamp": "2026-11-30T04:04:47.013Z",
        "message": {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1},
    }, separators=(",", ":"))


def write(path, *lines: str, end: str = "\n") -> None:
    path.write_text("\n".join(lines) + end)


def test_torn_last_line_stays_and_the_next_entry_starts_on_its_own_line(tmp_path):
    path = copy_fixture("chat-openai.jsonl", tmp_path)
    torn = b'{"type":"message","id":"abcd1234","parentId":"c56f71c7","timesta'
    damaged = path.read_bytes() + torn
    path.write_bytes(damaged)

    with Session.open(path) as session:
        assert len(session) == 4 and session.leaf_id == "c56f71c7"
        (problem,) = session.problems
        assert problem.line == 6
        assert "incomplete last line" in problem.message and "skipped" in problem.message
        assert path.read_bytes() == damaged  # opening changes nothing
        added = session.append_message(user("after the crash"))
    data = path.read_bytes()
    assert data.startswith(damaged)  # append-only: the original bytes are a prefix
    assert data[len(damaged):] == b"\n" + data[len(damaged) + 1:]
    assert json.loads(data.splitlines()[-1])["id"] == added.id
    assert list(tmp_path.iterdir()) == [path]  # no side file

    again = Session.open(path, read_only=True)
    assert [p.line for p in again.problems] == [6]
    assert "skipped" in str(again.problems[0])
    assert [e.id for e in again.path()][-2:] == ["c56f71c7", added.id]


def test_torn_line_is_only_reported_when_opened_read_only(tmp_path):
    path = copy_fixture("chat-openai.jsonl", tmp_path)
    damaged = path.read_bytes() + b'{"type":"mess'
    path.write_bytes(damaged)
    session = Session.open(path, read_only=True)
    assert [p.line for p in session.problems] == [6]
    assert path.read_bytes() == damaged
    assert list(tmp_path.iterdir()) == [path]


def test_two_crashes_leave_both_fragments_in_place(tmp_path):
    path = copy_fixture("chat-openai.jsonl", tmp_path)
    for tail in (b'{"one', b'{"two'):
        before = path.read_bytes() + tail
        path.write_bytes(before)
        with Session.open(path) as session:
            session.append_message(user("after " + tail.decode()))
        assert path.read_bytes().startswith(before)
    assert list(tmp_path.iterdir()) == [path]
    session = Session.open(path, read_only=True)
    assert [p.line for p in session.problems] == [6, 8]
    texts = [m.content[0].text for m in session.build_context().messages]
    assert texts[-2:] == ['after {"one', 'after {"two']


def test_a_torn_line_in_the_middle_is_mended_past_when_its_ids_are_readable(tmp_path):
    path = tmp_path / "s.jsonl"
    torn = '{"type":"message","id":"bbbbbbbb","parentId":"aaaaaaaa","timestamp":"2026-11'
    write(path, HEADER, entry("aaaaaaaa", None, "first question"), torn,
          entry("cccccccc", "bbbbbbbb", "second"), entry("dddddddd", "cccccccc", "a2", "assistant"))
    session = Session.open(path, read_only=True)
    assert [p.line for p in session.problems] == [3, 4]
    assert "skipped" in str(session.problems[0])
    assert "'bbbbbbbb'" in str(session.problems[1]) and "line 3" in str(session.problems[1])
    assert "'aaaaaaaa'" in str(session.problems[1])
    assert [e.id for e in session.path()] == ["aaaaaaaa", "cccccccc", "dddddddd"]
    assert [m.content[0].text for m in session.build_context().messages] == [
        "first question", "second", "a2"]


def test_an_invalid_utf8_byte_becomes_u_fffd_and_nothing_is_lost(tmp_path):
    path = tmp_path / "s.jsonl"
    bad = entry("bbbbbbbb", "aaaaaaaa", "a1 cafX", "assistant").encode().replace(
        b"cafX", b"caf\xe9")  # a Latin-1 byte: not UTF-8
    assert b"\xe9" in bad
    path.write_bytes("\n".join([HEADER, entry("aaaaaaaa", None, "first question")]).encode()
                     + b"\n" + bad + b"\n" + entry("cccccccc", "bbbbbbbb", "second").encode()
                     + b"\n")
    original = path.read_bytes()
    with Session.open(path) as session:
        assert session.problems == []
        texts = [m.content[0].text for m in session.build_context().messages]
        assert texts == ["first question", "a1 caf\ufffd", "second"]
        session.append_message(assistant("a2"))
    assert path.read_bytes().startswith(original)


def test_an_unknown_version_is_refused_for_writing_naming_it(tmp_path):
    path = tmp_path / "s.jsonl"
    future = HEADER.replace('"version":3', '"version":99')
    write(path, future, entry("aaaaaaaa", None, "from the future"))
    original = path.read_bytes()
    with pytest.raises(SessionError, match="version 99"):
        Session.open(path)
    assert path.read_bytes() == original
    session = Session.open(path, read_only=True)
    assert [m.content[0].text for m in session.build_context().messages] == ["from the future"]
    with pytest.raises(SessionError, match="read-only"):
        session.append_message(user("no"))
    forked = fork_from(path, "/w", tmp_path / "forks")
    assert forked.header.version == 3
    with forked:
        forked.append_message(user("continued in a v3 file"))
    lines = forked.file.read_text().splitlines()
    assert json.loads(lines[0])["version"] == 3 and len(lines) == 3
    assert path.read_bytes() == original


def test_complete_last_line_without_newline_is_kept_and_the_next_line_is_separate(tmp_path):
    path = tmp_path / "s.jsonl"
    write(path, HEADER, entry("aaaaaaaa", None), end="")
    with Session.open(path) as session:
        assert session.problems == [] and session.leaf_id == "aaaaaaaa"
        added = session.append_message(user("next"))
    lines = path.read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines[1:]] == ["aaaaaaaa", added.id]


def test_invalid_json_in_the_middle_is_named_and_the_rest_opens(tmp_path):
    path = tmp_path / "s.jsonl"
    write(path, HEADER, entry("aaaaaaaa", None), '{"type":"message","id":"bbbb', entry(
        "cccccccc", "aaaaaaaa"), entry("dddddddd", "cccccccc"))
    session = Session.open(path)
    (problem,) = session.problems
    assert problem.line == 3
    assert str(problem).startswith("line 3: invalid JSON") and "skipped" in str(problem)
    assert [e.id for e in session.path()] == ["aaaaaaaa", "cccccccc", "dddddddd"]
    session.append_message(user("still works"))
    session.close()
    assert path.read_text().splitlines()[2] == '{"type":"message","id":"bbbb'  # kept, not lost


def test_missing_parent_is_named_and_the_entry_becomes_a_root(tmp_path):
    path = tmp_path / "s.jsonl"
    write(path, HEADER, entry("aaaaaaaa", None), entry("cccccccc", "bbbbbbbb", "orphan"),
          entry("dddddddd", "cccccccc"))
    session = Session.open(path, read_only=True)
    (problem,) = session.problems
    assert problem.line == 3 and "'bbbbbbbb'" in problem.message and "root" in problem.message
    assert [e.id for e in session.path()] == ["cccccccc", "dddddddd"]
    assert [n.entry.id for n in session.tree()] == ["aaaaaaaa", "cccccccc"]
    assert session.entry("cccccccc").parent_id == "bbbbbbbb"  # as written


def test_parent_cycle_is_named_and_broken(tmp_path):
    path = tmp_path / "s.jsonl"
    write(path, HEADER, entry("aaaaaaaa", None), entry("bbbbbbbb", "dddddddd"),
          entry("cccccccc", "bbbbbbbb"), entry("dddddddd", "cccccccc"), entry("eeeeeeee", "dddddddd"))
    session = Session.open(path, read_only=True)
    (problem,) = session.problems
    assert problem.line == 5 and "cycle" in problem.message
    assert [e.id for e in session.path()] == ["dddddddd", "eeeeeeee"]
    for e in session.entries:
        path_ids = [p.id for p in session.path(e.id)]
        assert len(path_ids) == len(set(path_ids)) and path_ids[-1] == e.id


def test_self_parent_is_a_cycle_too(tmp_path):
    path = tmp_path / "s.jsonl"
    write(path, HEADER, entry("aaaaaaaa", "aaaaaaaa"))
    session = Session.open(path, read_only=True)
    assert [p.line for p in session.problems] == [2]
    assert [e.id for e in session.path()] == ["aaaaaaaa"]


def test_duplicate_id_keeps_the_first_and_names_the_second(tmp_path):
    path = tmp_path / "s.jsonl"
    write(path, HEADER, entry("aaaaaaaa", None, "first"), entry("aaaaaaaa", None, "second"))
    session = Session.open(path, read_only=True)
    assert [(p.line, "duplicate" in p.message) for p in session.problems] == [(3, True)]
    assert session.entry("aaaaaaaa").message.content[0].text == "first"


def test_entry_of_the_wrong_shape_is_named_when_read_and_stays_out_of_the_context(
        tmp_path, caplog):
    path = tmp_path / "s.jsonl"
    bad = ('{"type":"message","id":"bbbbbbbb","parentId":"aaaaaaaa",'
           '"timestamp":"2026-11-30T04:04:47.013Z","message":{"role":"user","content":5}}')
    write(path, HEADER, entry("aaaaaaaa", None), bad, entry("cccccccc", "bbbbbbbb"))
    session = Session.open(path, read_only=True)
    assert session.problems == []  # valid JSON: entries are made into objects when used
    assert len(session.build_context().messages) == 2
    (problem,) = session.problems
    assert problem.line == 3 and "'bbbbbbbb' cannot be read" in problem.message
    assert any("line 3:" in r.getMessage() and str(path) in r.getMessage()
               for r in caplog.records)
    assert [e.id for e in session.path()] == ["aaaaaaaa", "bbbbbbbb", "cccccccc"]
    assert session.entry("bbbbbbbb").type == "message"  # kept as read
    assert len(session.problems) == 1  # reported once


def test_second_header_in_the_middle_is_ignored_with_a_note(tmp_path):
    path = tmp_path / "s.jsonl"
    write(path, HEADER, entry("aaaaaaaa", None), HEADER, entry("bbbbbbbb", "aaaaaaaa"))
    session = Session.open(path, read_only=True)
    assert [p.line for p in session.problems] == [3]
    assert [e.id for e in session.path()] == ["aaaaaaaa", "bbbbbbbb"]


def test_problems_are_logged_with_file_and_line(tmp_path, caplog):
    path = tmp_path / "s.jsonl"
    write(path, HEADER, "not json", entry("aaaaaaaa", None))
    Session.open(path, read_only=True)
    assert any(str(path) in r.getMessage() and "line 2:" in r.getMessage() for r in caplog.records)


def test_a_file_that_is_no_session_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "notes.jsonl"
    path.write_text('{"hello":"world"}\n')
    with pytest.raises(SessionError, match="line 1 is not a session header"):
        Session.open(path)
    assert path.read_text() == '{"hello":"world"}\n'


def test_empty_file_becomes_a_new_session_written_in_place(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    session = Session.open(path, cwd="/w")
    session.append_model_change("p", "m")
    assert path.read_bytes() == b""
    session.append_message(user("q"))
    session.append_message(assistant("a"))
    assert [json.loads(line)["type"] for line in path.read_text().splitlines()] == [
        "session", "model_change", "message", "message"]


def test_only_a_torn_header_stays_and_the_new_header_follows_it(tmp_path):
    path = tmp_path / "s.jsonl"
    fragment = HEADER.encode()[:30]
    path.write_bytes(fragment)
    session = Session.open(path, cwd="/w")
    assert path.read_bytes() == fragment and len(session) == 0
    assert [p.line for p in session.problems] == [1]
    session.append_message(user("q"))
    session.close()
    data = path.read_bytes()
    assert data.startswith(fragment + b"\n") and list(tmp_path.iterdir()) == [path]
    again = Session.open(path, read_only=True)
    assert again.id == session.id and len(again) == 1
    assert [p.line for p in again.problems] == [1]


def test_lines_that_are_not_json_and_no_header_are_no_session(tmp_path):
    path = tmp_path / "notes.jsonl"
    path.write_text("just some notes\nmore notes\n")
    with pytest.raises(SessionError, match="not a pi session file"):
        Session.open(path)
    assert path.read_text() == "just some notes\nmore notes\n"
