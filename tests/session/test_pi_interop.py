"""The real pi (0.73.1, run with node) and we read each other's session files alike.

Skipped cleanly where node or pi (``/tmp/pi``, or ``PI_PACKAGE``) is absent.
"""

from __future__ import annotations

import json

import pytest

from pi_core.protocol.codec import to_json
from pi_core.protocol.messages import BashExecutionMessage
from pi_core.session import Session
from support.sessions import (
    FIXTURES,
    assistant,
    copy_fixture,
    pi_probe,
    tool_result,
    user,
)

pytestmark = [pytest.mark.requires("pi"), pytest.mark.process]


def our_context(session: Session) -> dict:
    context = session.build_context()
    model = context.model
    return {
        "messages": [to_json(m) for m in context.messages],
        "thinkingLevel": context.thinking_level,
        "model": {"provider": model.provider, "modelId": model.model_id} if model else None,
    }


def rich_session(tmp_path) -> Session:
    """A session using every entry type, written here."""
    s = Session.create("/home/me/app", tmp_path)
    s.append_model_change("fake-openai", "fake-model")
    s.append_thinking_level_change("off")
    s.append_message(user("Run echo hi"))
    s.append_message(assistant("Running it.", calls=[("call_1", "bash")]))
    s.append_message(tool_result("call_1", "hi\n"))
    answer = s.append_message(assistant("It printed hi. ünïcødé ✓"))
    s.append_custom("todo-state", {"items": ["a", "b"]})
    s.append_custom_message("reminder", "Remember the tests.", display=True, details={"n": 1})
    s.append_message(BashExecutionMessage(command="ls", output="a\nb\n", exit_code=0))
    s.append_session_info("Interop check")
    s.append_label(answer.id, "answered")
    s.append_thinking_level_change("high")
    s.append_message(user("Summarise please"))
    s.append_message(assistant("Summary.", provider="fake-anthropic", model="fake-claude"))
    s.append_compaction("## Goal\nEcho things", answer.id, 4321,
                        {"readFiles": [], "modifiedFiles": []}, False)
    s.append_message(user("after compaction"))
    s.append_message(assistant("still here"))
    s.branch_with_summary(answer.id, "We left a branch.", {"readFiles": []}, False)
    s.append_message(user("on the new branch"))
    s.append_message(assistant("new branch answer"))
    return s


def test_pi_opens_a_file_we_wrote_and_sees_the_same_session(tmp_path):
    session = rich_session(tmp_path)
    session.close()
    pi = pi_probe("context", str(session.file))
    assert pi["id"] == session.id
    assert pi["leafId"] == session.leaf_id
    assert pi["entryIds"] == [e.id for e in session.entries]
    assert pi["name"] == "Interop check"
    assert pi["labels"] == session.labels
    assert pi["context"] == our_context(session)


def test_pi_and_we_agree_on_the_context_at_every_entry_of_our_file(tmp_path):
    session = rich_session(tmp_path)
    session.close()
    theirs = pi_probe("contexts", str(session.file))
    reader = Session.open(session.file, read_only=True)
    for entry in reader.entries:
        reader.branch(entry.id)
        assert theirs[entry.id] == our_context(reader), entry.id


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.jsonl")))
def test_pi_and_we_agree_on_the_context_at_every_entry_of_its_files(name):
    theirs = pi_probe("contexts", str(FIXTURES / name))
    session = Session.open(FIXTURES / name, read_only=True)
    for entry in session.entries:
        session.branch(entry.id)
        assert theirs[entry.id] == our_context(session), entry.id


def test_pi_continues_a_file_we_wrote_and_we_read_its_lines(tmp_path):
    session = rich_session(tmp_path)
    session.close()
    before = session.file.read_bytes()
    answer = pi_probe("append", str(session.file))["leafId"]
    assert session.file.read_bytes().startswith(before)
    again = Session.open(session.file)
    assert again.problems == [] and again.leaf_id == answer
    assert [m.role for m in again.build_context().messages][-2:] == ["user", "assistant"]
    again.append_message(user("and back to us"))
    again.close()
    pi = pi_probe("context", str(session.file))
    assert pi["context"]["messages"][-1]["content"] == [{"type": "text", "text": "and back to us"}]


def test_pi_continues_its_own_fixture_after_we_appended(tmp_path):
    path = copy_fixture("tools-openai.jsonl", tmp_path)
    with Session.open(path) as session:
        session.append_message(user("python was here"))
        session.append_message(assistant("noted"))
    pi_probe("append", str(path))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["message"]["role"] for line in lines[-4:]] == [
        "user", "assistant", "user", "assistant"]
    assert Session.open(path, read_only=True).problems == []


