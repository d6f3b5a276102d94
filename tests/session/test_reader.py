"""The reader's line splitting: one reused buffer, whatever the line lengths."""

from __future__ import annotations

import io

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
