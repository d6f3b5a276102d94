"""The flags pi 1.6 added (docs/cli.md of 1.6.0), side by side with the real pi 1.6:
``--tools`` with ``+name``/``-name``, ``-xt/--exclude-tools``, ``--session-id``,
``-n/--name``, and what pi refuses, in its words and with its exit code."""

import json

import pytest
from support.cli import pi16
from support.llm_server import Reply

pytestmark = pytest.mark.process


@pytest.fixture
def both(pi, server):
    """Our pi and the real pi 1.6 (on Node 22), on one agent dir and project."""
    models = server.models_json("local", apiKey="test-key")  # pi 1.6 wants a key
    (pi.agent_dir / "models.json").write_text(json.dumps(models))
    return pi


def _error_line(out) -> str:
    return next(line for line in out.stderr.splitlines() if line.startswith("Error:"))


@pytest.mark.requires("pi16")
@pytest.mark.parametrize("flags", [
    ("--tools", "read,+write"),
    ("--tools", "read,-write"),
    ("--tools", "+rea*"),
    ("--session-id", "bad/id"),
    ("--session-id", "-dash"),
    ("--session-id", "abc", "--continue"),
    ("--session-id", "abc", "--session", "x"),
    ("--session-id", "abc", "--resume"),
    ("--fork", "x", "--no-session"),
    ("--fork", "x", "--continue"),
], ids=" ".join)
def test_what_pi16_refuses_is_refused_in_its_words_and_exit_code(both, flags):
    theirs = pi16(both, *flags, "--list-models", "nothing-matches")
    ours = both.run(*flags, "--list-models", "nothing-matches")
    assert (ours.returncode, _error_line(ours)) == (theirs.returncode, _error_line(theirs)) == \
        (1, _error_line(theirs))


def _tools(request) -> list[str]:
    return sorted(t["function"]["name"] for t in request.body.get("tools", []))


@pytest.mark.requires("pi16")
@pytest.mark.parametrize("flags", [
    ("--tools", "-bash,+grep"),
    ("--tools", "+ls", "-xt", "e*"),
    ("--tools", "gr*,read"),
    ("-xt", "write,b*"),
    ("--exclude-tools", "read"),
    ("--tools", "+nosuch"),
    ("-t", "read,grep", "--exclude-tools", "grep"),
], ids=" ".join)
def test_tool_selection_matches_pi16(both, server, flags):
    server.push(Reply(text="theirs"), Reply(text="ours"))
    theirs = pi16(both, *flags, "-p", "hi")
    assert theirs.returncode == 0, theirs.stderr
    ours = both.run(*flags, "-p", "hi")
    assert ours.returncode == 0, ours.stderr
    first, second = server.requests[-2:]
    assert _tools(second) == _tools(first)


