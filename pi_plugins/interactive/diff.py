"""Colouring the ``edit`` tool's ``details.diff`` (lines ``+N text``, ``-N text``,
`` N text`` and `` ...``): removed lines red, added green, context grey; when one line
was replaced by one line, the words that changed are shown in reverse video."""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from rich.text import Text

_LINE = re.compile(r"^([+\- ])(\s*\d*) (.*)$")
_WORD = re.compile(r"\s+|\w+|[^\w\s]")


def _parse(line: str) -> tuple[str, str, str] | None:
    match = _LINE.match(line)
    return (match.group(1), match.group(2), match.group(3)) if match else None


def _words_changed(old: str, new: str) -> tuple[Text, Text]:
    """The two lines with the words that differ marked (leading indentation never is)."""
    a, b = _WORD.findall(old), _WORD.findall(new)
    removed, added = Text(), Text()
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            removed.append("".join(a[i1:i2]))
            added.append("".join(b[j1:j2]))
            continue
        for words, target in ((a[i1:i2], removed), (b[j1:j2], added)):
            chunk = "".join(words)
            if not target.plain.strip():  # keep indentation plain
                lead = len(chunk) - len(chunk.lstrip())
                target.append(chunk[:lead])
                chunk = chunk[lead:]
            if chunk:
                target.append(chunk, style="diff.changed")
    return removed, added


def render_diff(diff: str) -> Text:
    """The whole diff as one styled text, one line per diff line."""
    lines = diff.replace("\t", "   ").split("\n")
    out: list[Text] = []
    i = 0
    while i < len(lines):
        parsed = _parse(lines[i])
        if parsed is None or parsed[0] == " ":
            out.append(Text(lines[i], style="diff.context"))
            i += 1
            continue
        if parsed[0] == "+":
            out.append(Text(lines[i], style="diff.added"))
            i += 1
            continue
        removed, added = [], []
        while i < len(lines) and (p := _parse(lines[i])) is not None and p[0] == "-":
            removed.append(p)
            i += 1
        while i < len(lines) and (p := _parse(lines[i])) is not None and p[0] == "+":
            added.append(p)
            i += 1
        if len(removed) == 1 and len(added) == 1:
            old_words, new_words = _words_changed(removed[0][2], added[0][2])
            out.append(Text(f"-{removed[0][1]} ", style="diff.removed") + _styled(old_words, "diff.removed"))
            out.append(Text(f"+{added[0][1]} ", style="diff.added") + _styled(new_words, "diff.added"))
        else:
            out.extend(Text(f"-{n} {t}", style="diff.removed") for _, n, t in removed)
            out.extend(Text(f"+{n} {t}", style="diff.added") for _, n, t in added)
    return Text("\n").join(out)


def _styled(text: Text, style: str) -> Text:
    text.stylize_before(style)
    return text
