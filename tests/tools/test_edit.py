"""edit: exact, unique, non-overlapping replacements against the original file, with a
whitespace-tolerant fallback, a diff in details, and errors that say what to do."""

import asyncio

from support.tool_helpers import as_unprivileged, call, invoke, text_of

NOTES = "title: harness notes\nstatus: draft\nowner: nobody\n"


def edit(ws, path, *pairs, **kwargs):
    return call("edit", {"path": path, "edits": [{"oldText": o, "newText": n} for o, n in pairs]}, ws, **kwargs)


def test_replaces_text_and_reports_a_diff_like_pi(ws):
    (ws / "notes.txt").write_text(NOTES)
    result = edit(ws, "notes.txt", ("status: draft", "status: final"))
    assert not result.is_error
    assert text_of(result) == "Successfully replaced 1 block(s) in notes.txt."
    assert (ws / "notes.txt").read_text() == NOTES.replace("draft", "final")
    # The exact details pi recorded for this edit (fixtures/sessions/tools-openai.jsonl),
    # and the unified patch pi 1.6 adds beside them.
    assert result.details == {
        "diff": " 1 title: harness notes\n-2 status: draft\n+2 status: final\n 3 owner: nobody",
        "patch": "--- notes.txt\n+++ notes.txt\n@@ -1,3 +1,3 @@\n title: harness notes\n-status: draft\n"
                 "+status: final\n owner: nobody\n",
        "firstChangedLine": 2,
    }


def test_several_edits_are_matched_against_the_original_text(ws):
    (ws / "f.txt").write_text("x\ny\n")
    # Applied one after another, the second edit would also turn the new "y" into "z".
    result = edit(ws, "f.txt", ("x", "y"), ("y", "z"))
    assert not result.is_error, text_of(result)
    assert (ws / "f.txt").read_text() == "y\nz\n"


def test_disjoint_edits_all_apply(ws):
    (ws / "f.py").write_text("a = 1\nb = 2\nc = 3\n")
    result = edit(ws, "f.py", ("c = 3", "c = 30"), ("a = 1", "a = 10"))
    assert not result.is_error, text_of(result)
    assert (ws / "f.py").read_text() == "a = 10\nb = 2\nc = 30\n"
    assert "2 block(s)" in text_of(result) and result.details["firstChangedLine"] == 1


def test_text_that_is_not_unique_is_refused_and_the_file_kept(ws):
    (ws / "f.txt").write_text("x = 1\ny = 2\nx = 1\n")
    result = edit(ws, "f.txt", ("x = 1", "x = 9"))
    assert result.is_error
    assert "occurs 2 times" in text_of(result) and "exactly once" in text_of(result)
    assert (ws / "f.txt").read_text() == "x = 1\ny = 2\nx = 1\n"


def test_overlapping_occurrences_count_as_ambiguous(ws):
    (ws / "f.txt").write_text("aaa\n")
    result = edit(ws, "f.txt", ("aa", "b"))
    assert result.is_error and "occurs 2 times" in text_of(result)


def test_overlapping_edits_are_refused_with_their_indexes(ws):
    (ws / "f.txt").write_text("one two three four\n")
    result = edit(ws, "f.txt", ("one two", "1 2"), ("three", "3"), ("two three", "2 3"))
    assert result.is_error
    assert "edits[0] and edits[2] overlap" in text_of(result) and "merge" in text_of(result)
    assert (ws / "f.txt").read_text() == "one two three four\n"


def test_missing_text_says_to_copy_it_from_the_file(ws):
    (ws / "notes.txt").write_text(NOTES)
    single = edit(ws, "notes.txt", ("this text is not in the file", "x"))
    assert single.is_error and "not found in notes.txt" in text_of(single)
    several = edit(ws, "notes.txt", ("owner", "boss"), ("absent", "x"))
    assert "edits[1].oldText was not found" in text_of(several)
    assert (ws / "notes.txt").read_text() == NOTES


