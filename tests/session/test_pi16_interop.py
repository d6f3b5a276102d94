"""pi 1.6 (on Node 22) and we read each other's sessions alike, with the entries 1.6 added:
``context_edit`` (what the model sees of an earlier message changes, the history does not),
``usage`` (spending outside the conversation), and the ``usage`` that compactions, branch
summaries and tool results carry. Compared: the context at every entry, the session's
totals, and what each program sends when it resumes the other's file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pi_core.app.session_stats import usage_totals
from pi_core.protocol.codec import to_json
from pi_core.protocol.entries import UsageEntry
from pi_core.protocol.messages import Cost, ToolResultMessage, TextContent, Usage
from pi_core.app.context_edits import append_context_edit
from pi_core.session import Session, SessionError
from support.fixtures import FIXTURES
from support.llm_server import LlmServer, Reply
from support.programs import NODE22, PI16
from support.sessions import assistant, user

pytestmark = [pytest.mark.requires("pi16"), pytest.mark.process]

PI16_FIXTURES = FIXTURES / "sessions-pi16"
PROBE = Path(__file__).parent / "pi16_probe.mjs"


def pi16_probe(*args: str):
    done = subprocess.run([str(NODE22), str(PROBE), *args], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PI16_PACKAGE": str(PI16)})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def our_contexts(path: Path) -> dict:
    session = Session.open(path, read_only=True)
    out = {}
    for entry in session.entries:
        session.branch(entry.id)
        context = session.build_context()
        model = context.model
        out[entry.id] = {
            "messages": [to_json(m) for m in context.messages],
            "thinkingLevel": context.thinking_level,
            "model": {"provider": model.provider, "modelId": model.model_id} if model else None,
        }
    return out


def spent(input: int, output: int, cost: float) -> Usage:
    return Usage(input=input, output=output, total_tokens=input + output,
                 cost=Cost(input=cost / 2, output=cost / 2, total=cost))


def our_session(directory: Path) -> Session:
    """A session written here with every entry pi 1.6 added."""
    s = Session.create("/home/me/app", directory)
    s.append_model_change("local", "test-model")
    s.append_thinking_level_change("off")
    secret = s.append_message(user("My token is abc123."))
    s.append_message(assistant("Noted.", model="test-model", provider="local"))
    s.append_message(user("Run echo hi"))
    s.append_message(assistant("Running.", calls=[("call_1", "bash")], model="test-model", provider="local"))
    result = s.append_message(ToolResultMessage(tool_call_id="call_1", tool_name="bash",
                                                content=[TextContent("hi\n" * 40)], usage=spent(5, 2, 0.5)))
    answer = s.append_message(assistant("It printed hi forty times.", model="test-model", provider="local"))
    append_context_edit(s, secret.id, None)
    append_context_edit(s, result.id, {"content": "hi (x40)"})
    append_context_edit(s, answer.id, {"content": "It printed hi."})
    s.append(UsageEntry(kind="cache_warm", provider="local", model="test-model", usage=spent(0, 0, 0.25)))
    reminder = s.append_custom_message("reminder", "Be brief.")
    edited = append_context_edit(s, reminder.id, {"content": [{"type": "text", "text": "Be very brief."}]})
    kept = s.append_message(user("go on"))
    s.append_message(assistant("going", model="test-model", provider="local"))
    s.append_compaction("## Goal\nEcho", kept.id, 999, {"readFiles": [], "modifiedFiles": []}, False,
                        usage=spent(40, 10, 1.0))
    append_context_edit(s, kept.id, {"content": "go on (edited after the compaction)"})
    s.append_message(user("after compaction"))
    s.append_message(assistant("still here", model="test-model", provider="local"))
    s.branch_with_summary(edited.id, "A branch was left.", None, False, usage=spent(20, 5, 2.0))
    s.append_message(user("on the new branch"))
    s.append_message(assistant("new branch answer", model="test-model", provider="local"))
    return s


@pytest.mark.parametrize("name", sorted(p.name for p in PI16_FIXTURES.glob("*.jsonl")))
def test_pi16_and_we_agree_on_the_context_at_every_entry_of_its_files(name):
    assert pi16_probe("contexts", str(PI16_FIXTURES / name)) == our_contexts(PI16_FIXTURES / name)


@pytest.mark.parametrize("name", sorted(p.name for p in PI16_FIXTURES.glob("*.jsonl")))
def test_pi16_and_we_count_the_same_session_totals_in_its_files(name):
    theirs = pi16_probe("stats", str(PI16_FIXTURES / name))
    ours = usage_totals(Session.open(PI16_FIXTURES / name, read_only=True).entries)
    assert ours == pytest.approx(theirs)
    assert theirs["cost"] > 0


def test_pi16_sees_our_context_edits_usage_and_summaries_as_we_do(tmp_path):
    session = our_session(tmp_path)
    session.close()
    assert pi16_probe("contexts", str(session.file)) == our_contexts(session.file)
    theirs = pi16_probe("stats", str(session.file))
    assert usage_totals(Session.open(session.file, read_only=True).entries) == pytest.approx(theirs)
    assert theirs["cost"] == pytest.approx(0.5 + 0.25 + 1.0 + 2.0)  # answers here cost nothing


def test_an_edit_pi16_appends_to_our_file_applies_here(tmp_path):
    session = our_session(tmp_path)
    session.close()
    first_question = next(e.id for e in session.entries if getattr(e, "message", None) is not None
                          and e.message.role == "user" and e.message.content[0].text == "on the new branch")
    pi16_probe("edit", str(session.file), first_question, '{"content": "edited by pi 1.6"}')
    with Session.open(session.file) as again:
        assert again.problems == []
        texts = [to_json(m).get("content") for m in again.build_context().messages]
        assert "edited by pi 1.6" in texts


def test_a_context_edit_is_refused_for_what_is_not_an_editable_message_on_the_branch(tmp_path):
    session = our_session(tmp_path)
    off_branch = next(e for e in session.entries if e.type == "compaction")
    with pytest.raises(SessionError, match="not on the session's branch"):
        append_context_edit(session, off_branch.id, None)
    with pytest.raises(SessionError, match="no content the model sees"):
        append_context_edit(session, session.entries[0].id, None)  # a model change
    with pytest.raises(SessionError, match="replacement"):
        append_context_edit(session, session.leaf_id, {"text": "no content key"})


# ---------------------------------------------------------------- resuming, over HTTP


def sent(request) -> list[tuple]:
    """The conversation a request carries (role, text, tool-call ids), the system prompt
    left out (each program sends its own), and of a summary only the summary: the
    sentence around it is each program's own."""
    out = []
    for m in request.body["messages"]:
        if m["role"] in ("system", "developer"):
            continue
        content = m.get("content")
        text = content if isinstance(content, str) else "".join(
            part.get("text", "") for part in content or [])
        if "<summary>" in text:
            text = "summary: " + text.split("<summary>", 1)[1].split("</summary>", 1)[0].strip()
        out.append((m["role"], text, [c["id"] for c in m.get("tool_calls") or []]))
    return out


