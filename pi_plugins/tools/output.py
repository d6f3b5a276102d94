"""Command output of any length in bounded memory.

:class:`OutputCollector` takes the output as it streams in. It keeps only a rolling tail
(enough for the last 2,000 lines or 50 KB that the model is shown), counts lines and
bytes, and once the output outgrows the budget it writes all of it, from the first byte,
to a temporary file through the execution environment, so nothing is lost and memory
stays flat however much a command prints. What it shows has the keys pi holds
redacted (:func:`pi_plugins.keys.rules.redact`); the file keeps the bytes as they came.
"""

from __future__ import annotations

from pi_core.protocol.environment import ExecutionEnvironment, OutputSink
from pi_plugins.keys.rules import redact
from pi_plugins.tools.truncation import MAX_BYTES, MAX_LINES, Truncation, truncate_tail


class OutputCollector:
    def __init__(
        self,
        env: ExecutionEnvironment,
        prefix: str = "pi-bash",
        max_lines: int = MAX_LINES,
        max_bytes: int = MAX_BYTES,
    ):
        self.env, self.prefix = env, prefix
        self.max_lines, self.max_bytes = max_lines, max_bytes
        self.keep = max(2 * max_bytes, 1)
        self.total_bytes = 0
        self.newlines = 0
        self.last_line_bytes = 0  # length of the line being written (for the notice)
        self._tail = bytearray()
        self._tail_at_line_start = True
        self._head: list[bytes] | None = []  # everything, until the file takes over
        self.sink: OutputSink | None = None

    @property
    def total_lines(self) -> int:
        return self.newlines + 1

    @property
    def over_budget(self) -> bool:
        return self.total_bytes > self.max_bytes or self.total_lines > self.max_lines

    @property
    def full_output_path(self) -> str | None:
        return self.sink.path if self.sink is not None else None

    def recent(self, count: int) -> bytes:
        """The last ``count`` bytes received (at most what the tail still holds: at least
        twice the byte budget), for a watcher that streams the output as it arrives."""
        return bytes(self._tail[-count:]) if count > 0 else b""

    async def add(self, data: bytes) -> None:
        if not data:
            return
        self.total_bytes += len(data)
        found = data.count(b"\n")
        if found:
            self.newlines += found
            self.last_line_bytes = len(data) - data.rindex(b"\n") - 1
        else:
            self.last_line_bytes += len(data)
        self._tail += data
        if len(self._tail) > 2 * self.keep:
            cut = len(self._tail) - self.keep
            self._tail_at_line_start = self._tail[cut - 1] == 0x0A
            del self._tail[:cut]
        if self.sink is not None:
            self.sink.write(data)
        else:
            assert self._head is not None  # dropped only when the sink opens
            self._head.append(data)
            if self.over_budget:
                await self._spill()

    async def _spill(self) -> None:
        sink = self.sink = await self.env.open_output_file(self.prefix)
        for chunk in self._head or ():
            sink.write(chunk)
        self._head = None

    def close(self) -> None:
        if self.sink is not None:
            self.sink.close()

    def snapshot(self) -> Truncation:
        """The tail within budget, with what it leaves out."""
        tail = bytes(self._tail)
        if not self._tail_at_line_start:
            newline = tail.find(b"\n")
            if newline != -1:
                tail = tail[newline + 1 :]
            else:  # one line longer than the tail: start on a whole character
                start = 0
                while start < len(tail) and tail[start] & 0xC0 == 0x80:
                    start += 1
                tail = tail[start:]
        text = redact(tail.decode("utf-8", "replace"))  # no key reaches the model or a log
        cut = truncate_tail(text, self.max_lines, self.max_bytes)
        if not self.over_budget:
            return cut
        if not cut.truncated:  # the tail fits, but the output as a whole did not
            cut.truncated_by = "bytes" if self.total_bytes > self.max_bytes else "lines"
        cut.truncated = True
        cut.total_lines = self.total_lines
        cut.total_bytes = self.total_bytes
        return cut
