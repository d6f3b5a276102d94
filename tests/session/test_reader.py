"""The reader's line splitting: one reused buffer, whatever the line lengths."""

from __future__ import annotations

import io

import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

from pi_core.session.reader import _split_lines, read_session_file
from support.sessions import fixture


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=200).map(lambda b: b.replace(b"\x00", b"\n")),
       size=st.integers(min_value=1, max_value=16))
def test_lines_come_out_exactly_as_split_whatever_the_buffer_size(data, size):
    lines = [(bytes(view), ended) for view, ended in _split_lines(io.BytesIO(data), size)]
    expected = data.split(b"\n")
    if expected[-1] == b"":
        expected.pop()
        flags = [True] * len(expected)
    else:
        flags = [True] * (len(expected) - 1) + [False]
    assert lines == list(zip(expected, flags))


def test_a_fixture_reads_the_same_with_a_tiny_buffer(monkeypatch):
    normal = read_session_file(fixture("tools-openai.jsonl"))
    import pi_core.session.reader as reader

    original = reader._split_lines
    monkeypatch.setattr(reader, "_split_lines", lambda f: original(f, 5))
    tiny = read_session_file(fixture("tools-openai.jsonl"))
    assert tiny.entries == normal.entries and tiny.line_numbers == normal.line_numbers
    assert tiny.length == normal.length == fixture("tools-openai.jsonl").stat().st_size


def test_a_line_longer_than_the_buffer_is_read_whole(tmp_path):
    from pi_core.session import Session
    from support.sessions import assistant, tool_result, user

    huge = "x" * (9 << 20)  # more than twice the 4 MB buffer
    session = Session.create("/w", tmp_path)
    session.append_message(user("q"))
    session.append_message(assistant("", calls=[("c1", "bash")]))
    session.append_message(tool_result("c1", huge))
    session.append_message(assistant("done"))
    session.close()
    again = Session.open(session.file, read_only=True)
    assert again.problems == []
    assert again.build_context().messages[2].content[0].text == huge


@settings(max_examples=200, deadline=None)
@given(data=st.binary(min_size=1, max_size=3000),
       cuts=st.lists(st.tuples(st.integers(0, 2999), st.integers(0, 400)), max_size=30),
       block=st.sampled_from([16, 64, 1 << 20]), gap=st.sampled_from([0, 8, 1 << 14]))
def test_spans_read_back_exactly_in_any_order_and_size(tmp_path_factory, data, cuts, block,
                                                       gap):
    """Spans read in blocks give each span's own bytes, whether they follow each other,
    go backwards, overlap, exceed the block or run past the end of the file."""
    import pi_core.session.reader as reader

    path = tmp_path_factory.mktemp("spans") / "file"
    path.write_bytes(data)
    spans = [(offset % len(data), length) for offset, length in cuts]
    source = reader.LineSource(str(path))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(reader, "_BLOCK", block)
        patch.setattr(reader, "_GAP", gap)
        try:
            got = [bytes(view) for view in source.read_spans(spans)]
        finally:
            source.close()
    assert got == [data[offset:offset + length] for offset, length in spans]


def test_a_resume_reads_its_lines_in_a_few_large_reads(tmp_path, monkeypatch):
    """Thousands of lines on the path to the leaf cost a handful of system calls."""
    from pi_core.session import Session
    from pi_core.protocol.messages import TextContent, UserMessage
    import pi_core.session.reader as reader

    with Session.create(tmp_path, sessions_dir=tmp_path) as session:
        for n in range(2000):
            session.append_message(UserMessage([TextContent(f"message {n}")]))
        path = session.file
    calls = []
    for name in ("pread", "preadv"):
        real = getattr(reader.os, name)
        monkeypatch.setattr(reader.os, name, lambda *a, real=real, name=name: (
            calls.append(name), real(*a))[1])
    monkeypatch.setattr(reader, "_pread", reader.os.pread)
    with Session.open(path, read_only=True) as again:
        calls.clear()
        context = again.build_context()
    assert [m.content[0].text for m in context.messages] == [f"message {n}" for n in range(2000)]
    assert 0 < len(calls) < 10


def test_a_resume_read_in_bulk_keeps_entries_of_unknown_types_and_bad_lines(tmp_path):
    """Between the message lines a bulk read makes itself: an entry type of a newer pi
    stays in the tree, and a line that is not JSON is reported; the rest of the context
    is read as usual."""
    import json

    from pi_core.protocol.messages import TextContent, UserMessage
    from pi_core.session import Session

    with Session.create(tmp_path, sessions_dir=tmp_path) as session:
        for n in range(3000):
            session.append_message(UserMessage([TextContent(f"message {n} " + "x" * 400)]))
        path = session.file
        leaf = session.leaf_id
    lines = path.read_text().splitlines()
    middle = json.loads(lines[1500])
    lines[1500] = json.dumps({"type": "hologram", "id": middle["id"],
                              "parentId": middle["parentId"], "timestamp": middle["timestamp"]})
    broken = json.loads(lines[2000])
    lines[2000] = lines[2000][:-1]  # no longer JSON
    path.write_text("\n".join(lines) + "\n")
    with Session.open(path, read_only=True):  # writes the offset index
        pass
    with Session.open(path, read_only=True) as again:
        assert again.leaf_id == leaf
        texts = [m.content[0].text.split(" ")[1] for m in again.build_context().messages]
        assert str(again.entry(middle["id"]).type) == "hologram"
        problems = [str(p) for p in again.problems]
    assert len(texts) == 2998 and "1499" not in texts and "1999" not in texts
    assert any(broken["id"] in p for p in problems)
