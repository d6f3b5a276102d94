"""Server-sent events, decoded incrementally from bytes as they arrive.

Network reads split the stream anywhere: inside a line, between ``\\r`` and ``\\n``, in
the middle of a UTF-8 character. :class:`SseDecoder` takes the bytes in whatever pieces
they come and returns each complete event once, the same events whatever the split (the
WHATWG event-stream rules: ``\\r\\n``, ``\\r`` or ``\\n`` end a line; a blank line ends an
event; ``:`` starts a comment; ``data`` lines are joined with ``\\n``). Each byte is looked
at a constant number of times, so a long line arriving byte by byte stays linear.
"""

from __future__ import annotations

import codecs
import re

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class SseEvent:
    __slots__ = ("event", "data", "id")

    def __init__(self, event: str | None, data: str, id: str | None = None):
        self.event = event
        self.data = data
        self.id = id

    def __repr__(self) -> str:
        return f"SseEvent(event={self.event!r}, data={self.data[:80]!r})"


class SseDecoder:
    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")("replace")
        self._partial: list[str] = []  # the current incomplete line, in pieces
        self._event: str | None = None
        self._data: list[str] = []
        self._id: str | None = None

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """The events completed by ``chunk``."""
        return self._text(self._utf8.decode(chunk))

    def close(self) -> list[SseEvent]:
        """End of stream: a last line or event without its terminating blank line."""
        events = self._text(self._utf8.decode(b"", final=True))
        if self._partial:
            line, self._partial = "".join(self._partial), []
            self._line(line.removesuffix("\r"), events)
        self._dispatch(events)
        return events

    def _text(self, text: str) -> list[SseEvent]:
        events: list[SseEvent] = []
        if not text:
            return events
        if "\n" not in text and "\r" not in text:
            self._partial.append(text)
            return events
        if self._partial:
            text = "".join(self._partial) + text
            self._partial = []
        hold = ""
        if text.endswith("\r"):  # maybe the first half of "\r\n": decide with the next piece
            text, hold = text[:-1], "\r"
        lines = _LINE_BREAK.split(text) if "\r" in text else text.split("\n")
        rest = lines.pop() + hold
        if rest:
            self._partial.append(rest)
        data = self._data
        for line in lines:  # the hot loop: one pass, no call per line
            if not line:
                if data or self._event is not None:
                    events.append(SseEvent(self._event, "\n".join(data), self._id))
                    data = self._data = []
                    self._event = None
            elif line.startswith("data:"):
                data.append(line[6:] if line.startswith("data: ") else line[5:])
            elif line.startswith("event: "):
                self._event = line[7:]
            elif line[0] != ":":
                self._field(line)
        return events

    def _field(self, line: str) -> None:
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if name == "data":  # "data" without a colon: an empty data line
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            self._id = value

    def _line(self, line: str, events: list[SseEvent]) -> None:
        if not line:
            self._dispatch(events)
        elif line[0] != ":":
            self._field(line)

    def _dispatch(self, events: list[SseEvent]) -> None:
        if self._data or self._event is not None:
            events.append(SseEvent(self._event, "\n".join(self._data), self._id))
        self._event, self._data = None, []
