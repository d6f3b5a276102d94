"""The fullscreen exit's transcript written while it is still being painted.

Quitting right after a resume paints most of the transcript at exit, and the terminal
then takes a while (a second or so for a 1 MB session) to take in the megabytes printed.
Writing from a thread overlaps the two: the chat hands over each piece's lines as soon as
they are painted, and a blocked write (the terminal busy) holds up only the writer, not
the painting. The bytes are those of one write of every line joined, each ended by a
newline.
"""

from __future__ import annotations

import queue
import threading
from typing import TextIO

_END = None


class LineWriter:
    """Writes runs of lines to ``out`` on its own thread, in the order they are put; a
    terminal gone (a hang-up) silently ends the writing, never the painting."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self._runs: queue.SimpleQueue[list[str] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._write_all, name="pi-exit-print", daemon=True)

    def __enter__(self) -> LineWriter:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._runs.put(_END)
        self._thread.join()

    def put(self, lines: list[str]) -> None:
        if lines:
            self._runs.put(lines)

    def _write_all(self) -> None:
        broken = False
        while True:
            runs = [self._runs.get()]
            while runs[-1] is not _END:  # whatever else is waiting goes in the same write
                try:
                    runs.append(self._runs.get_nowait())
                except queue.Empty:
                    break
            ended = runs[-1] is _END
            text = "".join("\n".join(lines) + "\n" for lines in runs if lines is not None)
            if text and not broken:
                try:
                    self.out.write(text)
                    if ended:
                        self.out.flush()
                except (OSError, ValueError):  # the terminal is gone: nothing to print to
                    broken = True
            if ended:
                return
