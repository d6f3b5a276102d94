"""YAML frontmatter of Markdown resources (SKILL.md, prompt templates).

A file has frontmatter when it starts with a ``---`` line and a later ``---`` line closes
it; everything between is YAML (a mapping), everything after is the body. PyYAML is
imported on the first file that has frontmatter, not when pi starts.
"""

from __future__ import annotations

import re
from typing import Any

_BLOCK = re.compile(r"\A---[ \t]*\n(?:(.*?)\n)?---[ \t]*(?:\n|\Z)", re.DOTALL)


class FrontmatterError(ValueError):
    """The frontmatter is not valid YAML, or not a mapping."""


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """(the YAML text or ``None``, the body with surrounding blank space removed)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if text.startswith("\ufeff"):
        text = text[1:]
    match = _BLOCK.match(text)
    if match is None:
        return None, text.strip()
    return match.group(1) or "", text[match.end():].strip()


def parse_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """(frontmatter mapping, body); no frontmatter gives an empty mapping.

    Raises :class:`FrontmatterError` with the YAML problem when it cannot be read.
    """
    yaml_text, body = split_frontmatter(text)
    if yaml_text is None or not yaml_text.strip():
        return {}, body
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when PyYAML has it
    try:
        # pi's YAML parser ends a final block scalar (``description: |``) with its
        # newline even at the end of the text; PyYAML does so only before a line break.
        data = yaml.load(yaml_text + "\n", Loader=loader)
    except yaml.YAMLError as exc:
        raise FrontmatterError(f"invalid YAML frontmatter: {_describe(exc)}") from None
    if data is None:
        return {}, body
    if not isinstance(data, dict):
        raise FrontmatterError(
            f"frontmatter must be a mapping of keys to values, not {type(data).__name__}"
        )
    return data, body


def _describe(exc: Exception) -> str:
    """The YAML problem and where it is, counted in lines of the whole file."""
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if problem is None:
        return " ".join(str(exc).split())
    if mark is None:
        return problem
    return f"{problem} (line {mark.line + 2}, column {mark.column + 1})"
