"""The paragraphs of a streaming answer that are already whole, for the fullscreen view.

While an answer streams, the live painting shows only its end (``stream_tail``); in the
fullscreen transcript the user may scroll up mid-answer and must see all of it so far.
A paragraph is whole once a blank line outside a code fence follows it (or a later part
of the message began): it will not change, so it can join the transcript's lazily painted
pieces (:mod:`.lazy_lines`), and only the paragraph still growing is painted each frame.
Each call scans only what was added since the last one.
"""

from __future__ import annotations

import re

from pi_core.protocol.messages import TextContent, ThinkingContent
from pi_plugins.interactive.blocks import STREAM_TAIL_CHARS, AssistantBlock, FenceState, View

_BREAK = re.compile(r"^[ \t]*(```|~~~)|^[ \t]*$", re.M)  # a fence's line, or a blank one


class StreamedParagraphs:
    def __init__(self, block: AssistantBlock) -> None:
        self.block = block
        self._content = 0  # the index in the message's content being scanned
        self._offset = 0  # how far its text was scanned (whole lines only)
        self._start = 0  # where its paragraph still growing begins
        self._fence: str | None = None

    def _parts(self) -> list[tuple[int, str, str]]:
        """(index, text, style) of the message's texts and thinking, in order."""
        out = []
        for index, content in enumerate(self.block.message.content):
            if isinstance(content, ThinkingContent):
                out.append((index, content.thinking, "thinking"))
            elif isinstance(content, TextContent):
                out.append((index, content.text, self.block.text_style()))
        return out

    def whole(self, view: View) -> list[tuple[str, str]]:
        """The (Markdown, style) paragraphs that became whole since the last call."""
        found: list[tuple[str, str]] = []
        parts = [part for part in self._parts() if part[0] >= self._content]
        for position, (index, text, style) in enumerate(parts):
            if index != self._content:
                self._content, self._offset, self._start, self._fence = index, 0, 0, None
            finished = position < len(parts) - 1 or len(self.block.message.content) > index + 1
            hidden = style == "thinking" and view.hide_thinking
            if self._offset == 0 and not hidden:  # first seen already long: its head in one piece
                head = _head_end(text)
                if head:
                    found.append((text[:head].strip(), style))
                    self._offset = self._start = head
            for match in _BREAK.finditer(text, self._offset):  # only blank lines and fences
                end = text.find("\n", match.start())
                if end < 0:  # the line is not whole yet
                    break
                self._offset = end + 1
                if match.group(1):
                    self._fence = None if self._fence is not None else text[match.start():end].lstrip()
                elif self._fence is None:
                    paragraph = text[self._start:self._offset].strip("\n")
                    if paragraph.strip() and not hidden:
                        found.append((_first(paragraph, self._start), style))
                    self._start = self._offset
            if not finished:
                break
            rest = text[self._start:].strip("\n")
            if hidden and text.strip():
                found.append((view.thinking_label, "label"))
            elif rest.strip():
                found.append((_first(rest, self._start), style))
            self._content, self._offset, self._start, self._fence = index + 1, 0, 0, None
        return found

    def growing(self, view: View) -> tuple[str, str] | None:
        """The paragraph still growing, as (Markdown, style), if any."""
        parts = [part for part in self._parts() if part[0] == self._content]
        if not parts:
            return None
        _, text, style = parts[0]
        if style == "thinking" and view.hide_thinking:
            return (view.thinking_label, "label") if text.strip() else None
        rest = text[self._start:]
        return (_first(rest.strip("\n"), self._start), style) if rest.strip() else None


def _head_end(text: str) -> int:
    """Where a text first seen long can be cut at a blank line outside a code fence, well
    before its end (0: nowhere); what is above is split into paragraphs only when shown."""
    if len(text) < 4 * STREAM_TAIL_CHARS:
        return 0
    position = len(text) - STREAM_TAIL_CHARS
    for _ in range(20):
        position = text.rfind("\n\n", 0, position)
        if position <= 0:
            return 0
        if FenceState().at(text, position) is None:
            return position + 2
    return 0


def _first(paragraph: str, start: int) -> str:
    """A content's first paragraph loses its indent, as the whole text is stripped."""
    return paragraph.strip() if start == 0 else paragraph.rstrip()
