"""Incremental JSON: what a streamed tool call's arguments say so far, in linear time.

A model streams a tool call's arguments as JSON text in small pieces (a few characters
each, about a token). Re-parsing the whole text after every piece costs time quadratic in
its size: a 1 MB ``write`` call in 4-character pieces would take hours. :class:`PartialJson`
reads each piece once and keeps the partial value up to date in place: objects and arrays
are filled as their members arrive; a string being streamed is shown as far as it has come
(refreshed on every piece while short, then whenever it has grown by an eighth, so the copies
add up to a constant times its length); numbers and literals appear once complete.

The partial value is for display. The final arguments come from parsing the complete text
once (:func:`parse_complete`), so a subtle partial-parse difference can never change what a
tool receives.
"""

from __future__ import annotations

import json
import re
from typing import Any

# Scanner modes.
_VALUE, _STRING, _SCALAR, _AFTER, _KEY, _COLON, _END = range(7)

_SPECIAL = re.compile(r'["\\]')
_SCALAR_RUN = re.compile(r"[-+.0-9A-Za-z]*")
_WHITESPACE = " \t\n\r"
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
#: Strings shorter than this are refreshed on every piece; longer ones when they grew by 1/8.
_SMALL = 4096


class PartialJson:
    """Feed JSON text in pieces with :meth:`feed`; ``value`` is the value so far.

    ``failed`` is set (and further input ignored) when the text stops being JSON;
    ``complete`` when the top-level value has ended.
    """

    __slots__ = (
        "value", "failed", "complete", "_mode", "_stack", "_parts", "_length", "_shown",
        "_is_key", "_escape", "_surrogate", "_scalar", "_slot",
    )

    def __init__(self) -> None:
        self.value: Any = None
        self.failed = False
        self.complete = False
        self._mode = _VALUE
        # Each frame: [container, key (objects only), is_object].
        self._stack: list[list] = []
        self._parts: list[str] = []  # the string being read, in pieces
        self._length = 0  # its length so far
        self._shown = 0  # the length last written into its container
        self._is_key = False
        self._escape = ""  # an escape sequence split across pieces
        self._surrogate = ""  # a high surrogate waiting for its low half
        self._scalar: list[str] = []
        self._slot: tuple[Any, Any] | None = None  # (container, key or index) of the string

    # ------------------------------------------------------------ input

    def feed(self, text: str) -> Any:
        """Read the next piece of text; returns the value so far."""
        if self.failed or not text:
            return self.value
        if (self._mode == _STRING and not self._escape and not self._surrogate
                and '"' not in text and "\\" not in text):
            # The common case while a long string streams: the piece is all content.
            self._parts.append(text)
            self._length += len(text)
            if not self._is_key and self._slot is not None:
                self._refresh(final=False)
            return self.value
        try:
            self._scan(text)
        except _NotJson:
            self.failed = True
        if self._mode == _STRING and not self._is_key and self._slot is not None:
            self._refresh(final=False)
        return self.value

    def _scan(self, text: str) -> None:
        i, n = 0, len(text)
        while i < n:
            mode = self._mode
            if mode == _STRING:
                i = self._read_string(text, i)
                continue
            if mode == _SCALAR:
                # _SCALAR_RUN matches everywhere (it may match nothing).
                end = _SCALAR_RUN.match(text, i).end()  # type: ignore[union-attr]
                self._scalar.append(text[i:end])
                i = end
                if i < n:
                    self._end_scalar()
                continue
            c = text[i]
            if c in _WHITESPACE:
                i += 1
                continue
            i += 1
            if mode == _VALUE:
                self._start_value(c)
            elif mode == _AFTER:
                frame = self._stack[-1]
                if c == ",":
                    self._mode = _KEY if frame[2] else _VALUE
                elif c == ("}" if frame[2] else "]"):
                    self._pop()
                else:
                    raise _NotJson
            elif mode == _KEY:
                if c == '"':
                    self._start_string(is_key=True)
                elif c == "}" and self._stack[-1][1] is None:
                    self._pop()  # "{}" (a key was not yet begun)
                else:
                    raise _NotJson
            elif mode == _COLON:
                if c != ":":
                    raise _NotJson
                self._mode = _VALUE
            else:  # _END: only whitespace may follow the value
                raise _NotJson

    def _start_value(self, c: str) -> None:
        if c == "{":
            self._push({}, True)
        elif c == "[":
            self._push([], False)
        elif c == '"':
            self._start_string(is_key=False)
        elif c == "]" and self._stack and not self._stack[-1][2] and not self._stack[-1][0]:
            self._pop()  # "[]"
        elif c in "-0123456789tfn":
            self._scalar = [c]
            self._mode = _SCALAR
        else:
            raise _NotJson

    # ------------------------------------------------------------ containers

    def _attach(self, value: Any) -> tuple[Any, Any] | None:
        """Put a new value into its parent; returns where it went."""
        if not self._stack:
            self.value = value
            return None
        container, key, is_object = self._stack[-1]
        if is_object:
            container[key] = value
            return container, key
        container.append(value)
        return container, len(container) - 1

    def _push(self, container: Any, is_object: bool) -> None:
        self._attach(container)
        self._stack.append([container, None, is_object])
        self._mode = _KEY if is_object else _VALUE

    def _pop(self) -> None:
        self._stack.pop()
        self._value_done()

    def _value_done(self) -> None:
        if self._stack:
            self._mode = _AFTER
        else:
            self._mode = _END
            self.complete = True

    # ------------------------------------------------------------ scalars

    def _end_scalar(self) -> None:
        raw = "".join(self._scalar)
        self._scalar = []
        try:
            value = json.loads(raw)
        except ValueError:
            raise _NotJson from None
        self._attach(value)
        self._value_done()

    # ------------------------------------------------------------ strings

    def _start_string(self, *, is_key: bool) -> None:
        self._mode = _STRING
        self._is_key = is_key
        self._parts, self._length, self._shown = [], 0, 0
        self._slot = None if is_key else self._attach("")

    def _read_string(self, text: str, i: int) -> int:
        if self._escape:
            i = self._continue_escape(text, i)
            if self._escape:  # still incomplete: the piece is used up
                return i
        match = _SPECIAL.search(text, i)
        end = match.start() if match else len(text)
        if end > i:
            self._add(text[i:end])
        if match is None:
            return end
        if text[end] == '"':
            self._end_string()
            return end + 1
        self._escape = "\\"
        return self._continue_escape(text, end + 1)

    def _continue_escape(self, text: str, i: int) -> int:
        """Collect an escape sequence (maybe split across pieces); decode it when whole."""
        need = 2 if len(self._escape) < 2 or self._escape[1] != "u" else 6
        while i < len(text) and len(self._escape) < need:
            self._escape += text[i]
            i += 1
            if len(self._escape) == 2 and self._escape[1] == "u":
                need = 6
        if len(self._escape) < need:
            return i
        escape, self._escape = self._escape, ""
        if escape[1] == "u":
            try:
                code = int(escape[2:], 16)
            except ValueError:
                raise _NotJson from None
            char = chr(code)
            if 0xD800 <= code < 0xDC00:
                self._surrogate = char
                return i
            if 0xDC00 <= code < 0xE000 and self._surrogate:
                char = (self._surrogate + char).encode("utf-16", "surrogatepass").decode("utf-16")
            self._surrogate = ""
            self._add(char)
            return i
        escaped = _ESCAPES.get(escape[1])
        if escaped is None:
            raise _NotJson
        self._add(escaped)
        return i

    def _add(self, piece: str) -> None:
        if self._surrogate:  # a lone high surrogate: keep it, as json.loads would
            piece, self._surrogate = self._surrogate + piece, ""
        self._parts.append(piece)
        self._length += len(piece)

    def _end_string(self) -> None:
        text = "".join(self._parts)
        self._parts = []
        if self._is_key:
            self._stack[-1][1] = text
            self._mode = _COLON
            return
        self._refresh(final=True, text=text)
        self._slot = None
        self._value_done()

    def _refresh(self, *, final: bool, text: str | None = None) -> None:
        """Write the string so far into its container (cheaply: see the module doc)."""
        grown = self._length - self._shown
        if not final and self._length >= _SMALL and grown * 8 < self._shown:
            return
        if text is None:
            text = "".join(self._parts)
            self._parts = [text]
        self._shown = self._length
        if self._slot is None:
            self.value = text
        else:
            container, key = self._slot
            container[key] = text


class _NotJson(Exception):
    pass


# ---------------------------------------------------------------- complete text

_ESCAPE_OR_BACKSLASH = re.compile(r'\\(u[0-9a-fA-F]{4}|["\\/bfnrt])|\\')


def parse_complete(raw: str) -> Any:
    """Parse complete JSON text as models write it: also with raw control characters in
    strings or stray backslashes (``\\d``), which strict JSON rejects. Raises
    :class:`ValueError` when it is not JSON even so."""
    try:
        return json.loads(raw)
    except ValueError:
        pass
    try:
        return json.loads(raw, strict=False)  # raw newlines and tabs inside strings
    except ValueError:
        pass
    repaired = _ESCAPE_OR_BACKSLASH.sub(lambda m: m.group(0) if m.group(1) else "\\\\", raw)
    return json.loads(repaired, strict=False)
