"""The harness: the agent loop joined to a session and the plugins.

It takes a prompt through the ``input`` chain, then ``before_agent_start`` (which builds
the system prompt), then the loop; it stores every finished message in the session and
restores model, thinking level and context from it; it queues steering and follow-ups,
including what plugins send. Plugins reach it through ``ctx``
(:class:`~pi_core.context.HarnessContext`). The application's features on top (retries
and compaction, summaries and tree navigation, model cycling, stats, the user's
``!bash``, commands, switching sessions) are pi's AgentSession:
:class:`pi_core.app.agent_session.AgentSession`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pi_core.context import HarnessContext
from pi_core.loop import Agent, AgentBusyError, user_message
from pi_core.protocol.events import (
    BeforeAgentStartEvent,
    InputEvent,
    ModelSelect,
    SessionShutdown,
    SessionStart,
)
from pi_core.protocol.messages import (
    AgentMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ImageContent,
)
from pi_core.protocol.model import Model, is_unknown


class Harness:
    """An agent, a session and the plugins, joined.

    ``resolve_model(provider, model_id)`` finds a model by name (for restoring a
    session's model); ``get_api_key(model)`` gives its key. ``model_is_explicit`` says the
    caller chose ``model`` (the CLI's ``--model``), so a resumed session's own model does
    not replace it.
    """

    #: The class of ``ctx`` (the app's adds session control and processes).
    context_class = HarnessContext

    def __init__(
        self,
        *,
        plugins,
        session,
        model: Model,
        thinking_level: str | None = None,
        model_is_explicit: bool = False,
        cwd: str | None = None,
        settings=None,
        options=None,
        ui: Any = None,
        agent_dir=None,
        tools: list | None = None,
        get_api_key: Callable[[Model], Any] | None = None,
        get_headers: Callable[[Model], dict] | None = None,
        resolve_model: Callable[[str, str], Model | None] | None = None,
        system_prompt: str = "",
    ) -> None:
        self.plugins = plugins
        #: What ``before_agent_start`` starts from on every prompt (the system-prompt
        #: plugin builds the whole prompt; without it, this is the prompt).
        self.base_system_prompt = system_prompt
        self.session = session
        self.resolve_model = resolve_model
        self.ctx = self.context_class(cwd=cwd or session.cwd, plugins=plugins, ui=ui,
                                      settings=settings, options=options, agent_dir=agent_dir)
        self.ctx.harness = self
        settings = self.ctx.settings
        self.agent = Agent(
            model=model, plugins=plugins, ctx=self.ctx, tools=tools, get_api_key=get_api_key,
            get_headers=get_headers,
            thinking_level=thinking_level or settings.get("defaultThinkingLevel") or "medium",
            steering_mode=settings.get("steeringMode", "one-at-a-time"),
            follow_up_mode=settings.get("followUpMode", "one-at-a-time"),
        )
        self._explicit_model = model_is_explicit
        self._explicit_thinking = thinking_level is not None
        self._started = False
        self._prompting = False
        #: Messages plugins sent with deliver_as="next_turn" (the app's ``send``): they
        #: follow the next prompt.
        self._next_turn: list[AgentMessage] = []
        self.agent.subscribe(self._persist)

    # ------------------------------------------------------------ state

    @property
    def model(self) -> Model:
        return self.agent.model

    @property
    def thinking_level(self) -> str:
        return self.agent.thinking_level

    @property
    def messages(self) -> list[AgentMessage]:
        return self.agent.messages

    @property
    def is_running(self) -> bool:
        """A prompt is under way: the loop runs, or a retry waits, or it is starting."""
        return self._prompting or self.agent.is_running

    def subscribe(self, listener: Callable[[Any], Any]) -> Callable[[], None]:
        """Every agent event and every harness event (compaction, retries, queue…)."""
        return self.agent.subscribe(listener)

    async def emit(self, event: Any) -> None:
        """A session event (queue, compaction, retry): the plugins' hook, then subscribers."""
        await self.agent.emit(event)

    async def notify(self, event: Any) -> None:
        """A lifecycle event (session start and shutdown, model and thinking changes, tree
        moves): for the plugins' hooks only, as pi keeps them out of its event stream."""
        await self.plugins.call(event.type, event=event, ctx=self.ctx)

    # ------------------------------------------------------------ lifecycle

    async def start(self, reason: str = "startup", previous_session_file: str | None = None) -> None:
        """Load the session's context, model and thinking level; write the opening
        entries of a new session; tell the plugins (``session_start``)."""
        await self.agent.setup()
        fresh = not len(self.session)
        restored = self.session.build_context()
        self.agent.messages = list(restored.messages)
        if restored.model is not None and not self._explicit_model and self.resolve_model:
            found = self.resolve_model(restored.model.provider, restored.model.model_id)
            if found is not None and found.key != self.agent.model.key:
                previous, self.agent.model = self.agent.model, found
                await self.notify(ModelSelect(model=found, previous_model=previous, source="restore"))
        if not fresh and not self._explicit_thinking:
            self.agent.thinking_level = restored.thinking_level
        ref = restored.model
        if is_unknown(self.model):
            pass  # nothing to record until a real model is chosen
        elif ref is None or (ref.provider, ref.model_id) != (self.model.provider, self.model.id):
            self.session.append_model_change(self.model.provider, self.model.id)
        if fresh or restored.thinking_level != self.thinking_level:
            self.session.append_thinking_level_change(self.thinking_level)
        self._started = True
        await self.notify(SessionStart(reason=reason, previous_session_file=previous_session_file))

    async def close(self, reason: str = "quit") -> None:
        """Tell the plugins the session is being left (``reason`` new, resume, fork, quit
        or reload), then release its file."""
        await self.notify(SessionShutdown(reason=reason))
        self.session.close()

    # ------------------------------------------------------------ prompting

    async def prompt(
        self,
        text: str,
        images: Iterable[ImageContent] = (),
        *,
        source: str = "interactive",
        streaming_behavior: str | None = None,
        on_accepted: Callable[[str], Any] | None = None,
    ) -> list[AgentMessage]:
        """Run a prompt to its end (with the app's retries and overflow recovery).

        As pi does: the ``input`` chain (where skills and templates expand; the app runs
        a plugin's ``/command`` before it); while the agent runs, ``streaming_behavior`` "steer" or "followUp" queues the result, and
        without one the prompt is refused. ``on_accepted`` is called once the prompt is
        accepted, with how (pi 1.6's disposition: "handled", "queued" or "started"), so a
        caller such as the RPC mode can answer before the run's first event.
        """
        if not self._started:
            await self.start()
        event = await self.plugins.call("input", event=InputEvent(text, list(images), source), ctx=self.ctx)
        if event.handled:
            _call(on_accepted, "handled")
            return []
        if self.is_running:
            if streaming_behavior not in ("steer", "followUp", "follow_up"):
                raise AgentBusyError("Agent is already processing. Specify streamingBehavior "
                                     "('steer' or 'followUp') to queue the message.")
            self._enqueue(user_message(event.text, event.images), streaming_behavior)
            _call(on_accepted, "queued")
            return []
        return await self._run_prompt(event.text, event.images, on_accepted)

    async def _run_prompt(self, text: str, images: list, on_accepted=None) -> list[AgentMessage]:
        """Start the run for an accepted prompt: ``before_agent_start``, then the loop."""
        self._prompting = True
        try:
            start = await self.plugins.call(
                "before_agent_start", ctx=self.ctx,
                event=BeforeAgentStartEvent(prompt=text, images=list(images),
                                            system_prompt=self.base_system_prompt))
            self.agent.system_prompt = start.system_prompt
            later, self._next_turn = self._next_turn, []
            prompts = [user_message(start.prompt, start.images), *start.messages, *later]
            _call(on_accepted, "started")
            return await self._run(self.agent.prompt(prompts))
        finally:
            self._prompting = False

    def _enqueue(self, message: AgentMessage, behavior: str) -> None:
        if behavior == "steer":
            self.steer(message)
        else:
            self.follow_up(message)

    async def continue_(self) -> list[AgentMessage]:
        return await self._run(self.agent.continue_())

    async def _run(self, run) -> list[AgentMessage]:
        """Await a run of the loop. The core stops at a failed request; the app's
        AgentSession retries and compacts on an overflow, as pi's does."""
        return list(await run)

    def steer(self, message: str | AgentMessage) -> None:
        self.agent.steer(message)

    def follow_up(self, message: str | AgentMessage) -> None:
        self.agent.follow_up(message)

    def clear_queues(self) -> tuple[list, list]:
        return self.agent.clear_queues()

    def abort(self) -> None:
        """Stop whatever runs: the stream and the tools."""
        self.agent.abort()

    async def wait_for_idle(self) -> None:
        """Until the agent has finished."""
        await self.agent.wait_for_idle()

    # ------------------------------------------------------------ tools at run time

    def register_tool(self, tool) -> None:
        from pi_core.protocol.tools import Tool

        if not isinstance(tool, Tool):
            raise TypeError(f"register_tool takes a pi_core.Tool, not {type(tool).__name__}")
        tools = [t for t in (self.agent.tools or []) if t.name != tool.name]
        tools.append(tool)
        self.agent.tools = tools
        if self.agent._active is not None and tool.default_active:
            self.agent._active.add(tool.name)

    def unregister_tool(self, name: str) -> bool:
        tools = self.agent.tools or []
        kept = [t for t in tools if t.name != name]
        self.agent.tools = kept
        if self.agent._active is not None:
            self.agent._active.discard(name)
        return len(kept) != len(tools)

    # ------------------------------------------------------------ persistence

    def _persist(self, event: Any) -> None:
        if event.type != "message_end":
            return
        message = event.message
        if isinstance(message, (CompactionSummaryMessage, BranchSummaryMessage)):
            return
        if isinstance(message, CustomMessage):
            self.session.append_custom_message(message.custom_type, message.content,
                                               message.display, message.details)
        else:
            self.session.append_message(message)


def _call(callback: Callable[[str], Any] | None, disposition: str) -> None:
    if callback is not None:
        callback(disposition)
