"""BM25 ranking of tools by a query, as pi 1.6 ranks them for ``tool_search`` and
codemode's ``searchTools()``: one ranker, so both find the same tools in the same order.

A tool is searched by three fields: its name (a query term there outweighs any number of
mentions elsewhere), its text (the description plus the parameters' names and
descriptions, read through local ``$ref``s; the only length-normalised field), and its
namespace (an MCP server's name, description and instructions, weighted low because every
tool of the server shares it). Tools matching more query terms rank first whatever their
scores; a query that is exactly a tool's name (or its part after a ``__``) ranks it first.

Tools may be :class:`pi_core.Tool` objects, tool specs, or dicts with ``name``,
``description``, ``parameters`` and an optional ``namespace`` (``name``,
``description``, ``instructions``).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from typing import Any
from urllib.parse import unquote

from attrs import define

from pi_plugins.tool_search.tool import DEFAULT_LIMIT

#: A query term in the name counts this many times its IDF: more than the text part can
#: reach (at most k1 + 1 = 2.2), so a name match beats any number of mentions.
NAME_WEIGHT = 3.0
#: A query term in the namespace counts this much: it finds the server, not the tool.
NAMESPACE_WEIGHT = 0.5
K1 = 1.2
B = 0.75

STOP_WORDS = frozenset(
    "a an and are as at be by for from in is it of on or that the this to with".split()
)

_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_ACRONYM = re.compile(r"([A-Z]+)([A-Z][a-z])")
_ASCII_WORDS = re.compile(r"^[a-z0-9 ]*$")
_ASCII_WORD = re.compile(r"^[a-z0-9]+$")
_SIBILANT_PLURAL = re.compile(r"(ches|shes|sses|xes|zes)$")
_NOT_IDENTIFIER = re.compile(r"[^a-z0-9_$]")


@define(frozen=True)
class Match:
    """One ranked tool: its name, its score, and the tool as it was given."""

    name: str
    score: float
    tool: Any


def rank(query: str, tools: list, limit: int = DEFAULT_LIMIT) -> list:
    """The tools that match ``query``, best first, at most ``limit`` (the objects given)."""
    return [match.tool for match in ranked(query, tools, limit)]


def ranked(query: str, tools: list, limit: int = DEFAULT_LIMIT) -> list[Match]:
    """Like :func:`rank`, with each tool's name and score."""
    query_terms = list(dict.fromkeys(tokenize(query)))
    if not query_terms or not tools or limit <= 0:
        return []
    indexed = [_Indexed.of(tool) for tool in tools]
    average_length = sum(doc.text_length for doc in indexed) / len(indexed) or 1.0
    idf = {}
    for term in query_terms:
        frequency = sum(1 for doc in indexed if doc.has(term))
        idf[term] = math.log(1 + (len(indexed) - frequency + 0.5) / (frequency + 0.5))
    full_name_bonus = sum(idf.values())
    query_set = set(query_terms)
    exact_query = _normalize_name(query)
    scored: list[tuple[bool, int, float, Match]] = []
    for doc in indexed:
        norm = K1 * (1 - B + B * doc.text_length / average_length)
        score = 0.0
        covered = 0
        for term in query_terms:
            count = doc.text_counts.get(term, 0)
            weight = ((NAME_WEIGHT if term in doc.name_terms else 0.0)
                      + (NAMESPACE_WEIGHT if term in doc.namespace_terms else 0.0)
                      + count * (K1 + 1) / (count + norm))
            if weight > 0:
                covered += 1
            score += idf[term] * weight
        if score == 0:
            continue
        if doc.local_name_terms and all(term in query_set for term in doc.local_name_terms):
            score += full_name_bonus
        exact = _is_exact_name_query(exact_query, doc.name)
        scored.append((exact, covered, score, Match(doc.name, score, doc.tool)))
    scored.sort(key=lambda item: (not item[0], -item[1], -item[2]))  # stable: ties keep order
    return [item[3] for item in scored[:limit]]


def tokenize(text: str) -> list[str]:
    """Words of ``text``: split at identifier boundaries (camelCase, ``snake_case``),
    lower-cased, without English stop words, ASCII words in a naive singular form."""
    text = unicodedata.normalize("NFC", text)
    text = _ACRONYM.sub(r"\1 \2", _CAMEL.sub(r"\1 \2", text)).lower()
    normalized = "".join(ch if unicodedata.category(ch)[0] in "LMN" else " " for ch in text)
    normalized = " ".join(normalized.split())
    words = normalized.split(" ") if _ASCII_WORDS.match(normalized) else _segment(normalized)
    return [_stem(word) if _ASCII_WORD.match(word) else word
            for word in words if word and word not in STOP_WORDS]


