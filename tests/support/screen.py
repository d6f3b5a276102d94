"""An emulated terminal for running the interactive mode in this process: keys go in
through prompt_toolkit's pipe input, and what the app writes (a real VT100 output) is
played on a pyte screen that tests read, as :class:`support.terminal.Terminal` reads a
tmux pane. It answers cursor-position requests as a terminal does, so prompt_toolkit
draws inline exactly as it would in one.

No process, no tmux: for dialogs, editing and what is drawn. What needs a real terminal
(its modes after exit, signals, resizes) stays with ``Terminal``.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Callable

import pyte
from prompt_toolkit.data_structures import Size
from prompt_toolkit.output.vt100 import Vt100_Output

from support.terminal import TerminalTimeout

#: tmux's key names (what ``Terminal.press`` takes) as the bytes a terminal sends.
KEYS = {"Enter": "\r", "Escape": "\x1b", "Tab": "\t", "BTab": "\x1b[Z", "BSpace": "\x7f",
        "Up": "\x1b[A", "Down": "\x1b[B", "Right": "\x1b[C", "Left": "\x1b[D",
        "Home": "\x1b[H", "End": "\x1b[F", "PageUp": "\x1b[5~", "PageDown": "\x1b[6~",
        "M-Enter": "\x1b\r"}

CURSOR_REQUEST = "\x1b[6n"


def key_bytes(name: str) -> str:
    if name in KEYS:
        return KEYS[name]
    if re.fullmatch(r"C-[a-z@\[\\\]^_]", name):
        return chr(ord(name[2]) & 0x1F)
    if re.fullmatch(r"M-.", name):
        return "\x1b" + name[2]
    raise ValueError(f"no bytes known for the key {name!r}")


class _ScreenStream:
    """The app's stdout: each write is played on the screen; a cursor-position request
    is answered on the input. It says it is a terminal, so prompt_toolkit asks."""

    encoding = "utf-8"

    def __init__(self, terminal: "EmulatedTerminal") -> None:
        self._terminal = terminal

    def write(self, text: str) -> int:
        self._terminal._played(text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True


class EmulatedTerminal:
    """A ``width`` × ``height`` screen and the pipe input feeding an app; ``output`` is
    the prompt_toolkit output to give the app."""

    def __init__(self, pipe_input, width: int = 100, height: int = 40) -> None:
        self.input = pipe_input
        self.width, self.height = width, height
        self._screen = pyte.Screen(width, height)
        self._stream = pyte.Stream(self._screen)
        self._changed = threading.Condition()
        #: Everything the app wrote, as written (control sequences the screen does not show).
        self.written: list[str] = []
        self.output = Vt100_Output(_ScreenStream(self), lambda: Size(rows=self.height, columns=self.width),
                                   term="xterm-256color")

    def _played(self, text: str) -> None:
        with self._changed:
            self.written.append(text)
            self._stream.feed(text.replace("\n", "\r\n"))  # the tty driver's ONLCR
            requests = text.count(CURSOR_REQUEST)
            row, column = self._screen.cursor.y + 1, self._screen.cursor.x + 1
            self._changed.notify_all()
        for _ in range(requests):
            self.input.send_text(f"\x1b[{row};{column}R")

    # ------------------------------------------------------------ input

    def type(self, text: str) -> None:
        """Literal text, as if typed."""
        self.input.send_text(text)

    def press(self, *keys: str) -> None:
        """Named keys in tmux's spelling: Enter, Escape, C-c, M-k, Down…"""
        for key in keys:
            self.input.send_text(key_bytes(key))

    # ------------------------------------------------------------ output

    def screen(self) -> str:
        """The visible screen, lines without trailing blanks (as ``Terminal.screen``)."""
        with self._changed:
            lines = list(self._screen.display)
        return "\n".join(line.rstrip() for line in lines).rstrip("\n") + "\n"

    def wait_for(self, expected: str | Callable[[str], bool], timeout: float = 10.0) -> str:
        """The screen once it shows ``expected`` (a text or a test of the screen),
        looked at after every write the app makes."""
        check = (lambda s: expected in s) if isinstance(expected, str) else expected
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                screen = self.screen()
                if check(screen):
                    return screen
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TerminalTimeout(f"the screen did not show {expected!r} within {timeout} s; "
                                          f"it shows:\n{screen}")
                self._changed.wait(remaining)