def _entries(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.requires("pi16")
def test_session_id_creates_then_resumes_that_session_in_both_programs(both, server):
    server.push(*(Reply(text=f"answer {n}") for n in range(3)))
    out = both.run("--session-id", "review.2026-11", "-n", "Review", "-p", "one")
    assert out.returncode == 0, out.stderr
    assert "No project session found with id 'review.2026-11'; creating a new session" in out.stderr
    [path] = both.sessions()
    assert path.name.endswith("_review.2026-11.jsonl")
    header, first, *_ = _entries(path)
    assert header["id"] == "review.2026-11"
    assert (first["type"], first["name"]) == ("session_info", "Review")  # first, as pi writes it
    theirs = pi16(both, "--session-id", "review.2026-11", "-p", "two")  # pi 1.6 resumes ours
    assert theirs.returncode == 0, theirs.stderr
    assert "No project session" not in theirs.stderr
    out = both.run("--session-id", "review.2026-11", "--name", "Renamed", "-p", "three")
    assert out.returncode == 0 and "No project session" not in out.stderr
    assert both.sessions() == [path]
    entries = _entries(path)
    users = [e["message"]["content"][0]["text"] for e in entries
             if e["type"] == "message" and e["message"]["role"] == "user"]
    assert users == ["one", "two", "three"]
    assert [e["name"] for e in entries if e["type"] == "session_info"] == ["Review", "Renamed"]
    # the second request (pi 1.6's) and the third (ours) carry the whole conversation
    assert [m["role"] for m in server.requests[-1].body["messages"]][-5:] == \
        ["user", "assistant", "user", "assistant", "user"]


@pytest.mark.requires("pi16")
def test_a_session_id_pi16_created_is_resumed_here(both, server):
    server.push(Reply(text="theirs"), Reply(text="ours"))
    theirs = pi16(both, "--session-id", "shared", "--name", "From pi 1.6", "-p", "one")
    assert theirs.returncode == 0, theirs.stderr
    out = both.run("--session-id", "shared", "-p", "two")
    assert out.returncode == 0, out.stderr
    [path] = both.sessions()
    assert path.name.endswith("_shared.jsonl")
    assert [m["role"] for m in server.requests[-1].body["messages"]][-3:] == ["user", "assistant", "user"]


def test_fork_with_a_session_id_names_the_new_session(both, server):
    server.push(Reply(text="a"), Reply(text="b"))
    assert both.run("--session-id", "origin", "-p", "one").returncode == 0
    out = both.run("--fork", "origin", "--session-id", "copy", "-p", "two")
    assert out.returncode == 0, out.stderr
    names = sorted(p.name.split("_", 1)[1] for p in both.sessions())
    assert names == ["copy.jsonl", "origin.jsonl"]


@pytest.mark.requires("pi16")
def test_agents_override_md_is_read_as_pi16_reads_it(both, server):
    (both.agent_dir / "AGENTS.override.md").write_text("global override rules")
    (both.agent_dir / "AGENTS.md").write_text("global plain rules")
    (both.cwd.parent / "AGENTS.md").write_text("parent rules")
    (both.cwd / "AGENTS.md").write_text("project plain rules")
    (both.cwd / "AGENTS.override.md").write_text("project override rules")
    server.push(Reply(text="theirs"), Reply(text="ours"))
    assert pi16(both, "-p", "hi").returncode == 0
    assert both.run("-p", "hi").returncode == 0
    texts = ("global override rules", "global plain rules", "parent rules", "project plain rules",
             "project override rules")
    theirs, ours = (r.body["messages"][0]["content"] for r in server.requests[-2:])
    assert [t for t in texts if t in ours] == [t for t in texts if t in theirs] == \
        ["global override rules", "parent rules", "project override rules"]


@pytest.mark.requires("pi16")
@pytest.mark.parametrize("mode", [("-p",), ("--mode", "json"), ("--mode", "rpc")], ids=" ".join)
def test_a_session_whose_folder_is_gone_is_refused_in_pi16s_words_and_kept(both, server, tmp_path, mode):
    """pi 1.6's print, JSON and RPC modes stop on a resumed session whose stored working
    directory no longer exists (the chat asks instead); the file is left as it was."""
    gone = tmp_path / "renamed-project"
    session = tmp_path / "old.jsonl"
    session.write_text(json.dumps({"type": "session", "version": 3, "id": "0192f1a0-0000-7000-8000-000000000001",
                                   "timestamp": "2026-11-01T00:00:00.000Z", "cwd": str(gone)}) + "\n")
    before = session.read_bytes()
    theirs = pi16(both, *mode, "--session", str(session), "hello")
    ours = both.run(*mode, "--session", str(session), "hello", input="")
    assert (ours.returncode, ours.stderr.strip()) == (theirs.returncode, theirs.stderr.strip()) == (1, (
        f"Stored session working directory does not exist: {gone}\nSession file: {session}\n"
        f"Current working directory: {both.cwd}"))
    assert session.read_bytes() == before and not server.requests
