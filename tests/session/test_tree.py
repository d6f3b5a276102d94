"""Branching, labels, names, and the views of the tree."""

from __future__ import annotations

import pytest

from pi_core.protocol.entries import BranchSummaryEntry
from pi_core.protocol.messages import BranchSummaryMessage, CompactionSummaryMessage
from pi_core.session import Session, SessionError
from support.sessions import assistant, user


@pytest.fixture
def chat(tmp_path) -> Session:
    session = Session.create("/w", tmp_path)
    session.append_model_change("p", "m")
    session.append_message(user("q1"))
    session.append_message(assistant("a1"))
    session.append_message(user("q2"))
    session.append_message(assistant("a2"))
    return session


def texts(session: Session) -> list[str]:
    out = []
    for m in session.build_context().messages:
        out.append(getattr(m, "text", None) or m.content[0].text if m.role in ("user", "assistant")
                   else m.role)
    return out


def test_appending_after_branch_starts_a_sibling(chat):
    a1 = chat.path()[2]
    chat.branch(a1.id)
    chat.append_message(user("q2-bis"))
    assert texts(chat) == ["q1", "a1", "q2-bis"]
    assert [c.message.content[0].text for c in chat.children(a1.id)] == ["q2", "q2-bis"]


def test_path_to_any_entry_runs_from_the_root(chat):
    ids = [e.id for e in chat.entries]
    assert [e.id for e in chat.path(ids[2])] == ids[:3]
    assert [e.id for e in chat.path()] == ids
    assert chat.path("nope") == []


def test_reset_leaf_makes_the_next_entry_a_new_root(chat):
    chat.reset_leaf()
    assert chat.build_context().messages == []
    assert chat.build_context().model is None
    entry = chat.append_message(user("fresh start"))
    assert entry.parent_id is None
    assert [e.entry.id for e in chat.tree()] == [chat.entries[0].id, entry.id]
    assert [e.id for e in chat.children(None)] == [chat.entries[0].id, entry.id]


def test_branch_with_summary_hangs_the_summary_at_the_branch_point_and_names_the_leaf_left(chat):
    a1 = chat.path()[2]
    left = chat.leaf_id
    entry = chat.branch_with_summary(a1.id, "we tried q2", {"readFiles": []}, True)
    assert isinstance(entry, BranchSummaryEntry) and entry.parent_id == a1.id
    assert entry.from_id == left != a1.id and chat.leaf_id == entry.id
    context = chat.build_context().messages
    assert isinstance(context[-1], BranchSummaryMessage) and context[-1].summary == "we tried q2"


def test_branch_with_summary_to_before_the_first_entry_hangs_it_at_the_root(chat):
    left = chat.leaf_id
    entry = chat.branch_with_summary(None, "everything")
    assert entry.parent_id is None and entry.from_id == left


def test_unknown_entries_are_refused_with_a_clear_error(chat):
    with pytest.raises(SessionError, match="'deadbeef' is not in the session"):
        chat.branch("deadbeef")
    with pytest.raises(SessionError, match="not in the session"):
        chat.append_label("deadbeef", "x")
    with pytest.raises(SessionError, match="not in the session"):
        chat.branch_with_summary("deadbeef", "x")


def test_labels_set_move_and_clear(chat):
    first = chat.entries[1]
    chat.append_label(first.id, "start")
    assert chat.label(first.id) == "start"
    chat.append_label(first.id, "beginning")
    assert chat.labels == {first.id: "beginning"}
    chat.append_label(first.id, None)
    assert chat.label(first.id) is None and chat.labels == {}
    node = chat.tree()[0].children[0]
    assert node.entry.id == first.id and node.label is None


def test_session_name_is_the_latest_info_and_empty_clears_it(chat):
    assert chat.name is None
    chat.append_session_info("  Refactor auth  ")
    assert chat.name == "Refactor auth"
    chat.append_session_info("")
    assert chat.name is None


def test_labels_and_name_come_back_after_reopening(chat):
    chat.append_label(chat.entries[1].id, "start")
    chat.append_session_info("named")
    chat.close()
    again = Session.open(chat.file, read_only=True)
    assert again.labels == {chat.entries[1].id: "start"} and again.name == "named"


def test_tree_children_are_sorted_oldest_first(chat):
    a1 = chat.path()[2]
    chat.branch(a1.id)
    late = chat.append_message(user("later"))
    chat.entries[3].timestamp = "2000-01-01T00:00:00.000Z"  # q2 now claims to be older
    node = chat.tree()[0]
    while node.entry.id != a1.id:
        (node,) = node.children
    assert [c.entry.id for c in node.children] == [chat.entries[3].id, late.id]


def test_summaries_cannot_be_appended_as_messages(chat):
    with pytest.raises(ValueError, match="append_compaction"):
        chat.append_message(CompactionSummaryMessage(summary="s", tokens_before=1))
    with pytest.raises(ValueError, match="branch_with_summary"):
        chat.append_message(BranchSummaryMessage(summary="s", from_id="x"))


def test_read_only_and_closed_sessions_refuse_to_change(chat):
    chat.close()
    with pytest.raises(SessionError, match="closed"):
        chat.append_message(user("late"))
    reader = Session.open(chat.file, read_only=True)
    with pytest.raises(SessionError, match="read-only"):
        reader.append_message(user("x"))
    reader.branch(reader.entries[1].id)  # moving the leaf is only a view: allowed


def test_entries_that_cannot_be_written_leave_the_session_unchanged(chat):
    before = chat.file.read_bytes()
    leaf = chat.leaf_id
    with pytest.raises(TypeError):
        chat.append_custom("state", {"not json": object()})
    assert chat.leaf_id == leaf and len(chat) == 5
    assert chat.file.read_bytes() == before