def resume(which: str, file: Path, tmp_path: Path) -> list[tuple]:
    """``pi --session FILE -p next`` with ``which`` pi against the scripted server: what
    it sent, and the file it left continued."""
    home = tmp_path / which
    agent = home / "agent"
    agent.mkdir(parents=True)
    (home / "project").mkdir()
    copy = home / file.name
    header, rest = file.read_bytes().split(b"\n", 1)  # the header's cwd made this run's
    copy.write_bytes(json.dumps({**json.loads(header), "cwd": str(home / "project")}).encode()
                     + b"\n" + rest)
    original = copy.read_bytes()
    with LlmServer() as server:
        server.push(Reply(text="resumed answer"))
        (agent / "models.json").write_text(json.dumps(server.models_json("local", apiKey="unused")))
        program = ([str(NODE22), str(PI16 / "dist" / "cli.js")] if which == "pi16"
                   else [sys.executable, "-m", "pi_plugins.cli"])
        done = subprocess.run(
            [*program, "--session", str(copy), "--model", "local/test-model", "-p", "next", "--no-tools"],
            cwd=home / "project", capture_output=True, text=True, timeout=120,
            env={**os.environ, "PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1",
                 "HOME": str(home)})
        assert done.returncode == 0, done.stderr
        (request,) = server.requests
    assert copy.read_bytes().startswith(original)
    with Session.open(copy, read_only=True) as again:
        assert again.problems == []
    return sent(request)


@pytest.mark.parametrize("source", ["pi16", "ours"])
def test_each_program_resumes_the_others_session_with_the_same_request(tmp_path, source):
    if source == "pi16":
        file = PI16_FIXTURES / "cli-context-edit.jsonl"
    else:
        session = our_session(tmp_path / "written")
        session.close()
        file = session.file
    theirs = resume("pi16", file, tmp_path)
    ours = resume("ours", file, tmp_path)
    assert ours == theirs
    assert theirs[-1] == ("user", "next", [])
    texts = [text for _, text, _ in theirs]
    if source == "pi16":  # its edits: the result's content replaced, the last answer left out
        assert "hi (edited by pi 1.6)" in texts and "It printed hi." not in texts
    else:
        assert "hi (x40)" in texts and "Be very brief." in texts
        assert not any("abc123" in text for text in texts)
