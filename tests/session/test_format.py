"""Files written here have the shape of the files pi writes (the fixtures)."""

from __future__ import annotations

import json
import re
import uuid

from pi_core.session import Session, encode_cwd, session_dir_for
from support.sessions import assistant, fixture, tool_result, user

ISO_MS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
ENTRY_ID = re.compile(r"^[0-9a-f]{8}$")


def start_like_pi(session: Session) -> None:
    """What the harness does for a new session, as pi does: model, thinking, prompt."""
    session.append_model_change("fake-openai", "fake-model")
    session.append_thinking_level_change("off")
    session.append_message(user("hello"))


def lines_of(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def keys_by_type(lines: list[dict]) -> dict[str, list[str]]:
    return {line["type"]: list(line) for line in lines}


def test_cwd_is_encoded_into_the_folder_name_as_pi_does():
    assert encode_cwd("/home/me/app") == "--home-me-app--"
    assert encode_cwd("C:\\Users\\me") == "--C--Users-me--"
    assert encode_cwd("/a:b/c") == "--a-b-c--"


def test_default_folder_is_under_the_agent_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    session = Session.create("/home/me/app")
    assert session.sessions_dir == tmp_path / "agent" / "sessions" / "--home-me-app--"
    assert session.file.parent == session_dir_for("/home/me/app")


def test_file_appears_with_the_first_message_the_prompt(tmp_path):
    session = Session.create("/home/me/app", tmp_path)
    session.append_model_change("fake-openai", "fake-model")
    session.append_thinking_level_change("off")
    assert not session.file.exists() and not session.on_disk
    session.append_message(user("hello"))
    assert session.on_disk
    session.append_custom("plugin-state", {"n": 1})
    session.append_message(assistant("hi"))
    lines = lines_of(session.file)
    assert [line["type"] for line in lines] == [
        "session", "model_change", "thinking_level_change", "message", "custom", "message"]
    session.append_message(user("more"))
    assert len(lines_of(session.file)) == 7


def test_a_prompt_interrupted_before_any_answer_is_kept(tmp_path):
    session = Session.create("/home/me/app", tmp_path)
    start_like_pi(session)
    session.close()  # Ctrl+C before the first assistant message (pi loses the prompt)
    again = Session.open(session.file, read_only=True)
    assert [m.content[0].text for m in again.build_context().messages] == ["hello"]


def test_nothing_is_written_for_a_session_without_a_message(tmp_path):
    session = Session.create("/home/me/app", tmp_path)
    session.append_model_change("fake-openai", "fake-model")
    session.append_thinking_level_change("off")
    session.close()
    assert list(tmp_path.iterdir()) == []


def test_a_file_deleted_while_open_is_written_again_with_its_header(tmp_path):
    session = Session.create("/home/me/app", tmp_path)
    start_like_pi(session)
    session.append_message(assistant("hi"))
    session.file.unlink()
    session.append_message(user("after the delete"))
    lines = lines_of(session.file)
    assert lines[0]["type"] == "session" and lines[0]["id"] == session.id
    assert [line.get("message", {}).get("role") for line in lines[1:]] == [
        None, None, "user", "assistant", "user"]
    session.append_message(assistant("again"))
    assert len(lines_of(session.file)) == 7
    session.close()
    assert Session.open(session.file).problems == []


def test_written_file_has_the_fixtures_shape(tmp_path):
    session = Session.create("/home/me/app", tmp_path)
    start_like_pi(session)
    session.append_message(assistant("", calls=[("call_1", "bash")]))
    session.append_message(tool_result("call_1"))
    answer = session.append_message(assistant("done"))
    session.append_session_info("  my session  ")
    session.append_compaction("## Goal\nx", answer.id, 1234, {"readFiles": [], "modifiedFiles": []},
                              False)
    session.branch_with_summary(answer.id, "summary of the other branch",
                                {"readFiles": [], "modifiedFiles": []}, False)
    session.append_label(answer.id, "checkpoint")
    session.close()

    ours = lines_of(session.file)
    header = ours[0]
    assert list(header) == ["type", "version", "id", "timestamp", "cwd"]
    assert header["version"] == 3 and header["cwd"] == "/home/me/app"
    assert uuid.UUID(header["id"]).version == 7
    assert ISO_MS.match(header["timestamp"])
    stamp = header["timestamp"].replace(":", "-").replace(".", "-")
    assert session.file.name == f"{stamp}_{header['id']}.jsonl"

    previous = None
    for line in ours[1:]:
        assert ENTRY_ID.match(line["id"]) and ISO_MS.match(line["timestamp"])
        assert line["parentId"] == previous or line["type"] == "branch_summary"
        previous = line["id"]
    assert ours[1]["parentId"] is None
    assert ours[3]["message"]["content"] == [{"type": "text", "text": "hello"}]
    assert ours[-4]["name"] == "my session"

    theirs = []
    for name in ["tools-openai.jsonl", "rpc-compact-fork.jsonl", "tree-branch.jsonl"]:
        theirs += lines_of(fixture(name))
    ours_by_type, theirs_by_type = keys_by_type(ours), keys_by_type(theirs)
    assert set(ours_by_type) == set(theirs_by_type)
    for entry_type, keys in theirs_by_type.items():
        assert ours_by_type[entry_type] == keys, entry_type
    for role in ["user", "assistant", "toolResult"]:
        ours_keys = next(list(l["message"]) for l in ours
                         if l["type"] == "message" and l["message"]["role"] == role)
        theirs_keys = next(list(l["message"]) for l in theirs
                           if l["type"] == "message" and l["message"]["role"] == role)
        optional = {"responseId", "details"}  # the provider's response id, a tool's details
        assert ours_keys == [k for k in theirs_keys if k not in optional or k in ours_keys], role


def test_in_memory_session_never_touches_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path))
    session = Session.in_memory("/home/me/app")
    start_like_pi(session)
    session.append_message(assistant("hi"))
    assert session.file is None
    assert [m.role for m in session.build_context().messages] == ["user", "assistant"]
    assert list(tmp_path.iterdir()) == []


