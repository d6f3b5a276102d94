"""Every session the real pi wrote opens here, with the tree and context pi would build."""

from __future__ import annotations

import pytest

from pi_core.protocol.codec import to_json
from pi_core.protocol.entries import BranchSummaryEntry, LabelEntry, MessageEntry
from pi_core.protocol.messages import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    ThinkingContent,
    ToolResultMessage,
    UserMessage,
    text_of,
)
from pi_core.session import ModelRef, Session
from support.sessions import FIXTURES, assistant, copy_fixture, fixture, user

ALL = sorted(p.name for p in FIXTURES.glob("*.jsonl"))


def summary(context) -> list[tuple[str, str]]:
    """(role, the text a reader would recognise) for each context message."""
    out = []
    for m in context.messages:
        if isinstance(m, UserMessage):
            out.append(("user", text_of(m.content)))
        elif isinstance(m, AssistantMessage):
            calls = [f"{c.name}({c.id})" for c in m.tool_calls]
            out.append(("assistant", m.text + "".join(" " + c for c in calls)))
        elif isinstance(m, ToolResultMessage):
            out.append(("toolResult", f"{m.tool_name}({m.tool_call_id}) error={m.is_error}"))
        elif isinstance(m, BashExecutionMessage):
            out.append(("bashExecution", m.command))
        elif isinstance(m, (CompactionSummaryMessage, BranchSummaryMessage)):
            out.append((m.role, m.summary.splitlines()[0]))
        else:
            out.append((m.role, ""))
    return out


def test_there_are_six_fixtures():
    assert ALL == ["chat-openai-continued.jsonl", "chat-openai.jsonl", "rpc-compact-fork.jsonl",
                   "tools-anthropic-thinking.jsonl", "tools-openai.jsonl", "tree-branch.jsonl"]


@pytest.mark.parametrize("name", ALL)
def test_fixture_opens_without_problems_and_leaf_is_its_last_entry(name):
    session = Session.open(fixture(name), read_only=True)
    lines = fixture(name).read_text().splitlines()
    assert session.problems == []
    assert len(session) == len(lines) - 1
    assert session.leaf_id == session.entries[-1].id
    assert session.id == session.header.id and session.header.version == 3


def test_chat_context_is_the_user_message_and_the_answer():
    session = Session.open(fixture("chat-openai.jsonl"), read_only=True)
    context = session.build_context()
    assert summary(context) == [
        ("user", "hello"),
        ("assistant", "Hello from the fake LLM! How can I help you today?"),
    ]
    assert context.model == ModelRef("fake-openai", "fake-model")
    assert context.thinking_level == "off"
    assert [e.type for e in session.entries] == [
        "model_change", "thinking_level_change", "message", "message"]


def test_continued_chat_has_both_exchanges_in_one_line_of_descent():
    session = Session.open(fixture("chat-openai-continued.jsonl"), read_only=True)
    assert summary(session.build_context()) == [
        ("user", "hello"),
        ("assistant", "Hello from the fake LLM! How can I help you today?"),
        ("user", "second message"),
        ("assistant", "Second answer, same session."),
    ]
    assert [e.id for e in session.path()] == [e.id for e in session.entries]


def test_tool_session_pairs_every_call_with_its_result():
    session = Session.open(fixture("tools-openai.jsonl"), read_only=True)
    assert summary(session.build_context()) == [
        ("user", "Inspect notes.txt, mark it final and write a summary."),
        ("assistant", "Let me look at the workspace first. bash(call_0001951f71fa)"),
        ("toolResult", "bash(call_0001951f71fa) error=False"),
        ("assistant", " read(call_0002e76d4dd4)"),
        ("toolResult", "read(call_0002e76d4dd4) error=False"),
        ("assistant", " edit(call_0003d70243a0)"),
        ("toolResult", "edit(call_0003d70243a0) error=False"),
        ("assistant", " write(call_00048c6729c1)"),
        ("toolResult", "write(call_00048c6729c1) error=False"),
        ("assistant", "Checking both files at once. bash(call_0005365614ea) read(call_0006e2b1e119)"),
        ("toolResult", "bash(call_0005365614ea) error=False"),
        ("toolResult", "read(call_0006e2b1e119) error=False"),
        ("assistant", " bash(call_0007bbce709b)"),
        ("toolResult", "bash(call_0007bbce709b) error=True"),
        ("assistant", " read(call_000869c6a1ac)"),
        ("toolResult", "read(call_000869c6a1ac) error=True"),
        ("assistant", " edit(call_00097aa3c6f3)"),
        ("toolResult", "edit(call_00097aa3c6f3) error=True"),
        ("assistant", "Done. I listed the files, changed `status: draft` to `status: final` in "
                      "notes.txt, and wrote out/summary.md. A failing command, a missing file and "
                      "a non-matching edit were reported as tool errors."),
    ]
    edit_result = session.build_context().messages[6]
    assert edit_result.details == {
        "diff": " 1 title: harness notes\n-2 status: draft\n+2 status: final\n 3 owner: nobody",
        "firstChangedLine": 2}


