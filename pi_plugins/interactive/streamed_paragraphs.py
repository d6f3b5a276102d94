"""The paragraphs of a streaming answer that are already whole, for the fullscreen view.

While an answer streams, the live painting shows only its end (``stream_tail``); in the
fullscreen transcript the user may scroll up mid-answer and must see all of it so far.
A paragraph is whole once a blank line outside a code fence follows it (or a later part
of the message began): it will not change, so it can join the transcript's lazily painted
pieces (:mod:`.lazy_lines`), and only the paragraph still growing is painted each frame.
Each call scans only what was added since the last one.
"""

from __future__ import annotations

from pi_core.protocol.messages import TextContent, ThinkingContent
from pi_plugins.interactive.blocks import AssistantBlock, View


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
                out.append((index, content.text, "none"))
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
            while True:
                end = text.find("\n", self._offset)
                if end < 0:
                    break
                line = text[self._offset:end]
                self._offset = end + 1
                stripped = line.lstrip()
                if stripped.startswith(("```", "~~~")):
                    self._fence = None if self._fence is not None else stripped
                elif self._fence is None and not line.strip():
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


def _first(paragraph: str, start: int) -> str:
    """A content's first paragraph loses its indent, as the whole text is stripped."""
    return paragraph.strip() if start == 0 else paragraph.rstrip()
