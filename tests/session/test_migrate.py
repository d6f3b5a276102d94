"""Versions 1 and 2 become version 3 on open: a new file renamed over the old one."""

from __future__ import annotations

import json
import re

import pytest

from pi_core.protocol.messages import CustomMessage
from pi_core.session import Session
from support.sessions import pi_probe, user

V1 = [
    {"type": "session", "id": "sess-v1", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/old"},
    {"type": "message", "timestamp": "2025-01-01T00:00:01.000Z",
     "message": {"role": "user", "content": "first question", "timestamp": 1}},
    {"type": "message", "timestamp": "2025-01-01T00:00:02.000Z",
     "message": {"role": "assistant", "content": [{"type": "text", "text": "first answer"}],
                 "api": "openai-completions", "provider": "openai", "model": "gpt-4o",
                 "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0,
                           "totalTokens": 2, "cost": {"input": 0, "output": 0, "cacheRead": 0,
                                                      "cacheWrite": 0, "total": 0}},
                 "stopReason": "stop", "timestamp": 2}},
    {"type": "message", "timestamp": "2025-01-01T00:00:03.000Z",
     "message": {"role": "user", "content": "second question", "timestamp": 3}},
    {"type": "compaction", "timestamp": "2025-01-01T00:00:04.000Z", "summary": "they talked",
     "firstKeptEntryIndex": 3, "tokensBefore": 99},
    {"type": "thinking_level_change", "timestamp": "2025-01-01T00:00:05.000Z",
     "thinkingLevel": "medium"},
]


def write_lines(path, values, extra_raw: str | None = None) -> None:
    lines = [json.dumps(v, separators=(",", ":")) for v in values]
    if extra_raw is not None:
        lines.insert(2, extra_raw)
    path.write_text("\n".join(lines) + "\n")


def test_version_1_gets_ids_parents_and_first_kept_id(tmp_path):
    path = tmp_path / "old.jsonl"
    write_lines(path, V1)
    inode = path.stat().st_ino
    with Session.open(path) as session:
        assert session.problems == []
        assert session.header.version == 3
        ids = [e.id for e in session.entries]
        assert all(re.fullmatch(r"[0-9a-f]{8}", i) for i in ids) and len(set(ids)) == 5
        assert [e.parent_id for e in session.entries] == [None, *ids[:-1]]
        compaction = session.entries[3]
        assert compaction.first_kept_entry_id == ids[2]  # index 3 counted the header as 0
        context = session.build_context()
        assert [m.role for m in context.messages] == ["compactionSummary", "user"]
        assert context.messages[1].content == "second question"
        assert context.thinking_level == "medium"
        session.append_thinking_level_change("high")
    assert path.stat().st_ino != inode, "migration writes a new file and renames it"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0] == {**V1[0], "version": 3}
    assert list(lines[1])[:4] == ["type", "id", "parentId", "timestamp"]
    assert "firstKeptEntryIndex" not in lines[4]
    assert lines[-1]["thinkingLevel"] == "high" and lines[-1]["parentId"] == lines[-2]["id"]
    assert not list(tmp_path.glob("*.new*"))
    again = Session.open(path, read_only=True)
    assert [e.id for e in again.entries] == [line["id"] for line in lines[1:]]


def test_version_2_hook_messages_become_custom_messages(tmp_path):
    path = tmp_path / "v2.jsonl"
    write_lines(path, [
        {"type": "session", "version": 2, "id": "sess-v2", "timestamp": "2025-01-01T00:00:00.000Z",
         "cwd": "/old"},
        {"type": "message", "id": "aaaaaaaa", "parentId": None,
         "timestamp": "2025-01-01T00:00:01.000Z",
         "message": {"role": "hookMessage", "customType": "reminder", "content": "hello",
                     "display": True, "timestamp": 1}},
    ])
    with Session.open(path) as session:
        (message,) = session.build_context().messages
        assert isinstance(message, CustomMessage) and message.custom_type == "reminder"
        assert session.entries[0].id == "aaaaaaaa"
    assert json.loads(path.read_text().splitlines()[1])["message"]["role"] == "custom"


def test_read_only_open_migrates_in_memory_and_leaves_the_file(tmp_path):
    path = tmp_path / "old.jsonl"
    write_lines(path, V1)
    before = path.read_bytes()
    session = Session.open(path, read_only=True)
    assert session.header.version == 3 and len(session) == 5
    assert path.read_bytes() == before


def test_unreadable_lines_are_carried_over_unchanged(tmp_path):
    path = tmp_path / "old.jsonl"
    write_lines(path, V1, extra_raw='{"type":"message", broken')
    with Session.open(path) as session:
        assert [p.line for p in session.problems] == [3]
        assert len(session) == 5
    assert path.read_text().splitlines()[2] == '{"type":"message", broken'


def test_a_torn_last_line_of_an_old_file_is_carried_over_as_a_line_of_its_own(tmp_path):
    path = tmp_path / "old.jsonl"
    write_lines(path, V1)
    path.write_bytes(path.read_bytes() + b'{"type":"message","timest')
    with Session.open(path) as session:
        assert len(session) == 5
        added = session.append_message(user("after the migration"))
    lines = path.read_text().splitlines()
    assert lines[-2] == '{"type":"message","timest' and json.loads(lines[-1])["id"] == added.id
    assert json.loads(lines[0])["version"] == 3
    assert [p.line for p in Session.open(path, read_only=True).problems] == [len(lines) - 1]


@pytest.mark.process
@pytest.mark.requires("pi")
def test_pi_migrates_version_1_to_the_same_context(tmp_path):
    ours, theirs = tmp_path / "ours.jsonl", tmp_path / "theirs.jsonl"
    write_lines(ours, V1)
    write_lines(theirs, V1)
    context = Session.open(ours).build_context()
    pi = pi_probe("context", str(theirs))["context"]
    assert [m["role"] for m in pi["messages"]] == [m.role for m in context.messages]
    assert pi["messages"][0]["summary"] == context.messages[0].summary
    assert pi["thinkingLevel"] == context.thinking_level
