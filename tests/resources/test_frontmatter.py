"""YAML frontmatter of Markdown resources."""

import pytest

from pi_plugins.frontmatter import FrontmatterError, parse_frontmatter, split_frontmatter


def test_frontmatter_and_body_are_split_and_parsed():
    meta, body = parse_frontmatter("---\nname: x\ndescription: >-\n  folded\n  text\n---\n\n# Body\n")
    assert meta == {"name": "x", "description": "folded text"}
    assert body == "# Body"


@pytest.mark.parametrize(("yaml", "value"), [
    ("d: |\n  a\n  b", "a\nb\n"),  # clip keeps the final newline, also last in the block
    ("d: >\n  a\n  b", "a b\n"),
    ("d: |-\n  a\n  b", "a\nb"),
    ("d: >-\n  a\n  b", "a b"),
    ("d: |+\n  a\n  b", "a\nb\n"),
    ("d: |\n  a\nx: 1", "a\n"),
    ("d: plain", "plain"),
])
def test_block_scalars_end_as_in_pi(yaml, value):
    """pi's YAML parser (npm yaml 2.9) reads the block without the line break before the
    closing ``---`` and still clips a block scalar to one final newline."""
    meta, _ = parse_frontmatter(f"---\n{yaml}\n---\nBody")
    assert meta["d"] == value


def test_windows_line_endings_and_a_byte_order_mark_are_accepted():
    assert parse_frontmatter("\ufeff---\r\nname: x\r\n---\r\nBody\r\n") == ({"name": "x"}, "Body")


@pytest.mark.parametrize("text", ["No frontmatter.", "---\nname: x\nnever closed", "---\n---\n"])
def test_text_without_complete_frontmatter_has_an_empty_mapping(text):
    meta, _ = parse_frontmatter(text)
    assert meta == {}


def test_a_closing_line_must_be_exactly_three_dashes():
    assert split_frontmatter("---\na: 1\n----\nb: 2\n---\nBody") == ("a: 1\n----\nb: 2", "Body")


@pytest.mark.parametrize("text, message", [
    ("---\nname: x\n  bad: : y\n---\n", r"^invalid YAML frontmatter: .+ \(line 3, column \d+\)$"),
    ("---\n- a\n- b\n---\n", "^frontmatter must be a mapping of keys to values, not list$"),
])
def test_bad_frontmatter_raises_a_clear_error_saying_where(text, message):
    with pytest.raises(FrontmatterError, match=message):
        parse_frontmatter(text)
