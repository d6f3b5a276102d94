"""A program on a pseudo-terminal, every byte it writes kept: for what a terminal
multiplexer would swallow (tmux drops OSC reports it does not know). It answers the
device-attributes request, as every terminal does, and, when told to, the program status
query (OSC 7501) before it."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import threading
import time
from pathlib import Path

DEVICE_ATTRIBUTES = b"\x1b[c"
STATUS_QUERY = b"\x1b]7501;?\x1b\\"


class PtyTerminal:
    def __init__(self, argv: list[str], *, env: dict[str, str], cwd: Path, answers_status: bool = False) -> None:
        self.answers_status = answers_status
        self.output = b""
        self._lock = threading.Lock()
        self._master, slave = pty.openpty()
        os.set_blocking(self._master, True)
        import fcntl
        import struct
        import termios

        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
        self.process = subprocess.Popen(argv, env=env, cwd=cwd, stdin=slave, stdout=slave, stderr=slave,
                                        start_new_session=True)
        os.close(slave)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                if not select.select([self._master], [], [], 0.1)[0]:
                    if self.process.poll() is not None:
                        return
                    continue
                data = os.read(self._master, 65536)
            except OSError:
                return
            if not data:
                return
            with self._lock:
                seen = len(self.output)
                self.output += data
                asked = self.output[max(0, seen - 16):]
            if DEVICE_ATTRIBUTES in asked:
                reply = b"\x1b]7501;?\x1b\\" if self.answers_status and STATUS_QUERY in self.output else b""
                self.write(reply + b"\x1b[?62;22c")

    def write(self, data: bytes) -> None:
        os.write(self._master, data)

    def type(self, text: str, pause: float = 0.05) -> None:
        for char in text:
            self.write(char.encode())
            time.sleep(pause)

    def text(self) -> str:
        with self._lock:
            return self.output.decode(errors="replace")

    def wait_for(self, expected: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if expected in self.text():
                return self.text()
            time.sleep(0.05)
        raise AssertionError(f"{expected!r} was not written within {timeout} s")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self._reader.join(2)
        try:
            os.close(self._master)
        except OSError:
            pass

    def __enter__(self) -> PtyTerminal:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
