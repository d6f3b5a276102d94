"""A program on a pseudo-terminal, every byte it writes kept: for what a terminal
multiplexer would swallow (tmux drops OSC reports it does not know). It answers the
device-attributes request, as every terminal does, and, when told to, the program status
query (OSC 7501) before it, and, when told to, keeps kitty's keyboard protocol's flags
stack (``CSI > flags u`` pushes, ``CSI < u`` pops) and answers its query ``CSI ? u``."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import threading
import time
from pathlib import Path

DEVICE_ATTRIBUTES = b"\x1b[c"
STATUS_QUERY = b"\x1b]7501;?\x1b\\"
CELL_SIZE = b"\x1b[16t"
_KITTY_KEYBOARD = re.compile(rb"\x1b\[([<>?])(\d*)u")


class PtyTerminal:
    def __init__(self, argv: list[str], *, env: dict[str, str], cwd: Path, answers_status: bool = False,
                 kitty_keyboard: bool = False, cell_pixels: tuple[int, int] | None = None) -> None:
        self.answers_status = answers_status
        self.cell_pixels = cell_pixels
        self._cell_size_seen = 0
        self.kitty_keyboard = kitty_keyboard
        self.kitty_flags: list[int] = []  # the keyboard protocol's stack, top last
        self._kitty_seen = self._attributes_seen = 0
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
                self.output += data
                asked = DEVICE_ATTRIBUTES in self.output[self._attributes_seen:]  # each request answered once
                if asked:
                    self._attributes_seen = self.output.rindex(DEVICE_ATTRIBUTES) + len(DEVICE_ATTRIBUTES)
            kitty_reply = self._keyboard_protocol() if self.kitty_keyboard else b""
            if self.cell_pixels and CELL_SIZE in self.output[self._cell_size_seen:]:
                self._cell_size_seen = self.output.rindex(CELL_SIZE) + len(CELL_SIZE)
                self.write(b"\x1b[6;%d;%dt" % (self.cell_pixels[1], self.cell_pixels[0]))
            if asked:
                reply = b"\x1b]7501;?\x1b\\" if self.answers_status and STATUS_QUERY in self.output else b""
                self.write(kitty_reply + reply + b"\x1b[?62;22c")
            elif kitty_reply:
                self.write(kitty_reply)

    def _keyboard_protocol(self) -> bytes:
        """Push and pop what the program asked since last time; its flags for each query."""
        with self._lock:
            written, self._kitty_seen = self.output[self._kitty_seen:], len(self.output)
        replies = b""
        for kind, number in _KITTY_KEYBOARD.findall(written):
            if kind == b">":
                self.kitty_flags.append(int(number or 0))
            elif kind == b"<":
                del self.kitty_flags[-max(1, int(number or 1)):]
            else:
                replies += b"\x1b[?%du" % (self.kitty_flags[-1] if self.kitty_flags else 0)
        return replies

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
