"""The harness: the agent loop joined to a session and the plugins (pi's AgentSession).

One object over the loop (:class:`pi_core.loop.Agent`), the session and ``ctx``, with
collaborators for session moves, the model, plugins' sends, compacting and the user's
``!cmd``. It takes a prompt through a plugin's ``/command`` or the ``input`` chain,
``before_agent_start`` and the loop, stores every finished message, and gives plugins
the primitives features are built on; the features (compaction's policy, budgets,
retries) are plugins.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import Any

from pi_core.app import session_events, session_stats, user_shell
from pi_core.app.compacting import compact, summarize
from pi_core.app.context_edits import append_context_edit
from pi_core.app.model_choice import ModelChoice, model_default_level
from pi_core.app.plugin_commands import collect, handler_for, run_extension_command
from pi_core.app.plugin_sends import PluginSends
from pi_core.app.session_events import AgentSettled
from pi_core.app.session_moves import SessionMoves
from pi_core.app.ui_prompts import PromptingUI
from pi_core.context import Context
from pi_core.loop import Agent, AgentBusyError, StopRun, user_message
from pi_core.protocol import events
from pi_core.protocol.events import (
    AfterRunEvent,
    BeforeAgentStartEvent,
    CompactionReason,
    ForkPosition,
    InputEvent,
    LeaveReason,
    ModelSource,
    QueueUpdate,
    SessionShutdown,
    SessionStart,
    StartReason,
)
from pi_core.protocol.messages import (
    AgentMessage,
    AssistantMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ImageContent,
    text_of,
)
from pi_core.protocol.model import Model, is_unknown
from pi_core.protocol.signal import AbortSignal
from pi_core.session.store import SessionWriteError

log = logging.getLogger("pi.harness")


class Harness:
    """An agent, a session and the plugins, joined (see the module docstring).

    ``resolve_model(provider, model_id)`` finds a session's model again; ``scoped_models``
    (``--models``, with thinking levels) is what cycling goes through; ``preflight(model)``
    raises to refuse a prompt before its first request (no model, no key).
    """

    def __init__(
        self, *, plugins, session, model: Model, thinking_level: str | None = None,
        model_is_explicit: bool = False, cwd: str | None = None, settings=None, options=None,
        ui: Any = None, agent_dir=None, tools: list | None = None,
        get_api_key: Callable[[Model], Any] | None = None,
        get_headers: Callable[[Model], dict] | None = None,
        get_env: Callable[[Model], dict] | None = None,
        resolve_model: Callable[[str, str], Model | None] | None = None,
        system_prompt: str = "",
        available_models: Callable[[], list[Model]] | None = None,
        scoped_models: list[tuple[Model, str | None]] | None = None,
        preflight: Callable[[Model], Awaitable[None]] | None = None,
        model_registry: Any = None,
        plugin_loader: Callable[[], Any] | None = None,
    ) -> None:
        self.plugins = plugins
        #: What ``before_agent_start`` starts from on every prompt (the system-prompt
        #: plugin builds the whole prompt; without it, this is the prompt).
        self.base_system_prompt = system_prompt
        self.session = session
        self.resolve_model = resolve_model
        self.ctx = Context(cwd=cwd or session.cwd, plugins=plugins, settings=settings,
                           options=options, agent_dir=agent_dir)
        self.ctx.harness = self
        self.set_ui(ui)
        settings = self.ctx.settings
        self.agent = Agent(
            model=model, plugins=plugins, ctx=self.ctx, tools=tools, get_api_key=get_api_key,
            get_headers=get_headers, get_env=get_env,
            thinking_level=thinking_level or model_default_level(settings, model)
            or settings.get("defaultThinkingLevel") or "medium",
            steering_mode=settings.get("steeringMode", "one-at-a-time"),
            follow_up_mode=settings.get("followUpMode", "one-at-a-time"),
        )
        self.models = ModelChoice(self)
        # pi's default level is medium, clamped to what the model takes (off without reasoning)
        self.agent.thinking_level = self.models.clamp_thinking_level(self.agent.thinking_level)
        #: The caller chose the model (``--model``): a resumed session's own does not replace it.
        self.model_is_explicit = model_is_explicit
        self._explicit_thinking = thinking_level is not None
        self.available_models = available_models or (lambda: [self.agent.model])
        self.scoped_models = list(scoped_models or [])
        self.preflight = preflight
        #: The :class:`pi_plugins.models.registry.ModelRegistry` the models come from, if any.
        self.model_registry = model_registry
        #: Builds a fresh plugin manager for /reload (the app knows how its plugins were
        #: found); None: reload keeps the plugins, re-reads resources.
        self.plugin_loader = plugin_loader
        self.moves = SessionMoves(self)
        self.sends = PluginSends(self)
        self._started = self._prompting = self.settling = self.is_compacting = False
        #: The user's ``!cmd`` under way (its signal) and those waiting for the run to end.
        self.bash_signal: AbortSignal | None = None
        self.pending_commands: list = []
        #: Aborted by :meth:`abort`: what a prompt's waits (a retry's, a summary's) stop on.
        self.run_signal: AbortSignal | None = None
        #: The answers of the summary requests under way (their usage goes on their entry).
        self.summary_answers: list[AssistantMessage] = []
        self._published_queue: tuple[list[str], list[str]] = ([], [])
        self._answer_began: float | None = None
        self.agent.subscribe(self._stamp)  # before the message is stored
        self.agent.subscribe(self._persist)
        self.agent.subscribe(self._queue_drained)

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

    def set_ui(self, ui: Any) -> None:
        """Any mode's UI for ``ctx.ui`` (:meth:`wrap_ui`)."""
        self.ctx.ui = ui

    def wrap_ui(self, ui: Any) -> Any:
        """``ui`` with its dialogs announced (``ui_prompt_start`` / ``ui_prompt_end``)."""
        return ui if isinstance(ui, PromptingUI) else PromptingUI(ui, self.plugins, self.ctx)

    def subscribe(self, listener: Callable[[Any], Any]) -> Callable[[], None]:
        """Every agent event and every harness event (compaction, retries, queue…)."""
        return self.agent.subscribe(listener)

    async def emit(self, event: Any) -> None:
        """A session event (queue, compaction, retry): the plugins' hook, then subscribers."""
        await self.agent.emit(event)

    async def notify(self, event: Any) -> None:
        """A lifecycle event (session start, model change…): for the plugins' hooks only,
        as pi keeps them out of its event stream."""
        await self.plugins.call(event.type, event=event, ctx=self.ctx)

    # ------------------------------------------------------------ lifecycle

    async def start(self, reason: StartReason = "startup", previous_session_file: str | None = None) -> None:
        """Load the session's context, model and thinking level; write the opening
        entries of a new session; tell the plugins (``session_start``)."""
        await self.agent.setup()
        fresh = not len(self.session)
        restored = self.session.build_context()
        self.agent.messages = list(restored.messages)
        # the selection (pi 1.6: the latest model_change), else the model that answered last
        ref = restored.selected or restored.model
        if ref is not None and not self.model_is_explicit and self.resolve_model:
            found = self.resolve_model(ref.provider, ref.model_id)
            if found is None and restored.model is not None and ref is not restored.model:
                ref = restored.model  # the selection is gone: pi 1.6 records no change for this
                found = self.resolve_model(ref.provider, ref.model_id)
            if found is not None and found.key != self.agent.model.key:
                previous, self.agent.model = self.agent.model, found
                await self.notify(events.ModelSelect(model=found, previous_model=previous, source="restore"))
        if not fresh and not self._explicit_thinking:
            self.agent.thinking_level = restored.thinking_level
        if not is_unknown(self.model) and (  # nothing to record until a real model is chosen
                ref is None or (ref.provider, ref.model_id) != (self.model.provider, self.model.id)):
            self.session.append_model_change(self.model.provider, self.model.id)
        if fresh or restored.thinking_level != self.thinking_level:
            self.session.append_thinking_level_change(self.thinking_level)
        self._started = True
        await self.notify(SessionStart(reason=reason, previous_session_file=previous_session_file))

    async def close(self, reason: LeaveReason = "quit") -> None:
        """Tell the plugins the session is being left (``reason`` new, resume, fork, quit
        or reload), then release its file."""
        await self.notify(SessionShutdown(reason=reason))
        self.session.close()

    # ------------------------------------------------------------ prompting

    async def prompt(self, text: str, images: Iterable[ImageContent] = (), *, source: str = "interactive",
                     streaming_behavior: str | None = None,
                     on_accepted: Callable[[str], Any] | None = None) -> list[AgentMessage]:
        """Run a prompt to its end, as pi does: a plugin's ``/command`` at once, else
        the ``input`` chain, then the run; while the agent runs, ``streaming_behavior``
        ("steer" or "followUp") queues it, and without one it is refused. ``on_accepted``
        hears pi 1.6's disposition ("handled", "queued", "started") before the run's first event."""
        if not self._started:
            await self.start()
        if text.startswith("/") and await run_extension_command(self, text):
            _call(on_accepted, "handled")
            return []
        behavior = _behavior(streaming_behavior) if self.is_running else None
        event = await self.plugins.call("input", ctx=self.ctx,
                                        event=InputEvent(text, list(images), source, False, behavior))
        if event.handled:
            _call(on_accepted, "handled")
            return []
        if self.is_running:
            if streaming_behavior not in ("steer", "followUp", "follow_up"):
                raise AgentBusyError("Agent is already processing. Specify streamingBehavior "
                                     "('steer' or 'followUp') to queue the message.")
            self.enqueue(user_message(event.text, event.images), streaming_behavior)
            _call(on_accepted, "queued")
            return []
        return await self.run_prompt(event.text, event.images, on_accepted)

    async def run_prompt(self, text: str, images: list, on_accepted=None, *,
                         message: AgentMessage | None = None) -> list[AgentMessage]:
        """Start the run for an accepted prompt (or a plugin's ``message`` that triggers a
        turn, pi 1.6's custom trigger): the preflight, ``before_agent_start``, the loop."""
        self._prompting = True
        try:
            if self.preflight is not None:
                await self.preflight(self.model)
            start = await self.plugins.call(
                "before_agent_start", ctx=self.ctx,
                event=BeforeAgentStartEvent(prompt=text, images=list(images),
                                            system_prompt=self.base_system_prompt, message=message))
            self.agent.system_prompt = start.system_prompt
            first = message if message is not None else user_message(start.prompt, start.images)
            prompts = [*start.before_prompt, first, *start.messages, *self.sends.take_next_turn()]
            _call(on_accepted, "started")
            return await self.run(self.agent.prompt(prompts))
        finally:
            self._prompting = False

    async def queue(self, text: str, images: Iterable[ImageContent] = (), *,
                    behavior: str = "steer", source: str = "interactive") -> str:
        """Queue a message as steering or a follow-up, through the ``input`` chain (not a
        ``/command``); pi 1.6's disposition: "handled" or "queued"."""
        if text.startswith("/"):
            name = text[1:].split(" ", 1)[0]
            if await handler_for(self, name) is not None:
                raise ValueError(f'Extension command "/{name}" cannot be queued. Use prompt '
                                 "or run the command when the agent is not streaming.")
        event = await self.plugins.call("input", ctx=self.ctx, event=InputEvent(
            text, list(images), source, False, _behavior(behavior) or "follow_up"))
        if event.handled:
            return "handled"
        self.enqueue(user_message(event.text, event.images), behavior)
        return "queued"

    def enqueue(self, message: AgentMessage, behavior: str) -> None:
        if behavior == "steer":
            self.steer(message)
        else:
            self.follow_up(message)

    async def continue_(self) -> list[AgentMessage]:
        return await self.run(self.agent.continue_())

    async def run(self, run: Awaitable[list[AgentMessage]]) -> list[AgentMessage]:
        """Await a run of the loop; then run on while an ``after_agent_run`` plugin asks
        (the failed answer left out of the context, as pi's retries do; it stays in the
        file) or messages were queued as it ended. Then the user's commands join and
        ``agent_settled`` closes the prompt; what was queued as it settled runs on."""
        signal = self.run_signal = AbortSignal()
        try:
            produced = list(await run)
            continued = 0
            while not signal.aborted:
                event = AfterRunEvent(messages=produced, continued=continued, signal=signal)
                decision = await self.plugins.call("after_agent_run", event=event, ctx=self.ctx)
                if signal.aborted:
                    break
                if decision is not None and decision.run_again:
                    last = self.agent.messages[-1] if self.agent.messages else None
                    if isinstance(last, AssistantMessage) and last.stop_reason == "error":
                        self.agent.messages.pop()
                    continued += 1
                elif self.ctx.has_pending_messages() or await self.plugins.call("run_settling", event=AfterRunEvent(
                        messages=produced, signal=signal), ctx=self.ctx):  # pi 1.6's agent_before_settle (settle_boundary)
                    continued = 0  # a turn for what was queued or a plugin asked for, not a retry
                else:
                    break
                produced += await self.agent.continue_()
        finally:
            self.run_signal = None
        user_shell.flush_user_commands(self)
        last = next((m for m in reversed(produced) if isinstance(m, AssistantMessage)), None)
        aborted = last is not None and last.stop_reason == "aborted"
        self.settling = True  # pi 1.6: what agent_settled's handlers send starts after them
        try:
            await self.emit(AgentSettled(aborted=aborted))
        finally:
            self.settling = False
            self.sends.send_deferred()
        if self.ctx.has_pending_messages() and not (aborted or signal.aborted):
            produced += await self.run(self.agent.continue_())  # queued while it settled
        return produced

    def abort(self) -> None:
        """Stop whatever runs: the stream, the tools, a retry's wait, a summary."""
        if self.run_signal is not None:
            self.run_signal.abort()
        self.agent.abort()

    @contextlib.contextmanager
    def abortable(self) -> Iterator[AbortSignal]:
        """The signal :meth:`abort` stops: the run's, or inside this block (a summary
        asked for between runs) one of its own."""
        outer = self.run_signal
        self.run_signal = outer or AbortSignal()
        try:
            yield self.run_signal
        finally:
            self.run_signal = outer

    async def wait_for_idle(self) -> None:
        """Until the agent has finished, including runs plugins started while it was idle."""
        await self.sends.wait_for_idle()

    # ------------------------------------------------------------ the queues

    def steer(self, message: str | AgentMessage) -> None:
        self.agent.steer(message)
        self._queue_changed()

    def follow_up(self, message: str | AgentMessage) -> None:
        self.agent.follow_up(message)
        self._queue_changed()

    def clear_queues(self) -> tuple[list, list]:
        cleared = self.agent.clear_queues()
        self._queue_changed()
        return cleared

    def _queue_changed(self) -> None:
        _soon(self._publish_queue())  # outside the event loop, the next drain tells

    async def _queue_drained(self, event: Any) -> None:
        """The loop took queued messages (one goes in as a user message): tell
        subscribers the queues' new state, as pi does."""
        if event.type == "message_start" and getattr(event.message, "role", None) == "user":
            await self._publish_queue()

    async def _publish_queue(self) -> None:
        """A ``queue_update`` when the queues differ from the last one sent."""
        state = ([_text(m) for m in self.agent.steering.messages],
                 [_text(m) for m in self.agent.follow_up_queue.messages])
        if state == self._published_queue:
            return
        self._published_queue = state
        await self.emit(QueueUpdate(steering=state[0], follow_up=state[1]))

    # ------------------------------------------------------------ plugins' commands and sends

    async def commands(self) -> list:
        """Slash commands from the plugins (:func:`pi_core.app.plugin_commands.collect`)."""
        return await collect(self.plugins, self.ctx)

    def send(self, message: Any, *, deliver_as: str = "steer", trigger_turn: bool = False,
             as_prompt: bool = False) -> None:
        """A message from a plugin (see :meth:`PluginSends.send`)."""
        self.sends.send(message, deliver_as=deliver_as, trigger_turn=trigger_turn, as_prompt=as_prompt)

    # ------------------------------------------------------------ tools at run time

    def register_tool(self, tool) -> None:
        from pi_core.protocol.tools import Tool

        if not isinstance(tool, Tool):
            raise TypeError(f"register_tool takes a pi_core.Tool, not {type(tool).__name__}")
        self.agent.add_tool(tool)

    def unregister_tool(self, name: str) -> bool:
        return self.agent.remove_tool(name)

    # ------------------------------------------------------------ summaries and compaction

    async def summarize(self, system_prompt: str, text: str, max_tokens: int) -> str:
        """One request to the current model for a summary (:func:`pi_core.app.compacting.summarize`)."""
        return await summarize(self, system_prompt, text, max_tokens)

    async def compact(self, instructions: str | None = None, *, reason: CompactionReason = "manual",
                      will_retry: bool = False):
        """Compact the branch (:func:`pi_core.app.compacting.compact`)."""
        return await compact(self, instructions, reason=reason, will_retry=will_retry)

    def append_context_edit(self, target_id: str, replacement: dict | None):
        """pi 1.6's context edit (:func:`pi_core.app.context_edits.append_context_edit`),
        the context rebuilt with it, then ``entry_appended`` soon after (pi 1.6)."""
        entry = append_context_edit(self.session, target_id, replacement)
        self.agent.messages = list(self.session.build_context().messages)
        _soon(self.emit(session_events.EntryAppended(entry=entry)))
        return entry

    # ------------------------------------------------------------ leaving, the tree, reload

    async def new_session(self, parent_session: str | None = None) -> bool:
        return await self.moves.new_session(parent_session)

    async def switch_session(self, path: str) -> bool:
        return await self.moves.switch_session(path)

    def fork_messages(self) -> list[tuple[str, str]]:
        return self.moves.fork_messages()

    async def fork(self, entry_id: str, position: ForkPosition = "before") -> tuple[str, bool]:
        return await self.moves.fork(entry_id, position)

    async def clone(self) -> bool:
        return await self.moves.clone()

    async def navigate_tree(self, target_id: str | None, *, summarize: bool = False,
                            instructions: str | None = None) -> bool:
        return await self.moves.navigate_tree(target_id, summarize=summarize, instructions=instructions)

    async def reload(self) -> None:
        await self.moves.reload()

    async def run_bash(self, command: str, *, exclude_from_context: bool = False, on_output: Any = None):
        """The user's ``!cmd`` (:func:`pi_core.app.user_shell.run_user_command`)."""
        return await user_shell.run_user_command(self, command, exclude_from_context=exclude_from_context,
                                                 on_output=on_output)

    def abort_bash(self) -> None:
        """Stop the user's running command and everything it started."""
        user_shell.abort_user_command(self)

    # ------------------------------------------------------------ model and thinking level

    async def set_model(self, model: Model, source: ModelSource = "set", persist: bool = False) -> None:
        await self.models.set_model(model, source, persist)

    async def set_thinking_level(self, level: str) -> None:
        await self.models.set_thinking_level(level)

    def thinking_levels(self) -> list[str]:
        return self.models.thinking_levels()

    async def cycle_model(self, step: int = 1) -> tuple[Model, str, bool] | None:
        return await self.models.cycle_model(step)

    async def cycle_thinking_level(self) -> str | None:
        return await self.models.cycle_thinking_level()

    def register_provider(self, name: str, config: dict) -> None:
        self.models.register_provider(name, config)

    async def spawn(self, **kwargs: Any) -> Harness:
        """A child agent (:func:`pi_core.app.assembly.spawn_child`)."""
        from pi_core.app.assembly import spawn_child

        return await spawn_child(self, **kwargs)

    def unregister_provider(self, name: str) -> bool:
        return self.models.unregister_provider(name)

    # ------------------------------------------------------------ workspace checkpoints

    async def checkpointer(self):
        """The ``workspace_checkpoints`` plugin; :class:`LookupError` says why none."""
        found = await self.plugins.call("workspace_checkpoints", ctx=self.ctx)
        if found is None or isinstance(found, str):
            raise LookupError(found or "no checkpoints plugin is loaded")
        return found

    async def checkpoints(self) -> list:
        """The session's checkpoints (entry id, timestamp, changed files), oldest first."""
        return (await self.checkpointer()).list()

    async def restore_checkpoint(self, entry_id: str):
        """Put the workspace back as it was at ``entry_id`` (the checkpoint plugin's)."""
        return await (await self.checkpointer()).restore(entry_id)

    # ------------------------------------------------------------ the session's name, stats

    async def set_session_name(self, name: str) -> None:
        """Name the session (``/name``, RPC ``set_session_name``) and say so:
        ``session_info_changed`` to the plugins and the event stream (pi 1.6)."""
        self.session.append_session_info(name)
        await self.emit(session_events.SessionInfoChanged(name=self.session.name))

    def name_session(self, name: str) -> None:
        """:meth:`set_session_name` from outside a coroutine (``ctx.set_session_name``):
        the event follows soon, where an event loop runs (without one, nobody listens)."""
        self.session.append_session_info(name)
        _soon(self.emit(session_events.SessionInfoChanged(name=self.session.name)))

    def append_entry(self, custom_type: str, data: Any = None) -> Any:
        """A plugin's custom entry (``ctx.append_entry``), then ``entry_appended`` on the
        event stream soon after (pi 1.6), where an event loop runs."""
        entry = self.session.append_custom(custom_type, data)
        _soon(self.emit(session_events.EntryAppended(entry=entry)))
        return entry

    def stats(self) -> dict:
        """pi's ``get_session_stats`` (:func:`pi_core.app.session_stats.session_stats`)."""
        return session_stats.session_stats(self)

    # ------------------------------------------------------------ what every message gets

    def _stamp(self, event: Any) -> None:
        """pi 1.6's ``durationMs`` (from the first event) and ``thinkingLevel`` on a finished answer."""
        message = getattr(event, "message", None)
        if not isinstance(message, AssistantMessage):
            return
        if event.type == "message_start":
            self._answer_began = time.monotonic()
        elif event.type == "message_end":
            extra = message.extra
            if self._answer_began is not None:
                extra.setdefault("durationMs", round((time.monotonic() - self._answer_began) * 1000))
                self._answer_began = None
            extra.setdefault("thinkingLevel", self.thinking_level)

    def _persist(self, event: Any) -> None:
        if event.type != "message_end":
            return
        message = event.message
        if isinstance(message, (CompactionSummaryMessage, BranchSummaryMessage)):
            return
        try:
            if isinstance(message, CustomMessage):
                self.session.append_custom_message(message.custom_type, message.content,
                                                   message.display, message.details)
            else:
                self.session.append_message(message)
        except SessionWriteError as exc:  # the run must not carry on as if it were kept
            raise StopRun(str(exc)) from exc


def _soon(coroutine: Any) -> None:
    """Run ``coroutine`` in the running event loop, unawaited; none running: drop it."""
    try:
        task = asyncio.get_running_loop().create_task(coroutine)
    except RuntimeError:
        coroutine.close()
        return
    task.add_done_callback(lambda t: t.exception())


def _behavior(value: str | None) -> str | None:
    """pi's ``streamingBehavior`` in Python spelling: "steer" or "follow_up" (None: neither)."""
    return {"steer": "steer", "followUp": "follow_up", "follow_up": "follow_up"}.get(value or "")


def _call(callback: Callable[[str], Any] | None, disposition: str) -> None:
    if callback is not None:
        callback(disposition)


def _text(message: Any) -> str:
    content = getattr(message, "content", "")
    return text_of(content) if isinstance(content, (str, list)) else str(content)
