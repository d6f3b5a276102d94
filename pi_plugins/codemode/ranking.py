"""BM25 over tools' names and descriptions, for ``searchTools()``.

A stand-in with the interface the ``tool_search`` built-in's ranking will have
(``pi_plugins/tool_search/ranking.py``: ``rank(query, tools, limit)``); when that lands,
this module goes and codemode imports that one, so both rank alike.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

_WORD = re.compile(r"[a-z0-9]+")
K1, B = 1.2, 0.75


def words(text: str) -> list[str]:
    """Lower-case words; a name's parts count as words (``mcp__dev-radius__search``)."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    return _WORD.findall(spaced.lower())


def _document(tool: Any) -> list[str]:
    name = getattr(tool, "name", "") if not isinstance(tool, dict) else tool.get("name", "")
    description = getattr(tool, "description", "") if not isinstance(tool, dict) else tool.get("description", "")
    return words(name) * 3 + words(name.replace("_", " ")) + words(description or "")


def rank(query: str, tools: Sequence[Any], limit: int = 8) -> list[Any]:
    """The ``tools`` (objects or dicts with ``name`` and ``description``) that match
    ``query`` best, best first, at most ``limit``; tools no query word matches are left out."""
    terms = words(query)
    if not terms or not tools:
        return []
    documents = [Counter(_document(tool)) for tool in tools]
    lengths = [sum(doc.values()) for doc in documents]
    average = sum(lengths) / len(lengths) or 1.0
    count = len(documents)
    scores = []
    for index, (doc, length) in enumerate(zip(documents, lengths, strict=True)):
        score = 0.0
        for term in set(terms):
            frequency = doc.get(term, 0)
            if not frequency:
                continue
            holding = sum(1 for other in documents if term in other)
            idf = math.log(1 + (count - holding + 0.5) / (holding + 0.5))
            score += idf * frequency * (K1 + 1) / (frequency + K1 * (1 - B + B * length / average))
        if score > 0:
            scores.append((score, index))
    scores.sort(key=lambda pair: (-pair[0], pair[1]))
    return [tools[index] for _, index in scores[:max(0, limit)]]