def _segment(text: str) -> list[str]:
    """Words of non-ASCII text. pi uses ``Intl.Segmenter``, which splits scripts written
    without spaces (Chinese, Japanese, Thai) by dictionary; without one, each of their
    characters is a word, so a query still meets the tools that use its characters."""
    words: list[str] = []
    for chunk in text.split(" "):
        current = ""
        for ch in chunk:
            if _unspaced_script(ch):
                if current:
                    words.append(current)
                    current = ""
                words.append(ch)
            else:
                current += ch
        if current:
            words.append(current)
    return words


def _unspaced_script(ch: str) -> bool:
    code = ord(ch)
    return (0x3040 <= code <= 0x30FF or 0x3400 <= code <= 0x4DBF or 0x4E00 <= code <= 0x9FFF
            or 0xF900 <= code <= 0xFAFF or 0x0E00 <= code <= 0x0EFF or 0x20000 <= code <= 0x2FA1F)


def _stem(term: str) -> str:
    """Naive singular, so ``issues`` meets ``issue`` and ``searches`` meets ``search``."""
    if len(term) > 4 and term.endswith("ies"):
        return term[:-3] + "y"
    if len(term) > 4 and _SIBILANT_PLURAL.search(term):
        return term[:-2]
    if len(term) > 3 and term.endswith("s") and not term.endswith("ss"):
        return term[:-1]
    return term


def _normalize_name(name: str) -> str:
    """Lower-cased, characters invalid in identifiers as ``_``: ``dev-radius`` is ``dev_radius``."""
    return _NOT_IDENTIFIER.sub("_", name.strip().lower())


def _is_exact_name_query(query: str, name: str) -> bool:
    normalized = _normalize_name(name)
    return normalized == query or normalized.endswith(f"__{query}")


def _get(value: Any, key: str, default: Any = None) -> Any:
    if isinstance(value, dict):
        return value.get(key, default)
    return getattr(value, key, default)


def _schema_of(tool: Any) -> Any:
    if isinstance(tool, dict):
        return tool.get("parameters", tool.get("inputSchema"))
    schema = getattr(tool, "schema", None)  # a pi_core Tool: its parameters as JSON Schema
    if isinstance(schema, dict):
        return schema
    return getattr(tool, "parameters", None)


def _resolve_ref(ref: str, root: Any) -> Any:
    """The subschema a local ``$ref`` (``#``, ``#/$defs/Item``) names, else None."""
    if ref != "#" and not ref.startswith("#/"):
        return None
    current = root
    for segment in filter(None, ref[2:].split("/")):
        key = unquote(segment).replace("~1", "/").replace("~0", "~")
        if not isinstance(current, dict) or key not in current:
            return None
        current = current[key]
    return current if isinstance(current, dict) else None


def _schema_text(schema: Any, root: Any, parts: list[str], seen: list[Any]) -> None:
    """Descriptions and property names, recursively, each ``$ref`` target read once."""
    if not isinstance(schema, dict):
        return
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = _resolve_ref(ref, root)
        if target is not None and not any(target is other for other in seen):
            seen.append(target)
            _schema_text(target, root, parts, seen)
    if isinstance(schema.get("description"), str):
        parts.append(schema["description"])
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for name, prop in properties.items():
            parts.append(str(name))
            _schema_text(prop, root, parts, seen)
    _schema_text(schema.get("items"), root, parts, seen)
    for key in ("anyOf", "oneOf", "allOf"):
        variants = schema.get(key)
        if isinstance(variants, list):
            for variant in variants:
                _schema_text(variant, root, parts, seen)


@define
class _Indexed:
    name: str
    tool: Any
    name_terms: set[str]
    local_name_terms: list[str]
    text_counts: Counter[str]
    text_length: int
    namespace_terms: set[str]

    @classmethod
    def of(cls, tool: Any) -> _Indexed:
        name = str(_get(tool, "name", "") or "")
        parts = [str(_get(tool, "description", "") or "")]
        schema = _schema_of(tool)
        _schema_text(schema, schema, parts, [schema])
        text = " ".join(part for part in parts if part.strip())
        namespace = _get(tool, "namespace")
        namespace_text = " ".join(str(_get(namespace, key, "") or "")
                                  for key in ("name", "description", "instructions")) if namespace else ""
        counts = Counter(tokenize(text))
        return cls(name=name, tool=tool, name_terms=set(tokenize(name)),
                   local_name_terms=list(dict.fromkeys(tokenize(name.split("__")[-1]))),
                   text_counts=counts, text_length=sum(counts.values()),
                   namespace_terms=set(tokenize(namespace_text)))

    def has(self, term: str) -> bool:
        return term in self.name_terms or term in self.text_counts or term in self.namespace_terms