def test_real_pi_cli_resumes_a_session_we_wrote(tmp_path):
    """``pi --session OUR_FILE -p ...`` against a local server: pi sends our conversation
    and appends its turn to our file, which we then open and continue."""
    import os
    import subprocess

    from support.fake_openai import FakeOpenAI
    from support.sessions import PI_PACKAGE

    agent = tmp_path / "agent"
    agent.mkdir()
    session = Session.create(str(tmp_path), tmp_path / "sessions")
    session.append_model_change("fake-openai", "fake-model")
    session.append_thinking_level_change("off")
    session.append_message(user("What is the capital of France?"))
    session.append_message(assistant("Paris."))
    session.close()
    ours = session.file.read_bytes()

    with FakeOpenAI("Rome, said pi.") as server:
        (agent / "models.json").write_text(json.dumps({"providers": {"fake-openai": {
            "baseUrl": server.base_url, "api": "openai-completions", "apiKey": "unused",
            "models": [{"id": "fake-model"}]}}}))
        done = subprocess.run(
            ["node", str(PI_PACKAGE / "dist" / "cli.js"), "--session", str(session.file),
             "-p", "And of Italy?", "--no-tools"],
            cwd=tmp_path, env={**os.environ, "PI_CODING_AGENT_DIR": str(agent)},
            capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Rome, said pi."
    (request,) = server.requests
    assert request["model"] == "fake-model"
    assert [(m["role"], m["content"]) for m in request["messages"][1:]] == [
        ("user", [{"type": "text", "text": "What is the capital of France?"}]),
        ("assistant", "Paris."),
        ("user", [{"type": "text", "text": "And of Italy?"}]),
    ]
    assert session.file.read_bytes().startswith(ours)
    with Session.open(session.file) as again:
        assert again.problems == []
        texts = [m.text if m.role == "assistant" else m.content[0].text
                 for m in again.build_context().messages]
        assert texts == ["What is the capital of France?", "Paris.", "And of Italy?",
                         "Rome, said pi."]
        again.append_message(user("thanks"))


@pytest.mark.process
def test_a_torn_file_appended_here_keeps_its_bytes_and_the_real_pi_continues_it(tmp_path):
    """A crash left a torn last line; we append (after a newline, the fragment left in
    place), so the original bytes stay a prefix; then ``pi --session FILE -p`` against the
    scripted server reads past the fragment, sends the whole conversation and appends."""
    import os
    import subprocess

    from support.llm_server import LlmServer, Reply
    from support.sessions import PI_PACKAGE

    session = Session.create(str(tmp_path), tmp_path / "sessions")
    session.append_model_change("local", "test-model")
    session.append_thinking_level_change("off")
    session.append_message(user("What is the capital of France?"))
    last = session.append_message(assistant("Paris.", provider="local", model="test-model"))
    session.close()
    fragment = ('{"type":"message","id":"abcd1234","parentId":"%s","timestamp":"2026-12-01T1'
                % last.id).encode()
    torn = session.file.read_bytes() + fragment
    session.file.write_bytes(torn)

    with Session.open(session.file) as ours:
        assert [p.line for p in ours.problems] == [6]
        ours.append_message(user("And of Spain?"))
        ours.append_message(assistant("Madrid.", provider="local", model="test-model"))
    assert session.file.read_bytes().startswith(torn)
    assert list(session.file.parent.iterdir()) == [session.file]
    appended = session.file.read_bytes()

    agent = tmp_path / "agent"
    agent.mkdir()
    with LlmServer() as server:
        server.push(Reply(text="Rome, said pi."))
        (agent / "models.json").write_text(json.dumps(server.models_json("local", apiKey="unused")))
        done = subprocess.run(
            ["node", str(PI_PACKAGE / "dist" / "cli.js"), "--session", str(session.file),
             "--model", "local/test-model", "-p", "And of Italy?", "--no-tools"],
            cwd=tmp_path, env={**os.environ, "PI_CODING_AGENT_DIR": str(agent)},
            capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "Rome, said pi."
        (request,) = server.requests
    sent = [(m["role"], m["content"] if isinstance(m["content"], str)
             else m["content"][0]["text"]) for m in request.body["messages"][1:]]
    assert sent == [("user", "What is the capital of France?"), ("assistant", "Paris."),
                    ("user", "And of Spain?"), ("assistant", "Madrid."),
                    ("user", "And of Italy?")]
    assert session.file.read_bytes().startswith(appended)
    with Session.open(session.file, read_only=True) as again:
        assert [p.line for p in again.problems] == [6]  # the fragment, still skipped
        texts = [m.text if m.role == "assistant" else m.content[0].text
                 for m in again.build_context().messages]
        assert texts[-2:] == ["And of Italy?", "Rome, said pi."]
