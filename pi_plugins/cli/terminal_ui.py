"""The user interface of the terminal before the chat starts (its own screen does not
exist yet): in a terminal, pi 1.6's selector (:mod:`pi_plugins.interactive.startup_select`);
elsewhere, dialogs as numbered lists and plain lines on stdin and stdout."""

from __future__ import annotations

import asyncio
import sys


class TerminalUI:
    """The terminal before the chat starts: asks with a numbered list (the chat's own
    screen does not exist yet). The ``ui`` of what is asked before any run, the project
    trust question and the dialogs of a ``project_trust`` plugin among it."""

    has_ui = True

    def __init__(self, stdin=None, stdout=None) -> None:
        self.stdin, self.stdout = stdin or sys.stdin, stdout or sys.stdout

    def notify(self, message: str, level: str = "info") -> None:
        print(message, file=sys.stderr)

    def _line(self, prompt: str) -> str | None:
        self.stdout.write(prompt)
        self.stdout.flush()
        line = self.stdin.readline()
        return None if not line else line.strip()

    def _is_terminal(self) -> bool:
        try:
            return self.stdin.isatty() and self.stdout.isatty()
        except (AttributeError, ValueError):
            return False

    async def select(self, title: str, options: list[str], *, timeout: float | None = None) -> str | None:
        if self._is_terminal():  # pi 1.6's selector; a numbered list where keys cannot be read
            from pi_plugins.interactive.startup_select import select

            return await select(title, options)
        text = title + "\n\n" + "".join(f"  {n}. {o}\n" for n, o in enumerate(options, 1))
        self.stdout.write(text)
        while True:
            try:
                answer = await asyncio.to_thread(self._line, f"Choose 1-{len(options)}: ")
            except (KeyboardInterrupt, EOFError):
                return None
            if answer is None or answer == "":
                return None
            if answer.isdigit() and 1 <= int(answer) <= len(options):
                return options[int(answer) - 1]

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None) -> bool:
        return await self.select(f"{title}\n{message}" if message else title, ["Yes", "No"]) == "Yes"

    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None) -> str | None:
        return await asyncio.to_thread(self._line, f"{title} ")
