"""A real terminal for tests: a program runs in a tmux pane of a fixed size; tests type
keys into it and read the screen back (``capture-pane``), waiting for what they expect.

Each terminal has its own tmux server (its own socket), so tests never meet each other
or a user's tmux. The program runs under a small shell wrapper that, when it exits,
prints its exit status and the terminal's state (``stty -a``), so a test can check the
terminal was left as it was found.

::

    with Terminal(tmp_path, ["python", "-m", "pi_core.cli"], env=..., cwd=...) as term:
        term.wait_for("pi-harness")
        term.type("hello")
        term.press("Enter")
        screen = term.wait_for(lambda s: "Hello!" in s)
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import time
from pathlib import Path
from typing import Callable

EXIT_MARK = "[[exited"


class TerminalTimeout(AssertionError):
    pass


class Terminal:
    def __init__(self, tmp_path: Path, argv: list[str], *, env: dict[str, str], cwd: Path,
                 width: int = 100, height: int = 40) -> None:
        self.socket = str(tmp_path / "tmux.sock")
        self.width, self.height = width, height
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        program = shlex.join(argv)
        # after the program: its status and the tty's modes, then stay open to be read
        # (a stray Ctrl+C after the program ended must not take the report with it)
        script = (f"trap true INT; cd {shlex.quote(str(cwd))} && env -i {exports} {program}; "
                  f"status=$?; echo; echo \"{EXIT_MARK} $status]] [[tty $(stty -a | tr '\\n' ' ')]]\"; "
                  f"exec sleep 600")
        self._env = {**os.environ, "LANG": "C.UTF-8"}
        self._tmux("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", str(width), "-y", str(height),
                   "sh", "-c", script)
        self._tmux("set-option", "-t", "t", "history-limit", "10000")
        self._tmux("set-option", "-t", "t", "remain-on-exit", "on")

    # ------------------------------------------------------------ plumbing

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-S", self.socket, *args], capture_output=True, text=True, timeout=20,
                              env=self._env)
        if done.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def close(self) -> None:
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True, timeout=20, env=self._env)

    def __enter__(self) -> "Terminal":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------ input

    def type(self, text: str) -> None:
        """Literal text, as if typed."""
        self._tmux("send-keys", "-t", "t", "-l", "--", text)

    def press(self, *keys: str) -> None:
        """Named keys in tmux's spelling: Enter, Escape, C-c, M-Enter, Up, BTab…"""
        for key in keys:
            self._tmux("send-keys", "-t", "t", key)

    def send_raw(self, data: str) -> None:
        """Bytes as the terminal would send them (e.g. "\\x1b\\r" for Alt+Enter)."""
        self._tmux("send-keys", "-t", "t", "-H", *[f"{b:02x}" for b in data.encode()])

    def resize(self, width: int, height: int) -> None:
        self._tmux("resize-window", "-t", "t", "-x", str(width), "-y", str(height))
        self.width, self.height = width, height

    # ------------------------------------------------------------ output

    def screen(self, *, ansi: bool = False, history: bool = False) -> str:
        """The visible screen (or all of the scrollback too), lines without trailing blanks."""
        args = ["capture-pane", "-t", "t", "-p"]
        if ansi:
            args.append("-e")
        if history:
            args += ["-S", "-"]
        text = self._tmux(*args)
        return "\n".join(line.rstrip() for line in text.split("\n")).rstrip("\n") + "\n"

    def cursor_visible(self) -> bool:
        return self._tmux("display-message", "-t", "t", "-p", "#{cursor_flag}").strip() == "1"

    def wait_for(self, expected: str | Callable[[str], bool], timeout: float = 10.0, *,
                 history: bool = False) -> str:
        """Poll the screen until it shows ``expected`` (a text or a test of the screen)."""
        check = (lambda s: expected in s) if isinstance(expected, str) else expected
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen(history=history)
            if check(screen):
                return screen
            time.sleep(0.05)
        raise TerminalTimeout(f"the screen did not show {expected!r} within {timeout} s; it shows:\n{screen}")

    def wait_for_exit(self, timeout: float = 10.0) -> tuple[int, str]:
        """(exit status, the ``stty -a`` report) once the program has ended."""
        pattern = re.compile(re.escape(EXIT_MARK) + r" (\d+)\]\] \[\[tty (.*?)\]\]", re.S)
        deadline = time.monotonic() + timeout
        joined = ""
        while time.monotonic() < deadline:
            joined = self._tmux("capture-pane", "-t", "t", "-p", "-J", "-S", "-")  # -J: wrapped lines joined
            match = pattern.search(joined)
            if match:
                return int(match.group(1)), match.group(2)
            time.sleep(0.05)
        raise TerminalTimeout(f"the program did not exit within {timeout} s; the screen shows:\n{joined}")
