"""HTML pieces of the page, escaped in one place: :func:`escape` for content and
attribute values, :func:`escape_text` for bulk text, and the blocks built on them (text,
folded output, JSON as stored, inline images)."""

from __future__ import annotations

import json
import re
from html import escape as _html_escape
from typing import Any

from pi_core.protocol.messages import ImageContent

PREVIEW_LINES = 12  # longer tool output and arguments show this many lines, then fold
_MARKUP = re.compile(r"[&<>\"']")
_IMAGE_TYPE = re.compile(r"image/[A-Za-z0-9.+-]+")  # what may follow "data:" in an <img>


def escape(value: Any) -> str:
    """Text for HTML content and attribute values: ``& < > " '`` escaped."""
    if not isinstance(value, str):
        value = str(value)
    if _MARKUP.search(value) is None:  # most ids, names and stamps: one scan, no copies
        return value
    return _html_escape(value, quote=True)


def escape_text(text: str) -> str:
    """Text for element content only (never an attribute): there only ``&`` and ``<``
    can start markup. Two passes instead of five, on the bulk of a large page."""
    return text.replace("&", "&amp;").replace("<", "&lt;")


def image(block: ImageContent) -> str:
    mime = block.mime_type if isinstance(block.mime_type, str) else ""
    if not _IMAGE_TYPE.fullmatch(mime):
        return f'<div class="meta-text">[image of type {escape(mime or "?")}, not shown]</div>'
    return (f'<img class="image" alt="image ({escape(mime)})" '
            f'src="data:{escape(mime)};base64,{escape(block.data)}">')


def text_div(text: str) -> str:
    return f'<div class="text">{escape_text(text)}</div>'


def markdown_div(text: str) -> str:
    """Text the page's script renders as Markdown once it nears the screen (the text
    itself stays in the page: without scripts it reads as written)."""
    return f'<div class="text md">{escape_text(text)}</div>'


def folded_pre(text: str, what: str, css: str = "") -> str:
    """Text in a ``<pre>``; past :data:`PREVIEW_LINES` lines the rest folds away."""
    cls = f' class="{css}"' if css else ""
    lines = text.split("\n", PREVIEW_LINES)
    if len(lines) <= PREVIEW_LINES:
        return f"<pre{cls}>{escape_text(text)}</pre>"
    head = "\n".join(lines[:PREVIEW_LINES])
    rest = lines[PREVIEW_LINES]
    more = rest.count("\n") + 1
    return (f'<div class="folded"><pre{cls}>{escape_text(head)}</pre><details class="more">'
            f"<summary>{more} more line{'s' if more != 1 else ''} of {escape(what)}</summary>"
            f"<pre{cls}>{escape_text(rest)}</pre></details></div>")


def folded_json(value: Any, what: str) -> str:
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return f'<details class="json"><summary>{escape(what)}</summary><pre>{escape_text(text)}</pre></details>'
