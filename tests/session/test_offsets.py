"""The offset index of a long session: a resume scans only what was added since, and a
stale or broken index is never believed (the JSONL file is the source of truth). It lives
in the cache folder, never in the sessions folder."""

from __future__ import annotations

import json
import os

from pi_core.protocol.codec import to_json
from pi_core.session import Session
from pi_core.session.offsets import INDEX_AT, index_path
from pi_core.session.reader import read_session_file
from support.sessions import assistant, tool_result, user


def long_session(tmp_path, turns: int = 200) -> Session:
    """A session of a little over INDEX_AT bytes, with a label, a name and a compaction."""
    session = Session.create("/w", tmp_path)
    text = "x" * (INDEX_AT // turns // 2)
    first = None
    for n in range(turns):
        entry = session.append_message(user(f"q{n} {text}"))
        first = first or entry
        session.append_message(assistant(f"a{n} {text}", calls=[(f"c{n}", "bash")]))
        session.append_message(tool_result(f"c{n}", f"r{n}"))
        if n == turns // 2:
            session.append_label(entry.id, "halfway")
            kept = session.append_message(user(f"kept {n}"))
            session.append_compaction("## Goal\nsummary", kept.id, 1000)
    session.append_session_info("long one")
    session.close()
    return session


def snapshot(path) -> dict:
    with Session.open(path, read_only=True) as s:
        context = s.build_context()
        return {"ids": [e.id for e in s.entries], "leaf": s.leaf_id, "name": s.name,
                "labels": s.labels, "problems": [str(p) for p in s.problems],
                "context": [to_json(m) for m in context.messages]}


def fresh(path) -> dict:
    """What an open that ignores the index gives (the index file is left as it is)."""
    import pi_core.session.session as session_module

    original = session_module.read_session_file
    session_module.read_session_file = lambda p: original(p, use_index=False)
    try:
        return snapshot(path)
    finally:
        session_module.read_session_file = original


def test_a_long_session_gets_an_index_and_the_next_open_scans_only_new_bytes(tmp_path):
    session = long_session(tmp_path)
    path = session.file
    assert not os.path.exists(index_path(str(path)))
    first = read_session_file(path)
    first.source.close()
    assert first.scanned == path.stat().st_size
    assert os.path.exists(index_path(str(path)))
    assert os.stat(index_path(str(path))).st_mode & 0o777 == 0o600

    again = read_session_file(path)
    again.source.close()
    assert again.scanned == 0 and again.entries == first.entries
    assert snapshot(path) == fresh(path)

    with Session.open(path) as s:
        s.append_message(user("one more"))
        added = s.append_message(assistant("answer"))
    size_before = path.stat().st_size
    tail = read_session_file(path)
    tail.source.close()
    assert 0 < tail.scanned < 2000
    state = snapshot(path)
    assert state == fresh(path) and state["leaf"] == added.id
    assert state["labels"] and state["name"] == "long one"
    assert path.stat().st_size == size_before


def test_a_stale_index_is_not_believed(tmp_path):
    session = long_session(tmp_path)
    path = session.file
    read_session_file(path).source.close()
    expected = fresh(path)
    # same length, a different text just before the indexed end: the hash tells
    data = bytearray(path.read_bytes())
    at = data.rindex(b'"text":"a') + 9
    data[at:at + 1] = b"A"
    path.write_bytes(bytes(data))
    changed = read_session_file(path)
    changed.source.close()
    assert changed.scanned == len(data)
    assert snapshot(path) == fresh(path) != expected


def test_a_shorter_or_broken_index_file_is_rebuilt(tmp_path):
    session = long_session(tmp_path)
    path = session.file
    index = index_path(str(path))
    for damage in (b"", b"{not json", json.dumps({"version": 99}).encode()):
        with open(index, "wb") as f:
            f.write(damage)
        contents = read_session_file(path)
        contents.source.close()
        assert contents.scanned == path.stat().st_size
        assert snapshot(path) == fresh(path)
    # the file rewritten shorter (a migration, or another tool): the index no longer fits
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-50]))
    assert snapshot(path) == fresh(path)


def test_a_torn_tail_after_the_indexed_part_is_still_skipped_and_kept(tmp_path):
    session = long_session(tmp_path)
    path = session.file
    read_session_file(path).source.close()
    torn = path.read_bytes() + b'{"type":"message","id":"abcd1234","parentId":"'
    path.write_bytes(torn)
    state = snapshot(path)
    last_line = torn.count(b"\n") + 1
    assert state == fresh(path)
    assert state["problems"][-1].startswith(f"line {last_line}: incomplete last line")
    with Session.open(path) as s:
        s.append_message(user("after the crash"))
    assert path.read_bytes().startswith(torn)
    state = snapshot(path)
    assert state == fresh(path)
    assert state["context"][-1]["content"][0]["text"] == "after the crash"


