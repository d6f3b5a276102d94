"""A request's body, as the providers send it: UTF-8 JSON written with orjson, and a
long conversation's body streamed in pieces instead of held whole twice."""

from __future__ import annotations

import json
import re
from typing import Any

try:
    import orjson
except ImportError:  # pragma: no cover - a dependency, but the standard library still works
    orjson = None  # type: ignore[assignment]  # the module or None: readers test for None

_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def encode_json(body: Any) -> bytes:
    """The request body as UTF-8 JSON, with orjson (ten times the standard library on a
    long conversation); lone surrogates (invalid in UTF-8, rejected by every API) are
    dropped, and what orjson cannot write (an integer over 64 bits) goes through
    :mod:`json`."""
    if orjson is not None:
        try:
            return orjson.dumps(body)
        except TypeError:  # orjson.JSONEncodeError is one
            pass
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("", text).encode("utf-8")


def json_text(value: Any) -> str:
    """Compact JSON text of ``value`` (tool-call arguments inside a body), through orjson."""
    return encode_json(value).decode("utf-8")


#: A body larger than this is sent in pieces, never held whole: a resumed long session
#: would otherwise hold its conversation twice more (the encoded text and its bytes).
STREAM_BODY_AT = 1 << 20
_BATCH = 256  # list items encoded at a time (64 and 1024 took as long on the 50 MB resume)


class JsonBody:
    """A request body encoded piece by piece: each top-level key, and the items of its
    lists ``_BATCH`` at a time. Small bodies are encoded once and kept (:attr:`data`);
    a large one is measured in a first pass (for its ``content-length``: no chunked
    upload, which some local servers refuse) and encoded again while it is sent."""

    def __init__(self, body: Any) -> None:
        self.body = body
        self.data: bytes | None = None
        self.length = 0
        kept: list[bytes] | None = []
        for piece in self._pieces():
            self.length += len(piece)
            if kept is not None:
                kept.append(piece)
                if self.length > STREAM_BODY_AT:
                    kept = None
        if kept is not None:
            self.data = b"".join(kept)

    def _pieces(self):
        """The pieces, as bytes or views into them: a batch's list brackets are cut off
        without copying it (44 MB copied twice over was a fifth of the sending)."""
        body = self.body
        if not isinstance(body, dict):
            yield encode_json(body)
            return
        separator = b"{"
        for key, value in body.items():
            yield separator + encode_json(key) + b":"
            separator = b","
            if isinstance(value, list) and len(value) > _BATCH:
                yield b"["
                for start in range(0, len(value), _BATCH):
                    if start:
                        yield b","
                    yield memoryview(encode_json(value[start:start + _BATCH]))[1:-1]
                yield b"]"
            else:
                yield encode_json(value)
        yield b"}" if separator == b"," else b"{}"

    async def stream(self):
        for piece in self._pieces():
            yield piece

    def whole(self) -> bytes:
        """Every byte that will be sent, at once (to sign it)."""
        return self.data if self.data is not None else b"".join(bytes(p) for p in self._pieces())


def request_content(body: Any, headers: dict[str, str]) -> tuple[Any, dict[str, str]]:
    """What to send as the content of a JSON request, and the headers to send."""
    encoded = JsonBody(body)
    if encoded.data is not None:
        return encoded.data, headers
    return encoded.stream(), {**headers, "content-length": str(encoded.length)}
