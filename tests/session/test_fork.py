"""Fork and clone into new files; fork a whole file into another project."""

from __future__ import annotations

import json

import pytest

from pi_core.app.forks import clone, fork
from pi_core.protocol.codec import to_json
from pi_core.protocol.entries import LabelEntry
from pi_core.session import Session, SessionError
from pi_plugins.cli.sessions import fork_from
from support.sessions import assistant, copy_fixture, fixture, user


def lines_of(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_fork_writes_the_path_with_its_labels_and_names_the_parent(tmp_path):
    source = Session.open(copy_fixture("tree-branch.jsonl", tmp_path))
    source.branch("814cde99")  # branch B, under the labelled branch summary
    forked = fork(source, "814cde99")
    assert forked.file.parent == tmp_path and forked.file != source.file
    assert forked.header.parent_session == str(source.file)
    assert forked.id != source.id and forked.cwd == source.cwd
    lines = lines_of(forked.file)
    assert lines[0]["parentSession"] == str(source.file)
    kinds = [line["type"] for line in lines[1:]]
    assert kinds == ["model_change", "thinking_level_change", "message", "message",
                     "branch_summary", "message", "message", "message", "message", "label"]
    label = lines[-1]
    assert (label["targetId"], label["label"], label["timestamp"]) == (
        "89f45951", "approach-b", "2026-11-30T04:04:56.627Z")
    # the message that hung under the (dropped) label entry now hangs under its parent
    assert lines[6]["id"] == "51c78225" and lines[6]["parentId"] == "89f45951"
    reopened = Session.open(forked.file, read_only=True)
    assert reopened.problems == []
    assert [to_json(m) for m in reopened.build_context().messages] == [
        to_json(m) for m in source.build_context().messages]
    assert reopened.labels == {"89f45951": "approach-b"}


def test_fork_before_any_answer_is_written_with_the_first_assistant_message(tmp_path):
    session = Session.create("/w", tmp_path)
    first = session.append_message(user("q1"))
    session.append_message(assistant("a1"))
    forked = fork(session, first.id)
    assert not forked.file.exists() and len(forked) == 1
    forked.append_message(assistant("another answer"))
    assert [line["type"] for line in lines_of(forked.file)] == ["session", "message", "message"]


def test_fork_of_nothing_is_an_empty_session_with_a_parent(tmp_path):
    session = Session.create("/w", tmp_path)
    session.append_message(user("q1"))
    session.append_message(assistant("a1"))
    forked = fork(session, None)
    assert len(forked) == 0 and forked.header.parent_session == str(session.file)


def test_fork_of_an_unknown_entry_is_refused(tmp_path):
    with pytest.raises(SessionError, match="not in the session"):
        fork(Session.in_memory("/w"), "deadbeef")


def test_clone_copies_the_current_branch(tmp_path):
    session = Session.open(copy_fixture("tree-branch.jsonl", tmp_path))
    cloned = clone(session)
    assert [e.id for e in cloned.path()] == [
        e.id for e in session.path() if not isinstance(e, LabelEntry)]
    assert cloned.file.exists()
    cloned.append_message(user("only in the clone"))
    assert len(Session.open(session.file, read_only=True)) == 16


def test_fork_of_an_in_memory_session_stays_in_memory():
    session = Session.in_memory("/w")
    session.append_message(user("q"))
    session.append_message(assistant("a"))
    cloned = clone(session)
    assert cloned.file is None and len(cloned) == 2 and cloned.header.parent_session is None


def test_fork_from_copies_every_entry_into_the_target_project(tmp_path):
    source = fixture("tree-branch.jsonl")
    forked = fork_from(source, "/home/me/other", tmp_path / "other")
    lines = lines_of(forked.file)
    assert forked.file.parent == tmp_path / "other"
    assert lines[0]["cwd"] == "/home/me/other" and lines[0]["parentSession"] == str(source)
    assert lines[1:] == [json.loads(line) for line in source.read_text().splitlines()[1:]]
    assert forked.leaf_id == "23d502f3"
    forked.append_message(user("continuing here"))
    assert len(lines_of(forked.file)) == len(lines) + 1


def test_fork_from_an_empty_file_is_refused(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(SessionError, match="holds no session"):
        fork_from(empty, "/w", tmp_path / "out")