def test_empty_old_text_and_no_op_edits_are_refused(ws):
    (ws / "f.txt").write_text("abc\n")
    assert "is empty" in text_of(edit(ws, "f.txt", ("", "x")))
    same = edit(ws, "f.txt", ("abc", "abc"))
    assert same.is_error and "No change" in text_of(same)


def test_whitespace_tolerant_match_changes_only_the_matched_region(ws):
    original = "keep   \ndef f():   \n    return “quoted” – x\nkeep too\t\n"
    (ws / "f.py").write_text(original)
    result = edit(ws, "f.py", ('def f():\n    return "quoted" - x', "def f():\n    return 1"))
    assert not result.is_error, text_of(result)
    assert (ws / "f.py").read_text() == "keep   \ndef f():\n    return 1\nkeep too\t\n"
    assert "edits[0] matched only after ignoring" in text_of(result)


def test_crlf_line_endings_and_bom_are_kept(ws):
    (ws / "win.txt").write_bytes("\ufeffone\r\ntwo\r\nthree\r\n".encode())
    result = edit(ws, "win.txt", ("one\ntwo", "uno\ndos"))
    assert not result.is_error, text_of(result)
    assert (ws / "win.txt").read_bytes() == "\ufeffuno\r\ndos\r\nthree\r\n".encode()


def test_the_older_single_edit_shape_and_edits_as_json_text_are_accepted(ws):
    (ws / "f.txt").write_text("alpha beta\n")
    legacy = call("edit", {"path": "f.txt", "oldText": "alpha", "newText": "ALPHA"}, ws)
    assert not legacy.is_error, text_of(legacy)
    as_text = call("edit", {"path": "f.txt", "edits": '[{"oldText": "beta", "newText": "BETA"}]'}, ws)
    assert not as_text.is_error, text_of(as_text)
    assert (ws / "f.txt").read_text() == "ALPHA BETA\n"


def test_missing_file_and_binary_file_are_errors(ws):
    assert "does not exist" in text_of(edit(ws, "nope.txt", ("a", "b")))
    (ws / "img.bin").write_bytes(b"\x00\x01binary\x00")
    binary = edit(ws, "img.bin", ("binary", "text"))
    assert binary.is_error and "not a UTF-8 text file" in text_of(binary)
    assert (ws / "img.bin").read_bytes() == b"\x00\x01binary\x00"


def test_read_only_file_is_reported_to_an_unprivileged_user(shared_dir):
    target = shared_dir / "locked.txt"
    target.write_text("old\n")
    target.chmod(0o644)  # root's file: nobody may read, not write

    def attempt():
        result = edit(shared_dir, "locked.txt", ("old", "new"))
        return result.is_error, text_of(result)

    is_error, text = as_unprivileged(attempt)
    assert is_error and "Permission denied writing locked.txt" in text
    assert target.read_text() == "old\n"


def test_parallel_edits_of_one_file_both_land(ws):
    (ws / "f.txt").write_text("first\nsecond\n")

    async def both():
        return await asyncio.gather(
            invoke("edit", {"path": "f.txt", "edits": [{"oldText": "first", "newText": "1st"}]}, ws),
            invoke("edit", {"path": "f.txt", "edits": [{"oldText": "second", "newText": "2nd"}]}, ws),
        )

    results = asyncio.run(both())
    assert not any(r.is_error for r in results)
    assert (ws / "f.txt").read_text() == "1st\n2nd\n"


def test_diff_folds_long_unchanged_runs(ws):
    lines = [f"line {i}" for i in range(1, 41)]
    (ws / "long.txt").write_text("\n".join(lines) + "\n")
    result = edit(ws, "long.txt", ("line 5\n", "five\n"), ("line 30\n", "thirty\n"))
    diff = result.details["diff"].split("\n")
    assert "-30 line 30" in diff and "+30 thirty" in diff and "- 5 line 5" in diff
    assert diff[:4] == ["  1 line 1", "  2 line 2", "  3 line 3", "  4 line 4"]
    assert diff.count("    ...") == 2  # between the changes and after the last one
    assert len(diff) == 4 + 2 + 4 + 1 + 4 + 2 + 4 + 1
    assert result.details["firstChangedLine"] == 5