def test_the_index_lives_in_the_cache_folder_and_the_sessions_folder_holds_only_pi_files(
        tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    sessions = tmp_path / "sessions"
    session = long_session(sessions)
    stale = session.file.with_name(session.file.name + ".idx")
    stale.write_bytes(b"an old index beside the session: never read")
    read_session_file(session.file).source.close()
    index = index_path(str(session.file))
    assert index is not None and index.startswith(str(tmp_path / "cache" / "pi-harness" / "sessions"))
    assert os.path.exists(index) and os.stat(os.path.dirname(index)).st_mode & 0o777 == 0o700
    assert sorted(p.name for p in sessions.iterdir()) == [session.file.name, stale.name]
    assert read_session_file(session.file).scanned == 0  # the cached index was used

    twin = tmp_path / "other" / session.file.name  # the same name in another folder
    assert index_path(str(twin)) != index


def test_without_a_cache_folder_there_is_no_index_and_nothing_beside_the_session(
        tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # not a usable cache folder
    session = long_session(tmp_path)
    contents = read_session_file(session.file)
    contents.source.close()
    assert index_path(str(session.file)) is None
    assert list(tmp_path.iterdir()) == [session.file]
    assert snapshot(session.file) == fresh(session.file)


def test_resuming_after_a_compaction_reads_only_the_lines_it_keeps(tmp_path):
    session = long_session(tmp_path)
    read_session_file(session.file).source.close()  # the index is written
    with Session.open(session.file, read_only=True) as s:
        total = len(s)
        context = s.build_context()
        assert context.messages[0].role == "compactionSummary"
        kept = len(context.messages)
        assert s._tree.unread >= total - kept - 5  # what the compaction summarised: unread
    assert kept < total / 2


def test_an_id_that_is_not_utf8_reads_as_pi_reads_it(tmp_path):
    header = ('{"type":"session","version":3,"id":"01a22aa0-0000-7000-8000-000000000000",'
              '"timestamp":"2026-11-30T04:04:46.971Z","cwd":"/w"}')
    first = ('{"type":"message","id":"aaaa\xffaaa","parentId":null,"timestamp":"2026-11-30T04:04:47.013Z",'
             '"message":{"role":"user","content":"one","timestamp":1}}')
    second = ('{"type":"message","id":"bbbbbbbb","parentId":"aaaa\xffaaa","timestamp":"2026-11-30T04:04:47.013Z",'
              '"message":{"role":"user","content":"two","timestamp":1}}')
    path = tmp_path / "s.jsonl"
    path.write_bytes("\n".join([header, first, second]).encode("latin-1") + b"\n")
    with Session.open(path, read_only=True) as s:
        assert s.problems == []
        assert [m.content for m in s.build_context().messages] == ["one", "two"]
        assert s.path()[0].id == "aaaa\ufffdaaa"


def test_a_closed_session_still_reads_entries_it_had_not_read(tmp_path):
    session = long_session(tmp_path, turns=20)
    opened = Session.open(session.file, read_only=True)
    opened.close()
    assert [e.id for e in opened.entries] == [e.id for e in session.entries]
    assert opened.build_context().messages[0].role == "compactionSummary"


def test_a_resumed_file_deleted_while_open_is_written_again_whole(tmp_path):
    session = long_session(tmp_path, turns=20)
    expected = [e.id for e in session.entries]
    with Session.open(session.file) as opened:  # its entries still unread
        assert opened._tree.unread > 0
        session.file.unlink()
        added = opened.append_message(user("after the delete"))
    lines = [json.loads(line) for line in session.file.read_text().splitlines()]
    assert lines[0]["type"] == "session" and lines[0]["id"] == session.id
    assert [line["id"] for line in lines[1:]] == [*expected, added.id]
    assert Session.open(session.file).problems == []


def test_a_harness_with_every_built_in_resumes_a_compacted_session_and_prompts_reading_only_the_lines_it_keeps(
        tmp_path, monkeypatch, server):
    """The built-in plugins' session_start and before_agent_start must not read the branch
    a compaction summarised (tool_search and the system messages once did, and a 128 MB
    resume read all of it)."""
    import asyncio

    from pi_plugins.sdk import create_harness
    from support.llm_server import Reply

    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("PI_OFFLINE", "1")
    file = long_session(tmp_path).file
    read_session_file(file).source.close()  # the index is written
    model = server.model("openai-completions", id="m", provider="local", context_window=1_000_000)
    server.push(Reply(text="Answered."))

    async def resume() -> tuple[int, int, int]:
        session = Session.open(file)
        harness = await create_harness(model=model, session=session, cwd=str(tmp_path), builtins=True)
        try:
            started, total = session._tree.unread, len(session)
            await harness.prompt("one more")
            return started, session._tree.unread, total
        finally:
            await harness.close()

    started, prompted, total = asyncio.run(resume())
    assert started >= total / 2  # what the compaction summarised stays unread
    assert prompted >= started - 5  # and the prompt reads only its own few entries
    assert [r.body["messages"][-1]["content"][0]["text"] for r in server.requests] == ["one more"]
