"""write: creates parent directories, replaces content, reports the bytes written."""

from support.tool_helpers import as_unprivileged, call, text_of


def test_creates_the_file_and_its_parent_directories(ws):
    result = call("write", {"path": "out/deep/summary.md", "content": "# Summary\n\nnotes.txt is now final.\n"}, ws)
    assert not result.is_error
    assert text_of(result) == "Successfully wrote 35 bytes to out/deep/summary.md"
    assert (ws / "out/deep/summary.md").read_text() == "# Summary\n\nnotes.txt is now final.\n"


def test_replaces_an_existing_file_and_counts_utf8_bytes(ws):
    (ws / "f.txt").write_text("old content that is longer\n")
    result = call("write", {"path": "f.txt", "content": "né\n"}, ws)
    assert text_of(result) == "Successfully wrote 4 bytes to f.txt"
    assert (ws / "f.txt").read_text() == "né\n"


def test_writing_over_a_directory_is_an_error(ws):
    (ws / "src").mkdir()
    result = call("write", {"path": "src", "content": "x"}, ws)
    assert result.is_error and "src is a directory" in text_of(result)


def test_a_file_in_the_way_of_a_parent_directory_is_an_error(ws):
    (ws / "plain").write_text("x")
    result = call("write", {"path": "plain/child.txt", "content": "x"}, ws)
    assert result.is_error and "is a file, not a directory" in text_of(result)


def test_permission_denied_is_reported_to_an_unprivileged_user(shared_dir):
    def attempt():
        result = call("write", {"path": "new.txt", "content": "x"}, shared_dir)
        return result.is_error, text_of(result)

    is_error, text = as_unprivileged(attempt)  # shared_dir is root's, mode 755
    assert is_error and "Permission denied writing new.txt" in text
    assert not (shared_dir / "new.txt").exists()
