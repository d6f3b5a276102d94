"""What ``/resume``'s search box understands, as pi's session picker: words match
fuzzily (every one must), ``"a quoted phrase"`` matches exactly (case and runs of spaces
aside), and ``re:pattern`` is a case-insensitive regular expression. An empty or invalid
``re:`` matches nothing; with a quote left open the query is split at spaces only (the
quote mark one of a word's letters)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TypeVar

from attrs import define, field

from pi_plugins.models.registry import fuzzy_score

T = TypeVar("T")


@define
class SearchQuery:
    mode: str = "tokens"  # or "regex"
    #: (kind, text): kind "fuzzy" for a word, "phrase" for a quoted phrase.
    tokens: list[tuple[str, str]] = field(factory=list)
    regex: re.Pattern | None = None
    error: str | None = None


def parse_query(query: str) -> SearchQuery:
    text = query.strip()
    if text.startswith("re:"):
        pattern = text[3:].strip()
        if not pattern:
            return SearchQuery("regex", error="Empty regex")
        try:
            return SearchQuery("regex", regex=re.compile(pattern, re.IGNORECASE))
        except re.error as exc:
            return SearchQuery("regex", error=str(exc))
    tokens: list[tuple[str, str]] = []
    buffer, quoted = "", False

    def flush(kind: str) -> None:
        nonlocal buffer
        if buffer.strip():
            tokens.append((kind, buffer.strip()))
        buffer = ""

    for char in text:
        if char == '"':
            flush("phrase" if quoted else "fuzzy")
            quoted = not quoted
        elif char.isspace() and not quoted:
            flush("fuzzy")
        else:
            buffer += char
    if quoted:  # an unclosed quote: plain words
        return SearchQuery(tokens=[("fuzzy", word) for word in text.split()])
    flush("fuzzy")
    return SearchQuery(tokens=tokens)


def _squeezed(text: str) -> str:
    return " ".join(text.lower().split())


def score(parsed: SearchQuery, text: str) -> float | None:
    """How well ``text`` matches (lower is better), None when it does not."""
    if parsed.mode == "regex":
        found = parsed.regex.search(text) if parsed.regex is not None else None
        return None if found is None else found.start() * 0.1
    total, squeezed = 0.0, None
    for kind, value in parsed.tokens:
        if kind == "phrase":
            squeezed = _squeezed(text) if squeezed is None else squeezed
            at = squeezed.find(_squeezed(value))
            if at < 0:
                return None
            total += at * 0.1
            continue
        score = fuzzy_score(value, text)
        if score is None:
            return None
        total += score
    return total


def search(items: Iterable[T], query: str, text_of: Callable[[T], str], by_relevance: bool = True) -> list[T]:
    """The items matching ``query``: best first with ``by_relevance`` (ties keep their
    order), else in the order given. Everything for an empty query."""
    items = list(items)
    if not query.strip():
        return items
    parsed = parse_query(query)
    if parsed.error:
        return []
    scored = [(found, item) for item in items if (found := score(parsed, text_of(item))) is not None]
    if by_relevance:
        scored.sort(key=lambda pair: pair[0])
    return [item for _, item in scored]
