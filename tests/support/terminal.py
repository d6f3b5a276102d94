"""A real terminal for tests: a program runs in a tmux pane of a fixed size; tests type
keys into it and read the screen back (``capture-pane``), waiting for what they expect.

Each terminal has its own tmux server (its own socket), so tests never meet each other
or a user's tmux. A control-mode client (read-only, ignoring its size) tells us each
time the program writes to the pane, so waits look at the screen when it changed
instead of polling it. The program runs under a small shell wrapper that, when it exits,
prints its exit status and the terminal's state (``stty -a``), so a test can check the
terminal was left as it was found.

::

    with Terminal(tmp_path, ["python", "-m", "pi_plugins.cli"], env=..., cwd=...) as term:
        term.wait_for("pi-harness")
        term.type("hello")
        term.press("Enter")
        screen = term.wait_for(lambda s: "Hello!" in s)
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable

EXIT_MARK = "[[exited"
#: The lines of scrollback a pane keeps (a long transcript printed on exit fits).
HISTORY_LINES = 100_000
#: A wait looks at the screen at least this often, in case a change came unannounced.
RECHECK = 0.25
#: Numbers each terminal's socket: a test that closes one terminal and opens the next in
#: the same folder must not reach the first tmux server while it is still shutting down
#: (``kill-server`` returns before the server has gone: "server exited unexpectedly").
_SOCKETS = itertools.count(1)


class TerminalTimeout(AssertionError):
    pass


class Terminal:
    def __init__(self, tmp_path: Path, argv: list[str], *, env: dict[str, str], cwd: Path,
                 width: int = 100, height: int = 40, options: dict[str, str] | None = None) -> None:
        """``options``: tmux's global options set before the program starts (``window-style``
        "bg=#f0f0f0" makes tmux answer a colour query with that background)."""
        self.socket = str(tmp_path / f"tmux-{next(_SOCKETS)}.sock")
        self.width, self.height = width, height
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        program = shlex.join(argv)
        # after the program: its status and the tty's modes, then stay open to be read
        # (a stray Ctrl+C after the program ended must not take the report with it)
        script = (f"trap true INT; cd {shlex.quote(str(cwd))} && env -i {exports} {program}; "
                  f"status=$?; echo; echo \"{EXIT_MARK} $status]] [[tty $(stty -a | tr '\\n' ' ')]]\"; "
                  f"exec sleep 600")
        self._env = {**os.environ, "LANG": "C.UTF-8"}
        # the scrollback's size is the pane's from its start: set before the session is made
        # (set on the session afterwards, it left the pane tmux's default of 2,000 lines)
        more = [word for name, value in (options or {}).items() for word in (";", "set-option", "-g", name, value)]
        self._tmux("-f", "/dev/null", "start-server", ";", "set-option", "-g", "history-limit",
                   str(HISTORY_LINES), *more, ";", "new-session", "-d", "-s", "t", "-x", str(width), "-y", str(height),
                   "sh", "-c", script)
        self._tmux("set-option", "-t", "t", "remain-on-exit", "on")
        self._changed = threading.Condition()
        self._outputs = 0
        self._watching = True
        self._control = subprocess.Popen(
            ["tmux", "-S", self.socket, "-C", "attach-session", "-t", "t", "-f", "ignore-size,read-only"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=self._env)
        self._watcher = threading.Thread(target=self._watch, name="tmux-control", daemon=True)
        self._watcher.start()

    # ------------------------------------------------------------ plumbing

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-S", self.socket, *args], capture_output=True, text=True, timeout=20,
                              env=self._env)
        if done.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def _watch(self) -> None:
        """Count the pane's output notifications (``%output``) of the control client."""
        for line in self._control.stdout:
            if line.startswith((b"%output", b"%extended-output", b"%layout-change", b"%exit")):
                with self._changed:
                    self._outputs += 1
                    self._changed.notify_all()
        with self._changed:
            self._watching = False
            self._changed.notify_all()

    def _wait_until(self, look: Callable[[], str], check: Callable[[str], bool], timeout: float,
                    settle: float = 0.0):
        """``look()`` each time the pane changed until ``check`` holds for what it returns;
        (True, it) or (False, the last look) after ``timeout`` seconds. ``settle``: it must
        still hold once the program has written nothing for that long (a full-screen
        program's frame is written in pieces, and a look can fall between them)."""
        deadline = time.monotonic() + timeout
        while True:
            with self._changed:
                seen = self._outputs
            looked = look()
            if check(looked) and (not settle or self._quiet_for(settle, deadline)):
                looked = look()
                if check(looked):
                    return True, looked
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False, looked
            with self._changed:
                self._changed.wait_for(lambda: self._outputs != seen or not self._watching,
                                       min(remaining, RECHECK))

    def _quiet_for(self, period: float, deadline: float) -> bool:
        """Wait until the pane has had no output for ``period`` seconds (False: not before
        ``deadline``)."""
        while time.monotonic() < deadline:
            with self._changed:
                seen = self._outputs
                self._changed.wait_for(lambda: self._outputs != seen, period)
                if self._outputs == seen:
                    return True
        return False

    def close(self) -> None:
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True, timeout=20, env=self._env)
        self._control.stdin.close()
        try:
            self._control.wait(5)
        except subprocess.TimeoutExpired:
            self._control.kill()
            self._control.wait(5)
        self._watcher.join(5)  # it has read to the end
        self._control.stdout.close()

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
                 history: bool = False, settle: float = 0.0) -> str:
        """The screen once it shows ``expected`` (a text or a test of the screen); with
        ``settle``, once it still does after the program has been quiet that long."""
        check = (lambda s: expected in s) if isinstance(expected, str) else expected
        shown, screen = self._wait_until(lambda: self.screen(history=history), check, timeout, settle)
        if shown:
            return screen
        raise TerminalTimeout(f"the screen did not show {expected!r} within {timeout} s; it shows:\n{screen}")

    def _program_stat(self) -> Path:
        """/proc's stat of the program (Linux: the pane's shell runs it as its child)."""
        shell = self._tmux("display-message", "-p", "-t", "t", "#{pane_pid}").strip()
        [child, *_] = Path(f"/proc/{shell}/task/{shell}/children").read_text().split()
        return Path(f"/proc/{child}/stat")

    def wait_program_idle(self, timeout: float = 120.0, period: float = 1.0) -> float:
        """Wait until the program's main thread has been asleep at every look for
        ``period`` seconds (work it does in the background is done; a process starved of
        the CPU on a loaded machine still counts as busy: it is runnable, not asleep); the
        seconds waited."""
        stat = self._program_stat()
        start = time.monotonic()
        asleep_since = None
        while time.monotonic() - start < timeout:
            state = stat.read_text().rsplit(")", 1)[1].split()[0]
            now = time.monotonic()
            if state not in ("S", "I"):
                asleep_since = None
            elif asleep_since is None:
                asleep_since = now
            elif now - asleep_since >= period:
                return now - start
            time.sleep(0.02)
        raise TerminalTimeout(f"the program was still busy after {timeout} s")

    def wait_for_exit(self, timeout: float = 10.0) -> tuple[int, str]:
        """(exit status, the ``stty -a`` report) once the program has ended."""
        pattern = re.compile(re.escape(EXIT_MARK) + r" (\d+)\]\] \[\[tty (.*?)\]\]", re.S)
        joined_lines = lambda: self._tmux("capture-pane", "-t", "t", "-p", "-J", "-S", "-")  # -J: wrapped lines joined
        ended, joined = self._wait_until(joined_lines, pattern.search, timeout)
        if ended:
            match = pattern.search(joined)
            return int(match.group(1)), match.group(2)
        raise TerminalTimeout(f"the program did not exit within {timeout} s; the screen shows:\n{joined}")