def test_open_of_a_missing_path_starts_a_session_written_there(tmp_path):
    path = tmp_path / "chosen.jsonl"
    session = Session.open(path, cwd="/home/me/app")
    session.append_model_change("fake-openai", "fake-model")
    assert not path.exists()
    session.append_message(user("hello"))
    session.append_message(assistant("hi"))
    assert lines_of(path)[0]["cwd"] == "/home/me/app"
    assert len(lines_of(path)) == 4
    session.append_thinking_level_change("off")
    assert len(lines_of(path)) == 5


def test_unknown_entry_types_and_fields_survive_a_load_and_append(tmp_path):
    path = tmp_path / "s.jsonl"
    newer = [
        '{"type":"session","version":3,"id":"01a22aa0-0000-7000-8000-000000000000",'
        '"timestamp":"2026-11-30T04:04:46.971Z","cwd":"/x","future":1}',
        '{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"2026-11-30T04:04:47.013Z",'
        '"message":{"role":"user","content":[{"type":"text","text":"hi","lang":"en"}],'
        '"timestamp":1,"mood":"curious"},"weight":3}',
        '{"type":"hologram","id":"bbbbbbbb","parentId":"aaaaaaaa",'
        '"timestamp":"2026-11-30T04:04:48.013Z","beam":{"x":[1,2]}}',
    ]
    path.write_text("\n".join(newer) + "\n")
    with Session.open(path) as session:
        assert session.problems == []
        assert session.entry("bbbbbbbb").type == "hologram"
        added = session.append_message(user("next"))
        assert added.parent_id == "bbbbbbbb"
    text = path.read_text()
    assert text.startswith("\n".join(newer) + "\n")
    again = Session.open(path, read_only=True)
    assert json.loads(json.dumps(again.entries[0].extra)) == {"weight": 3}
    assert again.entries[0].message.extra == {"mood": "curious"}
    assert again.header.extra == {"future": 1}


def test_lines_are_compact_utf8_json_whatever_they_hold(tmp_path):
    session = Session.create("/home/me/app", tmp_path)
    session.append_message(user("ünïcødé ✓ \"quoted\""))
    session.append_custom("state", {"big": 2 ** 70, "ratio": 0.25, "nested": {"k": [1, None]}})
    session.close()
    lines = session.file.read_bytes().splitlines()
    assert "ünïcødé ✓".encode() in lines[1] and b"\\u00fc" not in lines[1]
    assert b'"data":{"big":1180591620717411303424,"ratio":0.25,"nested":{"k":[1,null]}}' in lines[2]
    assert b", " not in lines[2] and b": " not in lines[2]
    again = Session.open(session.file, read_only=True)
    assert again.entries[1].data["big"] == 2 ** 70
