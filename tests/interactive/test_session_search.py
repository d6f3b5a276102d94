"""/resume's search rules, as pi's session picker: fuzzy words, "quoted phrases", re: (in-process)."""

from pi_plugins.interactive.session_search import parse_query, search

TEXTS = ["fix the node cve in the parser", "node upgrade then read the cve list", "prepare release v2.10 notes"]


def test_words_fuzzy_phrases_exact_and_the_best_match_first():
    assert parse_query('foo "node  cve" bar').tokens == [("fuzzy", "foo"), ("phrase", "node  cve"), ("fuzzy", "bar")]
    assert sorted(search(TEXTS, "node cve", str)) == sorted(TEXTS[:2])
    assert search(TEXTS, '"NODE   cve"', str) == [TEXTS[0]]  # case and runs of spaces aside
    assert search(TEXTS, "cve list", str) == [TEXTS[1]]
    assert search(TEXTS, "", str) == TEXTS


def test_an_open_quote_splits_at_spaces_and_keeps_the_mark():
    assert parse_query('"node cve').tokens == [("fuzzy", '"node'), ("fuzzy", "cve")]


def test_regular_expressions_ignore_case_and_a_bad_or_empty_one_matches_nothing():
    assert search(TEXTS, r"re:V\d+\.\d+", str) == [TEXTS[2]]
    assert search(TEXTS, "re:^node|parser$", str) == [TEXTS[1], TEXTS[0]]  # the earlier match first
    assert parse_query("re:node(").error and search(TEXTS, "re:node(", str) == []
    assert parse_query("re:  ").error == "Empty regex" and search(TEXTS, "re:", str) == []


def test_recent_order_keeps_the_order_given():
    texts = ["a long way to the cve", "cve first"]
    assert search(texts, "cve", str, by_relevance=False) == texts
    assert search(texts, "cve", str) == ["cve first", "a long way to the cve"]
