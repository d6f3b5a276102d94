"""Messages plugins send (``ctx.send_user_message``, ``ctx.send_message``), delivered as
pi does: queued while the agent runs, a run of their own while idle, or held for the
next prompt (``next_turn``)."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from pi_core.loop import AgentBusyError, user_message
from pi_core.protocol.events import InputEvent
from pi_core.protocol.messages import AgentMessage, ImageContent, UserMessage, text_of

if TYPE_CHECKING:
    from pi_core.app.harness import Harness

log = logging.getLogger("pi.harness")


class PluginSends:
    def __init__(self, harness: Harness) -> None:
        self.harness = harness
        #: Messages sent with deliver_as="next_turn": they follow the next prompt.
        self._next_turn: list[AgentMessage] = []
        #: Runs plugins started while the agent was idle.
        self._background: set[asyncio.Future] = set()
        #: What ``agent_settled`` handlers sent: sent once they have all run (pi 1.6).
        self._deferred: list[tuple[Any, dict]] = []

    def take_next_turn(self) -> list[AgentMessage]:
        taken, self._next_turn = self._next_turn, []
        return taken

    async def wait_for_idle(self) -> None:
        """Until the agent has finished, including runs plugins started while it was idle."""
        while True:
            await self.harness.agent.wait_for_idle()
            pending = [t for t in self._background if not t.done()]
            if not pending:
                return
            await asyncio.gather(*pending, return_exceptions=True)

    def send(self, message: Any, *, deliver_as: str = "steer", trigger_turn: bool = False,
             as_prompt: bool = False) -> None:
        """A message from a plugin (see ``ctx.send_user_message`` / ``send_message``).
        A user message goes through the ``input`` chain (``source="extension"``), as pi
        fires ``input`` for every plugin send, whether it starts a run or is queued."""
        h = self.harness
        if h.settling:
            self._deferred.append((message, {"deliver_as": deliver_as, "trigger_turn": trigger_turn,
                                             "as_prompt": as_prompt}))
            return
        deliver_as = {"followUp": "follow_up", "nextTurn": "next_turn"}.get(deliver_as, deliver_as)
        if deliver_as not in ("steer", "follow_up", "next_turn"):
            raise ValueError(f"deliver_as must be steer, follow_up or next_turn, not {deliver_as!r}")
        message = user_message(message) if isinstance(message, str) else (
            UserMessage(content=list(message)) if isinstance(message, list) else message)
        busy = h.is_running
        if deliver_as == "next_turn" and (busy or not trigger_turn):
            self._next_turn.append(message)
            return
        if as_prompt and isinstance(message, UserMessage):
            if not busy:
                self._start(h.prompt(*_text_and_images(message), source="extension"))
            elif h.plugins.has("input"):
                self._start(self._send_prompt(message, deliver_as))
            else:
                h.enqueue(message, deliver_as)  # no input hook to ask: queued at once
            return
        if busy:
            h.enqueue(message, deliver_as)
            return
        # a plugin's own message while idle: into the conversation (and the file) now,
        # with its message events so the chat shows it; trigger_turn answers it
        self._start(self._deliver_idle(message, trigger_turn))

    def send_deferred(self) -> None:
        """Send what ``agent_settled`` handlers sent, once the prompt that settled has let go
        (a task: it runs after the harness is idle)."""
        deferred, self._deferred = self._deferred, []
        if deferred:
            self._start(self._send_all(deferred))

    async def _send_all(self, deferred: list[tuple[Any, dict]]) -> None:
        for message, how in deferred:
            self.send(message, **how)

    async def _send_prompt(self, message: UserMessage, deliver_as: str) -> None:
        """A plugin's user message sent while the agent runs, through ``input``; then
        queued, or (when the run ended meanwhile) the start of the next run."""
        h = self.harness
        text, images = _text_and_images(message)
        event = await h.plugins.call("input", event=InputEvent(text, images, "extension", False, deliver_as),
                                     ctx=h.ctx)
        if event.handled:
            return
        if h.is_running:
            h.enqueue(user_message(event.text, event.images), deliver_as)
        else:
            await h.run_prompt(event.text, event.images)

    async def _deliver_idle(self, message: AgentMessage, trigger_turn: bool) -> None:
        h = self.harness
        if trigger_turn and h.is_running:  # a prompt started meanwhile: the message joins its run
            h.enqueue(message, "steer")
        elif trigger_turn:  # a run of its own, through before_agent_start as pi 1.6's custom trigger
            await h.run_prompt("", [], message=message)
        else:
            await h.agent.deliver(message)

    def _start(self, run) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            run.close()
            raise RuntimeError("a run can start only inside the event loop (from a hook or a command)") from None
        task = loop.create_task(self._guarded(run))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _guarded(self, run) -> None:
        try:
            await run
        except AgentBusyError:  # the user's prompt got there first: queue instead
            log.warning("a plugin's message found the agent busy; it was not sent")
        except Exception as exc:
            self.harness.plugins.report("extension message", "send_user_message", exc)


def _text_and_images(message: UserMessage) -> tuple[str, list]:
    content = message.content
    return text_of(content), [b for b in content if isinstance(b, ImageContent)] if isinstance(content, list) else []
