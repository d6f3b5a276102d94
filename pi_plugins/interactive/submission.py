"""What the chat does with what the user sends: a slash command (built-in or a
plugin's), ``!``/``!!`` a shell command, a prompt (or, while the agent works, a steering
message); the runs that follow (a compaction or branch summary too, which Esc stops) and
the working line that says what is going on.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from pi_plugins.interactive import commands as builtin
from pi_plugins.interactive.blocks import BashBlock

if TYPE_CHECKING:
    from pi_plugins.interactive.app import InteractiveApp


async def call_handler(handler, *args) -> Any:
    """A plugin's handler, plain or async."""
    result = handler(*args)
    if asyncio.iscoroutine(result) or isinstance(result, asyncio.Future):
        result = await result
    return result


class Submission:
    def __init__(self, tui: InteractiveApp) -> None:
        self.tui = tui
        self._spinner: asyncio.Task | None = None

    def submit(self, text: str) -> None:
        """What Enter does with the editor's text."""
        tui = self.tui
        stripped = text.strip()
        if stripped.startswith("/"):
            name, _, args = stripped[1:].partition(" ")
            if name in builtin.COMMANDS:
                tui.actions.take_text(remember=False)
                tui.spawn(builtin.COMMANDS[name](tui, args.strip()))
                return
            command = tui.plugin_commands.get(name)
            if command is not None and command.handler is not None:
                tui.actions.take_text()
                tui.spawn(call_handler(command.handler, args.strip(), tui.harness.ctx))
                return
        if stripped.startswith("!") and len(stripped) > 1:
            excluded = stripped.startswith("!!")
            command_line = stripped[2:].strip() if excluded else stripped[1:].strip()
            if command_line:
                if tui.busy == "bash":
                    tui.add_text("A shell command is already running; press Esc to stop it first.", "warning")
                    return
                tui.actions.take_text()
                tui.spawn(self._run_bash(command_line, excluded))
                return
        if tui.busy and tui.busy != "bash":
            tui.add_text(f"Wait for the {tui.busy} to finish (esc cancels it).", "warning")
            return
        tui.actions.take_text()
        if tui.run_task is not None:
            self.queue(stripped, "steer")
            return
        self.start_prompt(stripped, tui.actions.take_pasted_images(stripped))

    def queue(self, text: str, behavior: str) -> None:
        """Queue a message while the agent works (templates expand on the way)."""
        self.tui.spawn(self._queue(text, behavior))
        self.tui.invalidate()

    async def _queue(self, text: str, behavior: str) -> None:
        tui = self.tui
        await tui.harness.queue(text, behavior=behavior)
        if tui.run_task is None and not tui.harness.is_running and tui.harness.ctx.has_pending_messages():
            # the run ended while the message went through the input chain: it runs now
            tui.run_task = tui.spawn(self._run(tui.harness.continue_()))

    def start_prompt(self, text: str, images: list | None = None) -> None:
        self.tui.run_task = self.tui.spawn(self._run(self.tui.harness.prompt(text, images or [], source="interactive")))

    async def _run(self, run) -> None:
        tui = self.tui
        try:
            self.set_working("Working... (esc to interrupt)")
            await run
        finally:
            tui.run_task = None
            self.set_working(None)
            tui.events.settle()

    def set_working(self, label: str | None) -> None:
        """The line under the chat that says what is going on, with a spinner."""
        self.tui.working = label
        if label and (self._spinner is None or self._spinner.done()):
            self._spinner = self.tui.spawn(self._spin())
        self.tui.invalidate()

    async def _spin(self) -> None:
        while self.tui.working:
            self.tui.invalidate()
            await asyncio.sleep(0.1)

    async def _run_bash(self, command: str, excluded: bool) -> None:
        tui = self.tui
        block = tui.add(BashBlock(command, excluded))
        tui.busy = "bash"
        try:
            message = await tui.harness.run_bash(command, exclude_from_context=excluded)
        finally:
            tui.busy = None
        block.finish(message)
        tui.changed()

    async def busy_with(self, what: str, label: str, coroutine) -> Any:
        """Run a compaction or branch summary; Esc aborts it."""
        tui = self.tui
        if tui.run_task is not None:
            tui.add_text(f"Wait for the agent to finish (or press esc) before the {what}.", "warning")
            coroutine.close()
            return None
        tui.busy, tui.busy_aborted = what, False
        self.set_working(label)
        try:
            return await coroutine
        finally:
            tui.busy = None
            self.set_working(None)
