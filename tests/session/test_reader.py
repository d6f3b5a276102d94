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
    from pi_core.messages import TextContent, UserMessage
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
