"""pi's RPC framing: one JSON value per line, LF only, both ways.

Lines are split on ``\\n`` alone (a trailing ``\\r`` is dropped), never on the other
Unicode line separators, which are valid inside JSON strings. stdin is read by a thread,
so any kind of stdin (pipe, file, terminal) works and a slow command never stops the
reading of the next one.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is a dependency
    orjson = None  # type: ignore[assignment]  # the module or None: readers test for None

#: ``data`` left out of a response (pi leaves out ``undefined``; ``None`` is JSON null).
NO_DATA = object()


class CommandError(Exception):
    """A command that cannot be carried out; its text is the response's ``error``."""


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON (orjson when it can: full ``message_update`` lines repeat the
    whole message, and the standard library is several times slower at that)."""
    if orjson is not None:
        try:
            return orjson.dumps(value)
        except TypeError:  # e.g. an integer beyond 64 bits: let json say what it can
            pass
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")


def success(command: dict, data: Any = NO_DATA) -> dict:
    response = _head(command)
    response["success"] = True
    if data is not NO_DATA:
        response["data"] = data
    return response


def failure(command: dict | None, error: str, kind: str | None = None) -> dict:
    response = _head(command or {}, kind)
    response["success"] = False
    response["error"] = error
    return response


def _head(command: dict, kind: str | None = None) -> dict:
    head = {"id": command["id"]} if "id" in command else {}
    head["type"] = "response"
    head["command"] = kind if kind is not None else str(command.get("type"))
    return head


class Output:
    """Writes whole lines to the protocol stream (one write each, flushed). A reader
    that went away closes it and calls ``on_closed`` once."""

    def __init__(self, stream: BinaryIO, on_closed: Callable[[], Any] | None = None) -> None:
        self._stream = stream
        self._on_closed = on_closed
        self.closed = False

    def send(self, value: dict) -> None:
        if self.closed:
            return
        try:
            self._stream.write(dumps(value) + b"\n")
            self._stream.flush()
        except (OSError, ValueError):  # EPIPE, or the stream was closed
            self.closed = True
            if self._on_closed is not None:
                self._on_closed()


class LineReader:
    """The lines of a binary stream, as an async queue; ``None`` at the end (EOF, or
    :meth:`stop`)."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        threading.Thread(target=self._pump, name="rpc-stdin", daemon=True).start()

    def _pump(self) -> None:
        try:
            for raw in _raw_lines(self._stream):
                self._post(raw)
        except (OSError, ValueError):
            pass
        self._post(None)

    def _post(self, item: bytes | None) -> None:
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)
        except RuntimeError:  # the loop is gone: the process is ending
            pass

    def stop(self) -> None:
        self._queue.put_nowait(None)

    async def next(self) -> bytes | None:
        return await self._queue.get()


def _raw_lines(stream: BinaryIO) -> Iterator[bytes]:
    """Lines of bytes, each with its LF (the last may lack one). From the file
    descriptor when there is one: a thread blocked in a buffered reader's ``readline``
    holds its lock, and the interpreter aborts when it closes stdin at exit."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        yield from iter(stream.readline, b"")
        return
    parts: list[bytes] = []  # of a line longer than one read (a big image), joined once
    while chunk := os.read(fd, 65536):
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            parts.append(chunk[start:end + 1])
            yield b"".join(parts)
            parts, start = [], end + 1
        if start < len(chunk):
            parts.append(chunk[start:])
    if parts:
        yield b"".join(parts)


def parse_line(raw: bytes) -> dict:
    """One command line as a JSON object; raises :class:`CommandError` with pi's
    "Failed to parse command" text."""
    line = raw.rstrip(b"\n")
    if line.endswith(b"\r"):
        line = line[:-1]
    try:
        value = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise CommandError(f"Failed to parse command: the line is not UTF-8 ({exc.reason})") from exc
    except ValueError as exc:
        raise CommandError(f"Failed to parse command: {exc}") from exc
    except RecursionError:  # "[[[[..." 100,000 deep: an answer, not a dropped connection
        raise CommandError("Failed to parse command: the JSON is nested too deeply") from None
    if not isinstance(value, dict):
        raise CommandError(f"Failed to parse command: expected a JSON object, got {type(value).__name__}")
    return value
