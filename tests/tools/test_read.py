"""read: lines from an offset within the budget, a notice that says how to go on, images
as image content, and errors that say what to do."""

import base64
import re
import struct
import zlib

import pytest

from support.tool_helpers import as_unprivileged, call, text_of
from pi_core.protocol.messages import ImageContent


def tiny_png(width: int = 2, height: int = 2) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\0" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def test_reads_a_whole_small_file_as_it_is(ws):
    (ws / "notes.txt").write_text("title: harness notes\nstatus: draft\n")
    result = call("read", {"path": "notes.txt"}, ws)
    assert not result.is_error
    assert text_of(result) == "title: harness notes\nstatus: draft\n"
    assert result.details is None


def test_offset_and_limit_select_lines_and_say_where_to_continue(ws):
    (ws / "f.txt").write_text("\n".join(f"line {i}" for i in range(1, 11)))
    text = text_of(call("read", {"path": "f.txt", "offset": 3, "limit": 2}, ws))
    assert text.startswith("line 3\nline 4\n\n")
    assert "6 more lines" in text and "offset=5" in text


def test_line_budget_notice_gives_the_offset_that_reads_on(ws):
    (ws / "big.txt").write_text("\n".join(f"row {i}" for i in range(1, 5001)))
    first = call("read", {"path": "big.txt"}, ws)
    text = text_of(first)
    assert text.splitlines()[1999] == "row 2000" and "row 2001" not in text
    assert "lines 1-2000 of 5000" in text
    offset = int(re.search(r"offset=(\d+)", text).group(1))
    assert offset == 2001
    second = text_of(call("read", {"path": "big.txt", "offset": offset}, ws))
    assert second.startswith("row 2001\n")
    assert first.details["truncation"]["truncatedBy"] == "lines"


def test_byte_budget_cuts_at_a_line_and_says_so(ws):
    (ws / "wide.txt").write_text("\n".join("x" * 99 for _ in range(1000)))  # 100 KB
    result = call("read", {"path": "wide.txt"}, ws)
    text = text_of(result)
    body = text.split("\n\n[")[0]
    assert len(body.encode()) <= 50 * 1024
    assert all(line == "x" * 99 for line in body.split("\n"))
    shown = len(body.split("\n"))
    assert f"offset={shown + 1}" in text and "50.0KB" in text
    assert result.details["truncation"]["truncatedBy"] == "bytes"


def test_a_first_line_over_the_budget_points_to_bash(ws):
    (ws / "min.js").write_text("a" * 60_000 + "\nend\n")
    text = text_of(call("read", {"path": "min.js"}, ws))
    assert "Line 1" in text and "sed -n '1p' min.js" in text and "a" * 100 not in text


def test_offset_past_the_end_is_an_error_that_gives_the_length(ws):
    (ws / "f.txt").write_text("one\ntwo")
    result = call("read", {"path": "f.txt", "offset": 9}, ws)
    assert result.is_error and "2 lines" in text_of(result)


def test_missing_file_is_an_error_that_suggests_looking(ws):
    result = call("read", {"path": "nope.txt"}, ws)
    assert result.is_error
    assert "nope.txt does not exist" in text_of(result) and "ls" in text_of(result)


def test_directory_is_an_error_that_suggests_ls(ws):
    (ws / "src").mkdir()
    result = call("read", {"path": "src"}, ws)
    assert result.is_error and "directory" in text_of(result) and "ls" in text_of(result)


def test_binary_file_is_an_error_that_suggests_bash(ws):
    (ws / "blob.bin").write_bytes(b"\x7fELF\x00\x01\x02" * 100)
    result = call("read", {"path": "blob.bin"}, ws)
    assert result.is_error and "binary" in text_of(result) and "xxd blob.bin" in text_of(result)


def test_permission_denied_is_reported_to_an_unprivileged_user(shared_dir):
    secret = shared_dir / "secret.txt"
    secret.write_text("top secret\n")
    secret.chmod(0o600)  # owned by root: nobody may read it

    def attempt():
        result = call("read", {"path": "secret.txt"}, shared_dir)
        return result.is_error, text_of(result)

    is_error, text = as_unprivileged(attempt)
    assert is_error and "Permission denied reading secret.txt" in text
    assert "top secret" not in text


def test_image_comes_back_as_image_content(ws):
    png = tiny_png()
    (ws / "dot.png").write_bytes(png)
    result = call("read", {"path": "dot.png"}, ws)
    images = [c for c in result.content if isinstance(c, ImageContent)]
    assert not result.is_error and len(images) == 1
    assert images[0].mime_type == "image/png"
    assert base64.b64decode(images[0].data) == png
    assert "image/png" in text_of(result)


def test_image_is_found_by_content_not_by_name(ws):
    (ws / "picture.dat").write_bytes(tiny_png())
    (ws / "fake.png").write_text("not an image\n")
    assert any(isinstance(c, ImageContent) for c in call("read", {"path": "picture.dat"}, ws).content)
    assert text_of(call("read", {"path": "fake.png"}, ws)) == "not an image\n"


def test_text_only_model_is_told_the_image_will_not_reach_it(ws):
    import asyncio

    from pi_core.context import Context
    from pi_core.plugins import Plugins
    from pi_core.protocol.signal import AbortSignal
    from pi_core.protocol.tools import ToolRun
    from pi_core.testing import scripted_model
    from pi_plugins.tools.read import read_tool

    (ws / "dot.png").write_bytes(tiny_png())
    ctx = Context(cwd=str(ws), plugins=Plugins())
    ctx.agent = type("A", (), {"model": scripted_model(input=["text"])})()
    result = asyncio.run(read_tool.execute({"path": "dot.png"}, ToolRun("c", AbortSignal(), ctx)))
    assert "does not take images" in text_of(result)


def test_at_prefix_copied_from_a_mention_is_dropped(ws):
    (ws / "a.txt").write_text("at\n")
    assert text_of(call("read", {"path": "@a.txt"}, ws)) == "at\n"


@pytest.mark.parametrize("args", [{}, {"path": "a", "offset": 0}, {"path": "a", "limit": "many"}])
def test_bad_arguments_are_refused_before_running(args):
    from pi_core.protocol.schema import ArgumentsError
    from support.tool_helpers import TOOLS

    with pytest.raises(ArgumentsError):
        TOOLS["read"].validate(args)


def test_a_named_pipe_is_refused_instead_of_blocking(ws):
    import os

    os.mkfifo(ws / "pipe")
    result = call("read", {"path": "pipe"}, ws)
    assert result.is_error and "not a regular file" in text_of(result)


def test_block_boundaries_never_change_what_is_read(ws, monkeypatch):
    import random

    from pi_plugins.tools import read as read_module

    rng = random.Random(7)
    lines = [("x" * rng.randrange(0, 12)) for _ in range(60)]
    text = "\n".join(lines) + rng.choice(["", "\n"])
    (ws / "f.txt").write_text(text)
    everything = text.split("\n")
    for block in (3, 16, 64):
        monkeypatch.setattr(read_module, "BLOCK", block)
        for _ in range(15):
            offset = rng.randrange(1, len(everything) + 1)
            limit = rng.choice([None, 1, 3, 100])
            args = {"path": "f.txt", "offset": offset, **({"limit": limit} if limit else {})}
            got = text_of(call("read", args, ws)).split("\n\n[")[0]
            end = None if limit is None else offset - 1 + limit
            assert got == "\n".join(everything[offset - 1 : end]), (block, offset, limit)
