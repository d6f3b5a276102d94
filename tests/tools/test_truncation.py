"""The budgets: head keeps the start, tail keeps the end, both whole lines."""

from pi_plugins.tools.truncation import (
    format_size,
    truncate_head,
    truncate_line,
    truncate_tail,
)


def test_text_within_budget_is_untouched():
    cut = truncate_head("a\nb\n")
    assert (cut.content, cut.truncated, cut.total_lines) == ("a\nb\n", False, 3)


def test_head_stops_at_the_line_budget():
    cut = truncate_head("\n".join(str(i) for i in range(10)), max_lines=3)
    assert (cut.content, cut.truncated_by, cut.output_lines, cut.total_lines) == ("0\n1\n2", "lines", 3, 10)


def test_head_stops_before_the_line_that_would_cross_the_byte_budget():
    cut = truncate_head("aaaa\nbbbb\ncccc", max_bytes=9)
    assert (cut.content, cut.truncated_by, cut.output_bytes) == ("aaaa\nbbbb", "bytes", 9)


def test_head_keeps_nothing_when_the_first_line_alone_is_too_big():
    cut = truncate_head("x" * 20 + "\nshort", max_bytes=10)
    assert cut.content == "" and cut.first_line_exceeds_limit


def test_tail_keeps_the_last_lines():
    cut = truncate_tail("\n".join(str(i) for i in range(10)), max_lines=3)
    assert (cut.content, cut.truncated_by) == ("7\n8\n9", "lines")


def test_tail_keeps_the_end_of_an_overlong_last_line_on_a_character_boundary():
    cut = truncate_tail("first\n" + "é" * 10, max_bytes=5)  # é is two bytes
    assert cut.last_line_partial and cut.content == "éé"


def test_counts_are_utf8_bytes():
    assert truncate_head("ü" * 6, max_bytes=10).first_line_exceeds_limit


def test_long_lines_are_cut_with_a_visible_marker():
    text, cut = truncate_line("x" * 600)
    assert cut and text.startswith("x" * 500) and "cut at 500" in text
    assert truncate_line("short") == ("short", False)


def test_sizes_read_like_pi():
    assert [format_size(n) for n in (512, 51200, 3 * 1024 * 1024)] == ["512B", "50.0KB", "3.0MB"]


def test_details_use_pi_keys():
    details = truncate_tail("a\n" * 3000).as_details()
    assert {"truncatedBy", "totalLines", "outputLines", "maxBytes", "lastLinePartial"} <= set(details)
