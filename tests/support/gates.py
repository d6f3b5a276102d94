"""Named pipes that let a test and a shell command wait on each other, instead of a
``sleep`` that hopes the other side got there first.

::

    gate = Gate(tmp_path / "gate")
    command = gate.holds("echo done")   # a bash command that waits for the gate, then runs
    ...                                 # the tool runs, the test looks at the busy state
    gate.open()                         # now it goes on

    started = Gate(tmp_path / "started")
    command = started.tells("sleep 30")  # says it started, then runs
    started.wait()                      # returns once the command has started
"""

from __future__ import annotations

import os
import shlex
import threading
from pathlib import Path


class Gate:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        os.mkfifo(self.path)
        self._held: list[int] = []

    def holds(self, command: str) -> str:
        """``command`` run once the gate is open."""
        return f"read _ < {shlex.quote(str(self.path))}; {command}"

    def open(self) -> None:
        """Let the command waiting in :meth:`holds` go on (now, or whenever it gets there).
        Opened read-write, the pipe never blocks us, and keeping it open keeps the line
        in it until the command reads it."""
        fd = os.open(self.path, os.O_RDWR | os.O_NONBLOCK)
        os.write(fd, b"open\n")
        self._held.append(fd)

    def tells(self, command: str) -> str:
        """``command`` run after telling :meth:`wait` that it started."""
        return f"echo started > {shlex.quote(str(self.path))}; {command}"

    def wait(self, timeout: float = 10.0) -> None:
        """Block until the command of :meth:`tells` has started."""
        said: list[bytes] = []

        def listen() -> None:
            with open(self.path, "rb") as pipe:  # blocks until the command opens it
                said.append(pipe.readline())

        listener = threading.Thread(target=listen, daemon=True)
        listener.start()
        listener.join(timeout)
        if listener.is_alive():
            self.open()  # unblocks the listener, which then reads our own line
            listener.join(1)
            raise AssertionError(f"the command did not start within {timeout}s")
        assert said and said[0].startswith(b"started"), said

    def close(self) -> None:
        for fd in self._held:
            os.close(fd)
        self._held.clear()