def test_anthropic_session_restores_thinking_level_and_keeps_signatures():
    session = Session.open(fixture("tools-anthropic-thinking.jsonl"), read_only=True)
    context = session.build_context()
    assert context.thinking_level == "low"
    assert context.model == ModelRef("fake-anthropic", "fake-claude")
    roles = [role for role, _ in summary(context)]
    assert roles == ["user"] + ["assistant", "toolResult"] * 4 + [
        "assistant", "toolResult", "toolResult", "assistant"]
    first = context.messages[1]
    assert first.content[0] == ThinkingContent(
        "The user wants me to inspect the workspace. I should list files first.",
        thinking_signature="fakesiga3ad010271f74fae")
    assert summary(context)[-1] == ("assistant", "Done. notes.txt now says `status: final` "
                                                 "and out/summary.md was written.")


def test_compaction_puts_the_summary_first_then_kept_and_later_messages():
    session = Session.open(fixture("rpc-compact-fork.jsonl"), read_only=True)
    context = session.build_context()
    assert summary(context) == [
        ("compactionSummary", "## Goal"),
        ("assistant", session.entry("a889dbd1").message.text),
        ("bashExecution", "echo from-rpc-bash"),
        ("user", "Are you still there after compaction?"),
        ("assistant", "Still here after compaction; I can see the summary."),
    ]
    compaction = context.messages[0]
    assert compaction.tokens_before == 1813
    assert compaction.summary.startswith("## Goal\nAnswer a few small questions.")
    assert compaction.timestamp == 1796011495206  # the entry's ISO time, in ms
    assert session.entry("a889dbd1").message.text.startswith("Here is a longer answer:")
    assert session.name == "rpc-demo"


def test_tree_branch_fixture_has_two_branches_under_the_first_answer():
    session = Session.open(fixture("tree-branch.jsonl"), read_only=True)
    children = session.children("b12946ee")
    assert [c.id for c in children] == ["7abf0cd7", "89f45951"]
    assert isinstance(children[1], BranchSummaryEntry) and children[1].from_id == "b12946ee"
    assert session.label("89f45951") == "approach-b"
    assert session.labels == {"89f45951": "approach-b"}
    assert isinstance(session.entry("37d4d7aa"), LabelEntry)

    roots = session.tree()
    assert [r.entry.id for r in roots] == ["2e28a669"]
    node = roots[0]
    for expected in ["c3d5d6f4", "0030208a", "b12946ee"]:
        (node,) = node.children
        assert node.entry.id == expected
    assert [c.entry.id for c in node.children] == ["7abf0cd7", "89f45951"]
    assert node.children[1].label == "approach-b"
    assert node.children[1].label_timestamp == "2026-11-30T04:04:56.627Z"


def test_tree_branch_leaf_context_follows_branch_a():
    session = Session.open(fixture("tree-branch.jsonl"), read_only=True)
    assert session.leaf_id == "23d502f3"
    assert summary(session.build_context()) == [
        ("user", "Question one: what is in this directory?"),
        ("assistant", "The directory is empty apart from notes.txt."),
        ("user", "Try approach A: create a.txt"),
        ("assistant", " bash(call_00016fd1aeee)"),
        ("toolResult", "bash(call_00016fd1aeee) error=False"),
        ("assistant", "Approach A done: created a.txt."),
        ("user", "Back on branch A: continue"),
        ("assistant", "Continuing on branch A."),
    ]


def test_tree_branch_other_leaf_gets_the_branch_summary():
    session = Session.open(fixture("tree-branch.jsonl"), read_only=True)
    session.branch("814cde99")
    context = session.build_context()
    assert summary(context) == [
        ("user", "Question one: what is in this directory?"),
        ("assistant", "The directory is empty apart from notes.txt."),
        ("branchSummary", "The user explored a different conversation branch before returning here."),
        ("user", "Try approach B instead: create b.txt"),
        ("assistant", " write(call_00029466e732)"),
        ("toolResult", "write(call_00029466e732) error=False"),
        ("assistant", "Approach B done: created b.txt."),
    ]
    assert context.messages[2].from_id == "b12946ee"
    assert [e.type for e in session.path()][-6:] == [
        "branch_summary", "label", "message", "message", "message", "message"]


@pytest.mark.parametrize("name", ALL)
def test_every_fixture_line_survives_a_load_unchanged(name):
    """Same keys, same order, same values as pi wrote (numbers may print differently)."""
    import json

    session = Session.open(fixture(name), read_only=True)
    lines = fixture(name).read_text().splitlines()
    assert [json.dumps(to_json(e)) for e in session.entries] == [
        json.dumps(json.loads(line)) for line in lines[1:]]
    assert json.dumps(to_json(session.header)) == json.dumps(json.loads(lines[0]))


@pytest.mark.parametrize("name", ALL)
def test_appending_to_a_fixture_keeps_its_bytes_as_a_prefix(name, tmp_path):
    path = copy_fixture(name, tmp_path)
    original = path.read_bytes()
    with Session.open(path) as session:
        leaf = session.leaf_id
        asked = session.append_message(user("one more question"))
        answered = session.append_message(assistant("one more answer"))
    data = path.read_bytes()
    assert data.startswith(original)
    assert data.count(b"\n") == original.count(b"\n") + 2
    reopened = Session.open(path, read_only=True)
    assert reopened.problems == []
    assert reopened.leaf_id == answered.id
    assert reopened.entry(asked.id).parent_id == leaf
    assert [type(m).__name__ for m in reopened.build_context().messages][-2:] == [
        "UserMessage", "AssistantMessage"]
    assert isinstance(reopened.entry(answered.id), MessageEntry)
