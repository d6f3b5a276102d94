"""The journal of one streaming answer: what the user has seen of it so far, appended to
a file beside the session (in the cache folder) so that a killed pi can give it back.

The file is JSON lines: a header naming the answer (its model, its ``timestamp``, the
entry it hangs under), then one line per piece: ``{"i": 0, "text": "…"}`` and
``{"i": 1, "thinking": "…"}`` append to block ``i``; ``{"i": 2, "toolCall": {…}}``
replaces block ``i`` with the call and its arguments so far. A delta costs a counter and,
at most every :data:`INTERVAL` seconds (or :data:`MOST_BYTES` of text), one ``write`` of
what streamed since: the text is read off the message being streamed, never copied per
delta. No fsync: a killed process loses nothing the kernel has; a lost machine may.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from typing import Any

from pi_core import AssistantMessage, TextContent, ThinkingContent, ToolCall, Usage

log = logging.getLogger("pi.answer_journal")

FORMAT = "pi-answer-journal"
VERSION = 1
#: Seconds between writes while the answer streams; what a kill can lose at most.
INTERVAL = 0.1
#: Characters of text that make a write at once, before the interval is up.
MOST_BYTES = 64 * 1024
ABORTED = "Request was aborted"  # pi's errorMessage for an aborted answer


class JournalWriter:
    """Keeps ``message`` (the partial answer, updated in place by the stream) in ``path``."""

    def __init__(self, path: str, message: AssistantMessage, parent_id: str | None,
                 session_id: str, *, interval: float = INTERVAL, most_bytes: int = MOST_BYTES) -> None:
        self.path = path
        self.message = message
        self.interval = interval
        self.most_bytes = most_bytes
        self._header: dict[str, Any] | None = {
            "type": FORMAT, "version": VERSION, "sessionId": session_id, "parentId": parent_id,
            "api": message.api, "provider": message.provider, "model": message.model,
            "timestamp": message.timestamp,
        }
        if message.response_id:
            self._header["responseId"] = message.response_id
        self._fd: int | None = None
        self._written: dict[int, Any] = {}  # block index → characters written, or the call's JSON
        self._pending = 0
        self._timer: asyncio.TimerHandle | None = None
        self.failed = False

    def note(self, delta: str) -> None:
        """One delta arrived (its text is in the message already): write soon."""
        if self.failed:
            return
        self._pending += len(delta)
        if self._pending >= self.most_bytes:
            self.flush()
        elif self._timer is None:
            try:
                self._timer = asyncio.get_running_loop().call_later(self.interval, self.flush)
            except RuntimeError:  # no event loop (a synchronous caller): write now
                self.flush()

    def flush(self) -> None:
        """Append what streamed since the last write, in one ``write``."""
        self._timer = None
        self._pending = 0
        if self.failed:
            return
        lines = []
        if self._header is not None:
            lines.append(json.dumps(self._header))
        for index, block in enumerate(self.message.content):
            line = self._piece(index, block)
            if line is not None:
                lines.append(line)
        if not lines:
            return
        data = ("\n".join(lines) + "\n").encode("ascii")  # json.dumps escapes the rest
        try:
            if self._fd is None:
                os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
                self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
            os.write(self._fd, data)
        except OSError as exc:  # the answer goes on; only its crash copy is gone
            self.failed = True
            log.warning("the answer's journal %s cannot be written (%s); a crash now would lose "
                        "the answer streaming", self.path, exc)
            self.close(remove=True)
            return
        self._header = None

    def _piece(self, index: int, block: Any) -> str | None:
        if isinstance(block, (TextContent, ThinkingContent)):
            kind = block.type
            text = block.text if kind == "text" else block.thinking  # type: ignore[union-attr]
            done = self._written.get(index, 0)
            if len(text) <= done:
                return None
            self._written[index] = len(text)
            return json.dumps({"i": index, kind: text[done:]})
        if isinstance(block, ToolCall):
            call = json.dumps({"i": index, "toolCall": {"id": block.id, "name": block.name,
                                                         "arguments": block.arguments}}, default=str)
            if self._written.get(index) == call:
                return None
            self._written[index] = call
            return call
        return None

    def close(self, *, remove: bool) -> None:
        """Stop writing; ``remove`` deletes the file (the answer was saved)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = None
        if remove:
            remove_journal(self.path)


def remove_journal(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.warning("the answer's journal %s cannot be removed: %s", path, exc)


class JournalError(ValueError):
    """The journal cannot be read as one (its header is missing or not ours)."""


def read_journal(path: str) -> tuple[dict, AssistantMessage, str | None]:
    """The header and the answer a journal holds, as pi writes an aborted answer (the
    content so far, ``stopReason`` aborted); the third item names what was wrong with the
    end of the file (a cut or damaged line: what came before it is kept). Raises
    :class:`JournalError` when it holds no answer, :class:`OSError` when unreadable."""
    with open(path, "rb") as f:
        raw = f.read()
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if not lines:
        raise JournalError("it is empty")
    try:
        header = json.loads(lines[0])
    except ValueError:
        raise JournalError("its first line is not JSON") from None
    if not isinstance(header, dict) or header.get("type") != FORMAT:
        raise JournalError("its first line is not an answer journal's header")
    if header.get("version") != VERSION:
        raise JournalError(f"it is version {header.get('version')!r}, not {VERSION}")
    blocks: dict[int, Any] = {}
    problem = None
    for number, line in enumerate(lines[1:], start=2):
        try:
            _apply(blocks, json.loads(line))
        except (ValueError, TypeError, KeyError, AttributeError):
            problem = f"line {number} is cut or damaged; the answer is kept up to it"
            break
    message = AssistantMessage(
        content=[blocks[i] for i in sorted(blocks)],
        api=_text(header.get("api")), provider=_text(header.get("provider")),
        model=_text(header.get("model")), usage=Usage(), stop_reason="aborted",
        error_message=ABORTED)
    if isinstance(header.get("responseId"), str):
        message.response_id = header["responseId"]
    if isinstance(header.get("timestamp"), int):
        message.timestamp = header["timestamp"]
    return header, message, problem


def _apply(blocks: dict[int, Any], piece: Any) -> None:
    index = piece["i"]
    if not isinstance(index, int) or index < 0:
        raise ValueError("a block index")
    if "text" in piece or "thinking" in piece:
        kind = "text" if "text" in piece else "thinking"
        delta = piece[kind]
        if not isinstance(delta, str):
            raise TypeError("a text piece")
        block = blocks.get(index)
        if isinstance(block, TextContent) and kind == "text":
            block.text += delta
        elif isinstance(block, ThinkingContent) and kind == "thinking":
            block.thinking += delta
        else:
            blocks[index] = TextContent(text=delta) if kind == "text" else ThinkingContent(thinking=delta)
    elif "toolCall" in piece:
        call = piece["toolCall"]
        arguments = call.get("arguments")
        blocks[index] = ToolCall(id=str(call["id"]), name=str(call["name"]),
                                 arguments=arguments if isinstance(arguments, dict) else {})
    else:
        raise KeyError("no piece")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
