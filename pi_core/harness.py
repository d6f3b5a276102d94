"""The harness (pi's AgentSession): the agent loop joined to a session and the plugins.

It takes a prompt through the ``input`` chain (where skills and templates expand), then
``before_agent_start`` (which builds the system prompt), then the loop; it stores every
finished message in the session and restores model, thinking level and context from it;
it retries retryable provider failures with backoff, compacts on context overflow and
retries once; it runs compaction and tree navigation through their decide hooks, so a
plugin can cancel them or supply the summary. Plugins reach all of it through ``ctx``
(:class:`HarnessContext`).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from typing import Any, Callable, Iterable

import attrs

from pi_core.context import PluginContext
from pi_core.protocol.events import (
    AutoRetryEnd,
    AutoRetryStart,
    BeforeAgentStartEvent,
    BeforeCompactEvent,
    BeforeTreeEvent,
    CompactionEnd,
    CompactionResult,
    CompactionStart,
    InputEvent,
    ModelSelect,
    QueueUpdate,
    SessionCompactEvent,
    SessionShutdown,
    SessionStart,
    ForkEvent,
    SessionTreeEvent,
    SwitchEvent,
    ThinkingLevelChanged,
    ThinkingLevelSelect,
    UserBashEvent,
)
from pi_core.loop import Agent, AgentBusyError, user_message
from pi_core.protocol.messages import (
    AgentMessage,
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ImageContent,
    TextContent,
    UserMessage,
    text_of,
)
from pi_core.protocol.model import Model, is_unknown
from pi_core.protocol.provider import LlmContext, StreamOptions, complete
from pi_core.plugins import flag
from pi_core.protocol.signal import AbortSignal

log = logging.getLogger("pi.harness")


THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")


class MissingAuthError(RuntimeError):
    """No model, or no key for the model: the prompt stops before any request."""


class SummaryError(RuntimeError):
    """The model could not write a summary (its error is in the message)."""


@attrs.define
class ExecResult:
    """What ``ctx.exec`` gives: stdout and stderr (each its tail within 2,000 lines or
    50 KB; the whole stdout in ``full_output_path`` when cut), the exit code (None when
    killed on timeout or abort)."""

    stdout: str
    stderr: str
    code: int | None
    killed: bool = False
    truncated: bool = False
    full_output_path: str | None = None


@attrs.define
class SessionControl:
    """What a session-control call on ``ctx`` did: ``cancelled`` when a plugin said no
    (``session_before_*``); ``text`` is the forked user message's, for ``fork``."""

    cancelled: bool = False
    text: str | None = None


class HarnessContext(PluginContext):
    """``ctx`` once a harness runs: the core's context plus the session and the
    harness's operations (compact, model and thinking level, entries, names, labels)."""

    harness: "Harness"

    @property
    def session(self):
        return self.harness.session

    @property
    def session_id(self) -> str | None:
        return self.harness.session.id if self.harness.session is not None else None

    def append_entry(self, custom_type: str, data: Any = None):
        """Keep plugin state in the session (a ``custom`` entry, never sent to the model)."""
        return self.harness.session.append_custom(custom_type, data)

    def send_user_message(self, content: Any, deliver_as: str = "steer",
                          trigger_turn: bool = False) -> None:
        """Send the model a user message (text or content blocks), pi's ``sendUserMessage``.

        While the agent runs, ``steer`` reaches it before its next request and
        ``follow_up`` when the run would otherwise end. While it is idle the message
        starts a run at once (through the ``input`` chain, ``source="extension"``).
        ``next_turn`` waits for the user's next prompt and goes in after its user
        message, unless ``trigger_turn`` starts the run now."""
        self.harness.send(content, deliver_as=deliver_as, trigger_turn=trigger_turn, as_prompt=True)

    def send_message(self, message: Any, deliver_as: str = "steer", trigger_turn: bool = False,
                     display: bool | None = None) -> None:
        """Put a plugin's message into the conversation (a :class:`CustomMessage`, or
        text made into one of type ``"extension"``), pi's ``sendMessage``. While the agent
        runs: ``steer``, ``follow_up`` or ``next_turn``. While it is idle the message joins
        the conversation and the session; ``trigger_turn`` then starts a run to answer it.
        ``display=False`` keeps it out of the chat's view (the model still reads it)."""
        if not isinstance(message, CustomMessage) and not hasattr(message, "role"):
            message = CustomMessage(custom_type="extension", content=str(message))
        if display is not None and isinstance(message, CustomMessage):
            message = attrs.evolve(message, display=display)
        self.harness.send(message, deliver_as=deliver_as, trigger_turn=trigger_turn, as_prompt=False)

    # ------------------------------------------------ session control (from commands)

    async def wait_for_idle(self) -> "SessionControl":
        """Wait until the agent (and any run a plugin started) has finished."""
        await self.harness.wait_for_idle()
        return SessionControl(cancelled=False)

    async def new_session(self, parent_session: str | None = None) -> "SessionControl":
        return SessionControl(cancelled=not await self.harness.new_session(parent_session))

    async def fork(self, entry_id: str, position: str = "before") -> "SessionControl":
        """A new session from this one: ending just ``before`` the user message
        ``entry_id`` (its text is in ``.text``, as /fork puts it in the editor) or ``at``
        (including) any entry."""
        text, cancelled = await self.harness.fork(entry_id, position=position)
        return SessionControl(cancelled=cancelled, text=text)

    async def navigate_tree(self, entry_id: str | None, summarize: bool = False) -> "SessionControl":
        return SessionControl(cancelled=not await self.harness.navigate_tree(entry_id, summarize=summarize))

    async def switch_session(self, path: str) -> "SessionControl":
        return SessionControl(cancelled=not await self.harness.switch_session(path))

    async def reload(self) -> "SessionControl":
        """pi's /reload: plugins, skills, templates and context files found again."""
        await self.harness.reload()
        return SessionControl(cancelled=False)

    # ------------------------------------------------ tools at run time

    def register_tool(self, tool) -> None:
        """Add (or replace, by name) a tool now; the model is offered it from its next
        request on, without a reload (pi's ``registerTool`` after start-up)."""
        self.harness.register_tool(tool)

    def unregister_tool(self, name: str) -> bool:
        """Take a tool away now; False when there was none of that name."""
        return self.harness.unregister_tool(name)

    def set_session_name(self, name: str) -> None:
        self.harness.session.append_session_info(name)

    def set_label(self, entry_id: str, label: str | None) -> None:
        self.harness.session.append_label(entry_id, label)

    async def set_model(self, model: Model) -> None:
        await self.harness.set_model(model)

    async def set_thinking_level(self, level: str) -> None:
        await self.harness.set_thinking_level(level)

    async def compact(self, instructions: str | None = None, *, reason: str = "manual"):
        return await self.harness.compact(instructions, reason=reason)

    async def summarize(self, system_prompt: str, text: str, max_tokens: int) -> str:
        return await self.harness.summarize(system_prompt, text, max_tokens)

    async def environment(self):
        """The execution environment commands run in (the ``execution_environment``
        hook's answer: the local machine, unless a plugin supplies a sandbox or such)."""
        env = await self.plugins.decide("execution_environment", ctx=self)
        if env is None:
            raise RuntimeError("no plugin provides an execution environment to run commands "
                               "in (the built-in local_environment plugin does)")
        return env

    async def exec(self, command: list[str] | str, *, timeout: float | None = None,
                   cwd: str | None = None, signal: AbortSignal | None = None) -> ExecResult:
        """Run a command through the execution environment (the one runner the bash
        tool uses): a list runs as is, a string with the shell. On timeout, abort or
        cancellation the command and everything it started are killed."""
        env = await self.environment()
        result = await env.run(command, cwd=cwd or self.cwd, timeout=timeout, signal=signal,
                               merge_stderr=False, prefix="pi-exec")
        return ExecResult(result.output, result.stderr, result.exit_code, result.killed,
                          result.truncated, result.full_output_path)


class Harness:
    """An agent, a session and the plugins, joined.

    ``resolve_model(provider, model_id)`` finds a model by name (for restoring a
    session's model); ``get_api_key(model)`` gives its key. ``model_is_explicit`` says the
    caller chose ``model`` (the CLI's ``--model``), so a resumed session's own model does
    not replace it.
    """

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
        available_models: Callable[[], list[Model]] | None = None,
        scoped_models: list[tuple[Model, str | None]] | None = None,
        auth_problem: Callable[[Model], str | None] | None = None,
    ) -> None:
        self.plugins = plugins
        #: Why a request to a model cannot be made (no model, no key), or None.
        self.auth_problem = auth_problem
        #: All models the user could switch to (the registry's, with keys).
        self.available_models = available_models or (lambda: [self.agent.model])
        #: ``--models`` / ``enabledModels``: what cycling goes through, with thinking levels.
        self.scoped_models = list(scoped_models or [])
        #: What ``before_agent_start`` starts from on every prompt (the system-prompt
        #: plugin builds the whole prompt; without it, this is the prompt).
        self.base_system_prompt = system_prompt
        self.session = session
        self.resolve_model = resolve_model
        self.ctx = HarnessContext(cwd=cwd or session.cwd, plugins=plugins, ui=ui,
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
        # pi's default level is medium, clamped to what the model takes (off without reasoning)
        self.agent.thinking_level = self.clamp_thinking_level(self.agent.thinking_level)
        self._explicit_model = model_is_explicit
        self._explicit_thinking = thinking_level is not None
        self.auto_compaction = bool(settings.get("compaction.enabled", True))
        self.auto_retry = bool(settings.get("retry.enabled", True))
        self.max_retries = int(settings.get("retry.maxRetries", 3))
        self.base_delay_ms = int(settings.get("retry.baseDelayMs", 2000))
        self.max_retry_delay_ms = int(settings.get("retry.provider.maxRetryDelayMs", 60000))
        self._retry_cancel: asyncio.Event | None = None
        self._summary_signal: AbortSignal | None = None
        self._bash_signal: AbortSignal | None = None
        self._pending_bash: list = []
        self.is_compacting = False
        self._started = False
        self._prompting = False
        self._published_queue: tuple[list[str], list[str]] = ([], [])
        #: Messages plugins sent with deliver_as="next_turn": they follow the next prompt.
        self._next_turn: list[AgentMessage] = []
        #: Runs plugins started while the agent was idle (``send_user_message``).
        self._background: set[asyncio.Future] = set()
        #: Builds a fresh plugin manager for /reload (set by the app, which knows how
        #: its plugins were found); None: reload keeps the plugins, re-reads resources.
        self.plugin_loader: Callable[[], Any] | None = None
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

    def subscribe(self, listener: Callable[[Any], Any]) -> Callable[[], None]:
        """Every agent event and every harness event (compaction, retries, queue…)."""
        return self.agent.subscribe(listener)

    async def emit(self, event: Any) -> None:
        """A session event (queue, compaction, retry): the plugins' hook, then subscribers."""
        await self.agent.emit(event)

    async def notify(self, event: Any) -> None:
        """A lifecycle event (session start and shutdown, model and thinking changes, tree
        moves): for the plugins' hooks only, as pi keeps them out of its event stream."""
        await self.plugins.notify(event.type, event=event, ctx=self.ctx)

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
        on_accepted: Callable[[], Any] | None = None,
    ) -> list[AgentMessage]:
        """Run a prompt to its end (retries and overflow recovery included).

        As pi does: a ``/command`` with a handler runs at once (even while the agent
        runs); then the ``input`` chain (where skills and templates expand); while the
        agent runs, ``streaming_behavior`` "steer" or "followUp" queues the result, and
        without one the prompt is refused. ``on_accepted`` is called once the prompt is
        accepted (handled, queued, or about to start the run), so a caller such as the
        RPC mode can answer before the run's first event.
        """
        if not self._started:
            await self.start()
        if text.startswith("/") and await self.run_extension_command(text):
            _call(on_accepted)
            return []
        event = await self.plugins.chain(
            "input", "event", InputEvent(text, list(images), source), ctx=self.ctx)
        if event.handled:
            _call(on_accepted)
            return []
        if self.is_running:
            if streaming_behavior not in ("steer", "followUp", "follow_up"):
                raise AgentBusyError("Agent is already processing. Specify streamingBehavior "
                                     "('steer' or 'followUp') to queue the message.")
            self._enqueue(user_message(event.text, event.images), streaming_behavior)
            _call(on_accepted)
            return []
        problem = _no_model_problem(self.model) or (self.auth_problem and self.auth_problem(self.model))
        if problem:
            raise MissingAuthError(problem)
        self._prompting = True
        try:
            start = await self.plugins.chain(
                "before_agent_start", "event",
                BeforeAgentStartEvent(prompt=event.text, images=list(event.images),
                                      system_prompt=self.base_system_prompt),
                ctx=self.ctx,
            )
            self.agent.system_prompt = start.system_prompt
            later, self._next_turn = self._next_turn, []
            prompts = [user_message(start.prompt, start.images), *start.messages, *later]
            _call(on_accepted)
            return await self._with_recovery(self.agent.prompt(prompts))
        finally:
            self._prompting = False

    async def queue(self, text: str, images: Iterable[ImageContent] = (), *,
                    behavior: str = "steer", source: str = "interactive") -> None:
        """Queue a message as steering or a follow-up (RPC ``steer`` / ``follow_up``),
        expanded by the ``input`` chain; a ``/command`` with a handler cannot be queued."""
        if text.startswith("/"):
            name = text[1:].split(" ", 1)[0]
            if await self._command_handler(name) is not None:
                raise ValueError(f'Extension command "/{name}" cannot be queued. Use prompt '
                                 "or run the command when the agent is not streaming.")
        event = await self.plugins.chain(
            "input", "event", InputEvent(text, list(images), source), ctx=self.ctx)
        if not event.handled:
            self._enqueue(user_message(event.text, event.images), behavior)

    def _enqueue(self, message: AgentMessage, behavior: str) -> None:
        if behavior == "steer":
            self.steer(message)
        else:
            self.follow_up(message)

    async def run_extension_command(self, text: str) -> bool:
        """Run ``/name args`` if a plugin's command ``name`` has a handler (True), as
        pi runs extension commands; a handler that raises is reported, not raised."""
        name, _, args = text[1:].partition(" ")
        handler = await self._command_handler(name)
        if handler is None:
            return False
        try:
            result = handler(args, self.ctx)
            if inspect.isawaitable(result):
                await result
        except Exception as exc:
            self.plugins.report(f"command:{name}", "command", exc)
        return True

    async def _command_handler(self, name: str):
        for command in await self.commands():
            if command.name == name and command.handler is not None:
                return command.handler
        return None

    async def continue_(self) -> list[AgentMessage]:
        return await self._with_recovery(self.agent.continue_())

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

    def abort(self) -> None:
        """Stop whatever runs: the stream, the tools, a retry wait, a summary."""
        self.abort_retry()
        if self._summary_signal is not None:
            self._summary_signal.abort()
        self.agent.abort()

    def abort_retry(self) -> None:
        if self._retry_cancel is not None:
            self._retry_cancel.set()

    async def wait_for_idle(self) -> None:
        """Until the agent has finished, including runs plugins started while it was idle."""
        while True:
            await self.agent.wait_for_idle()
            pending = [t for t in self._background if not t.done()]
            if not pending:
                return
            await asyncio.gather(*pending, return_exceptions=True)

    # ------------------------------------------------------------ plugins sending

    def send(self, message: Any, *, deliver_as: str = "steer", trigger_turn: bool = False,
             as_prompt: bool = False) -> None:
        """A message from a plugin (see ``ctx.send_user_message`` / ``send_message``)."""
        deliver_as = {"followUp": "follow_up", "nextTurn": "next_turn"}.get(deliver_as, deliver_as)
        if deliver_as not in ("steer", "follow_up", "next_turn"):
            raise ValueError(f"deliver_as must be steer, follow_up or next_turn, not {deliver_as!r}")
        message = user_message(message) if isinstance(message, str) else (
            UserMessage(content=list(message)) if isinstance(message, list) else message)
        busy = self.is_running
        if deliver_as == "next_turn" and (busy or not trigger_turn):
            self._next_turn.append(message)
            return
        if busy:
            self._enqueue(message, deliver_as)
            return
        if as_prompt and isinstance(message, UserMessage):
            text = text_of(message.content)
            images = [b for b in message.content if isinstance(b, ImageContent)] \
                if isinstance(message.content, list) else []
            self._start_background(self.prompt(text, images, source="extension"))
            return
        # a plugin's own message while idle: into the conversation (and the file) now,
        # with its message events so the chat shows it; trigger_turn answers it
        self._start_background(self._deliver_idle(message, trigger_turn))

    async def _deliver_idle(self, message: AgentMessage, trigger_turn: bool) -> None:
        await self.agent._deliver(message, [])
        if trigger_turn:
            await self._with_recovery(self.agent.continue_())

    def _start_background(self, run) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            run.close()
            raise RuntimeError("a run can start only inside the event loop (from a hook or a command)")
        task = loop.create_task(self._guarded(run))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _guarded(self, run) -> None:
        try:
            await run
        except AgentBusyError:  # the user's prompt got there first: queue instead
            log.warning("a plugin's message found the agent busy; it was not sent")
        except Exception as exc:
            self.plugins.report("extension message", "send_user_message", exc)

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

    # ------------------------------------------------------------ reload

    async def reload(self) -> None:
        """pi's /reload: ``session_shutdown`` (reason reload); the plugins found and
        loaded again (when the app said how); tools and providers collected again;
        skills, templates and context files forgotten so they are read again; then
        ``session_start`` (reason reload), which asks ``resources_discover`` again."""
        if self.is_running:
            raise AgentBusyError("wait for the agent to finish before reloading")
        await self.notify(SessionShutdown(reason="reload"))
        if self.plugin_loader is not None:
            fresh = self.plugin_loader()
            fresh.error_listeners = self.plugins.error_listeners  # the UI still hears of errors
            self.plugins = self.agent.plugins = self.ctx.plugins = fresh
        active = self.agent._active
        self.agent.tools = None
        self.agent.providers = None
        await self.agent.setup()
        if active is not None:
            self.agent._active = active & {t.name for t in self.agent.tools}
        await self.notify(SessionStart(reason="reload"))  # resource plugins forget their finds

    def _queue_changed(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # queued from outside the event loop: the next drain tells
            return
        task = loop.create_task(self._publish_queue())
        task.add_done_callback(lambda t: t.exception())

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

    # ------------------------------------------------------------ retries

    async def _with_recovery(self, run) -> list[AgentMessage]:
        """Await a run; then retry retryable failures with exponential backoff (honouring
        retry-after), and compact-then-retry once on a context overflow."""
        produced = list(await run)
        attempt, overflow_tried, previous, first = 0, False, None, None
        while True:
            failed = self._failed()
            if failed is None:
                break
            kind = failed.failure.kind
            if kind == "retryable" and _deterministic(failed, previous):
                failed.error_message = f"{failed.error_message} (the same answer twice: not retried again)"
                break
            previous = failed.error_message
            first = first or failed
            if kind == "overflow" and not overflow_tried and self.auto_compaction:
                overflow_tried = True
                self.agent.messages.pop()  # the failure stays in the file, not the context
                if await self.compact(reason="overflow", will_retry=True) is None:
                    break
                if self._failed() is not None:  # the rebuilt context ends in the failure
                    self.agent.messages.pop()
                produced += await self.agent.continue_()
                continue
            if kind != "retryable" or not self.auto_retry or attempt >= self.max_retries:
                break
            attempt += 1
            delay = failed.failure.retry_after_ms or self.base_delay_ms * 2 ** (attempt - 1)
            if self.max_retry_delay_ms and delay > self.max_retry_delay_ms:
                failed.error_message = (f"{failed.error_message} (the server asked to wait "
                                        f"{delay / 1000:.0f} s, more than the {self.max_retry_delay_ms / 1000:.0f} s allowed)")
                break
            await self.emit(AutoRetryStart(attempt=attempt, max_attempts=self.max_retries,
                                           delay_ms=delay, error_message=failed.error_message or ""))
            self.agent.messages.pop()
            if not await self._wait(delay / 1000):
                await self.emit(AutoRetryEnd(success=False, attempt=attempt, final_error="retry cancelled"))
                return produced
            produced += await self.agent.continue_()
        if attempt:
            failed = self._failed()
            if failed is not None and _went_away(failed, first):
                failed.error_message = f"{failed.error_message}; the first attempt ended: {first.error_message}"
            await self.emit(AutoRetryEnd(success=failed is None, attempt=attempt,
                                         final_error=failed.error_message if failed else None))
        self._flush_bash()
        return produced

    def _failed(self) -> AssistantMessage | None:
        last = self.agent.messages[-1] if self.agent.messages else None
        if isinstance(last, AssistantMessage) and last.stop_reason == "error" and last.failure:
            return last
        return None

    async def _wait(self, seconds: float) -> bool:
        """Sleep unless cancelled by abort_retry(); True when the wait ran out."""
        self._retry_cancel = asyncio.Event()
        try:
            await asyncio.wait_for(self._retry_cancel.wait(), seconds)
            return False
        except asyncio.TimeoutError:
            return True
        finally:
            self._retry_cancel = None

    # ------------------------------------------------------------ model and thinking

    async def set_model(self, model: Model, source: str = "set") -> None:
        """Switch models; the thinking level is re-clamped for the new one (as pi: a
        switch from a model without reasoning starts at the default level)."""
        previous = self.agent.model
        if previous.reasoning:
            level = self.thinking_level
        else:
            level = self.ctx.settings.get("defaultThinkingLevel") or "medium"
        self.agent.model = model
        if previous.key != model.key:
            self.session.append_model_change(model.provider, model.id)
        self.ctx.settings.remember("defaultProvider", model.provider)
        self.ctx.settings.remember("defaultModel", model.id)
        await self.set_thinking_level(level)
        await self.notify(ModelSelect(model=model, previous_model=previous, source=source))

    async def set_thinking_level(self, level: str) -> None:
        """Set the level, clamped to what the model takes; a change is recorded in the
        session, sent as ``thinking_level_changed`` and told to the plugins."""
        previous = self.agent.thinking_level
        level = self.clamp_thinking_level(level)
        self.agent.thinking_level = level
        if previous == level:
            return
        self.session.append_thinking_level_change(level)
        if self.model.reasoning or level != "off":  # as pi: kept as the next run's default
            self.ctx.settings.remember("defaultThinkingLevel", level)
        await self.emit(ThinkingLevelChanged(level=level))
        await self.notify(ThinkingLevelSelect(level=level, previous_level=previous))

    def clamp_thinking_level(self, level: str) -> str:
        """``level`` if the model takes it, else the nearest higher one it takes, else
        the nearest lower one (pi's order)."""
        available = self.thinking_levels()
        if level in available:
            return level
        if level not in THINKING_LEVELS:
            return available[0]
        index = THINKING_LEVELS.index(level)
        for candidate in (*THINKING_LEVELS[index:], *reversed(THINKING_LEVELS[:index])):
            if candidate in available:
                return candidate
        return available[0]

    # ------------------------------------------------------------ summaries

    async def summarize(self, system_prompt: str, text: str, max_tokens: int) -> str:
        """One request to the current model for a summary; raises :class:`SummaryError`."""
        model = self.agent.model
        provider = (self.agent.providers or {}).get(model.api)
        if provider is None:
            raise SummaryError(f"no provider for api {model.api!r}")
        signal = self._summary_signal or AbortSignal()
        context = LlmContext(system_prompt=system_prompt,
                             messages=[UserMessage(content=[TextContent(text)])])
        options = StreamOptions(signal=signal, api_key=await self.agent._api_key(model),
                                max_tokens=max_tokens,
                                thinking_level=self.thinking_level if model.reasoning else "off")
        message = await complete(provider, model, context, options)
        if message.stop_reason in ("error", "aborted"):
            raise SummaryError(message.error_message or "the summary request failed")
        return message.text

    async def compact(self, instructions: str | None = None, *, reason: str = "manual",
                      will_retry: bool = False) -> CompactionResult | None:
        """Compact the branch: ``session_before_compact`` decides (cancel, a plugin's own
        summary, or the built-in summariser's); the entry is appended and the context
        rebuilt. Returns the result, or None when cancelled, failed or nothing to do."""
        await self.emit(CompactionStart(reason=reason))
        self.is_compacting = True
        from pi_core.compaction_plan import prepare_compaction, to_event
        from pi_core.tokens import fit_budget

        settings = self.ctx.settings
        entries = self.session.path()
        window = self.model.context_window
        keep = fit_budget(int(settings.get("compaction.keepRecentTokens", 20000)), window)
        event = BeforeCompactEvent(
            reason=reason, entries=entries, instructions=instructions,
            reserve_tokens=fit_budget(int(settings.get("compaction.reserveTokens", 16384)), window),
            keep_recent_tokens=keep,
            preparation=to_event(prepare_compaction(
                entries, keep, context=list(self.agent.messages), tools=self.agent.tools or ())),
        )
        self._summary_signal = AbortSignal()
        result, error = None, None
        try:
            decision = await self.plugins.call("session_before_compact", event=event, ctx=self.ctx)
            if decision is None:
                error = (("Already compacted" if entries else "Nothing to compact (session too small)")
                         if event.preparation is None else "no compaction plugin is loaded")
            elif decision.cancel:
                self.is_compacting = False
                await self.emit(CompactionEnd(reason=reason, aborted=True))
                return None
            else:
                result = decision.result or (await decision.generate() if decision.generate else None)
            if result is not None:
                from pi_core.protocol.results import compaction_result

                result = _fill_from_plan(compaction_result(result), event.preparation)
                entry = self.session.append_compaction(
                    result.summary, result.first_kept_entry_id, result.tokens_before,
                    result.details, from_hook=decision.from_hook)
                self.agent.messages = list(self.session.build_context().messages)
                await self.notify(SessionCompactEvent(entry=entry, from_hook=bool(entry.from_hook)))
        except Exception as exc:
            error = str(exc) or type(exc).__name__
            log.warning("compaction failed: %s", error)
            result = None
        aborted = self._summary_signal.aborted
        self._summary_signal = None
        self.is_compacting = False
        await self.emit(CompactionEnd(reason=reason, result=result, aborted=aborted,
                                      will_retry=will_retry and result is not None, error_message=error))
        return result

    # ------------------------------------------------------------ the tree

    async def navigate_tree(self, target_id: str | None, *, summarize: bool = False,
                            instructions: str | None = None) -> bool:
        """Move the leaf to ``target_id``; with ``summarize``, hang a summary of the
        branch left behind where the new branch starts. False when a plugin cancelled."""
        if self.agent.is_running:
            raise AgentBusyError("wait for the agent to finish before moving in the tree")
        old_leaf = self.session.leaf_id
        target_path = {e.id for e in self.session.path(target_id)} if target_id else set()
        left = []
        for entry in reversed(self.session.path(old_leaf) if old_leaf else []):
            if entry.id in target_path:
                break
            left.append(entry)
        left.reverse()
        event = BeforeTreeEvent(target_id=target_id, old_leaf_id=old_leaf, entries=left,
                                summarize=summarize, instructions=instructions)
        decision = await self.plugins.call("session_before_tree", event=event, ctx=self.ctx)
        if decision is not None and decision.cancel:
            return False
        summary_entry = None
        if summarize and left and decision is not None:
            summary, details = decision.summary, decision.details
            if summary is None and decision.generate is not None:
                self._summary_signal = AbortSignal()
                try:
                    summary, details = await decision.generate()
                finally:
                    self._summary_signal = None
            if summary:
                summary_entry = self.session.branch_with_summary(
                    target_id, summary, details, from_hook=bool(decision.from_hook))
        if summary_entry is None:
            if target_id is None:
                self.session.reset_leaf()
            else:
                self.session.branch(target_id)
        self.agent.messages = list(self.session.build_context().messages)
        await self.notify(SessionTreeEvent(old_leaf_id=old_leaf, new_leaf_id=self.session.leaf_id,
                                         summary_entry=summary_entry))
        return True


    # ------------------------------------------------------------ workspace checkpoints

    async def checkpointer(self):
        """The plugin that keeps workspace checkpoints (``workspace_checkpoints``);
        raises :class:`LookupError` saying why there is none."""
        found = await self.plugins.decide("workspace_checkpoints", ctx=self.ctx)
        if found is None or isinstance(found, str):
            raise LookupError(found or "no checkpoints plugin is loaded")
        return found

    async def checkpoints(self) -> list:
        """The session's checkpoints (entry id, timestamp, changed files), oldest first."""
        return (await self.checkpointer()).list()

    async def restore_checkpoint(self, entry_id: str):
        """Put the workspace back as it was at ``entry_id`` (the nearest checkpoint at or
        before it); the state replaced is recorded first, as a checkpoint to undo to."""
        return await (await self.checkpointer()).restore(entry_id)

    # ------------------------------------------------------------ switching sessions

    async def new_session(self, parent_session: str | None = None) -> bool:
        """Leave this session for a new, empty one (False when a plugin said no)."""
        if await self._vetoed("session_before_switch", SwitchEvent("new", None)):
            return False
        from pi_core.session import Session

        if self.session.file is None:
            fresh = Session.in_memory(self.ctx.cwd)
        else:
            fresh = Session.create(self.ctx.cwd, self.session.sessions_dir, parent_session=parent_session)
        await self._replace_session(fresh, "new")
        return True

    async def switch_session(self, path: str) -> bool:
        """Resume another session file (False when a plugin said no)."""
        if await self._vetoed("session_before_switch", SwitchEvent("resume", str(path))):
            return False
        from pi_core.session import Session

        opened = Session.open(path, self.session.sessions_dir, cwd=self.ctx.cwd)
        await self._replace_session(opened, "resume")
        return True

    def fork_messages(self) -> list[tuple[str, str]]:
        """(entry id, text) of the user messages on the current branch: the fork points."""
        from pi_core.protocol.entries import MessageEntry

        return [(e.id, text_of(e.message.content)) for e in self.session.path()
                if isinstance(e, MessageEntry) and e.message.role == "user"]

    async def fork(self, entry_id: str, position: str = "before") -> tuple[str, bool]:
        """A new session from this one. ``before``: holding the branch up to (not
        including) the user message ``entry_id``; returns its text (for the editor).
        ``at``: holding the branch up to and including any entry ``entry_id``. Also
        returns whether a plugin cancelled."""
        if position not in ("before", "at"):
            raise ValueError(f"position must be 'before' or 'at', not {position!r}")
        entry = self.session.entry(entry_id)
        if entry is None:
            what = "a user message" if position == "before" else "an entry"
            raise ValueError(f"{entry_id!r} is not {what} of this session")
        message = getattr(entry, "message", None)
        text = text_of(message.content) if message is not None and hasattr(message, "content") \
            and isinstance(message.content, (str, list)) else ""
        if position == "before" and (message is None or message.role != "user"):
            raise ValueError(f"{entry_id!r} is not a user message of this session")
        if await self._vetoed("session_before_fork", ForkEvent(entry_id, position)):
            return text, True
        at = entry.parent_id if position == "before" else entry.id
        await self._replace_session(self.session.fork(at), "fork")
        return text, False

    async def clone(self) -> bool:
        """A new session holding the current branch, to go on from its leaf."""
        if await self._vetoed("session_before_fork", ForkEvent(self.session.leaf_id, "at")):
            return False
        await self._replace_session(self.session.clone(), "fork")
        return True

    async def _vetoed(self, hook: str, event: Any) -> bool:
        if self.is_running:
            raise AgentBusyError("wait for the agent to finish (or abort it) first")
        decision = await self.plugins.call(hook, event=event, ctx=self.ctx)
        return flag(decision, "cancel")

    async def _replace_session(self, session, reason: str) -> None:
        previous = self.session.file
        await self.close(reason)
        self.session = session
        self.agent.messages = []
        self.agent.clear_queues()
        await self.start(reason, previous_session_file=str(previous) if previous else None)

    # ------------------------------------------------------------ the user's shell

    async def run_bash(self, command: str, *, exclude_from_context: bool = False):
        """Run the user's ``!cmd`` (``!!cmd`` keeps it out of the context). ``user_bash``
        may cancel it or return the result itself. The message joins the conversation
        now, or when the current run ends; ``abort_bash()`` stops the command."""
        event = UserBashEvent(command=command, exclude_from_context=exclude_from_context,
                              cwd=self.ctx.cwd)
        decision = await self.plugins.call("user_bash", event=event, ctx=self.ctx)
        if decision is not None and decision.cancel:
            return None
        if decision is not None and (decision.message is not None or decision.result is not None):
            message = decision.message or BashExecutionMessage(
                command=command, exclude_from_context=exclude_from_context or None,
                **decision.result)
        else:
            signal = self._bash_signal = AbortSignal()
            try:
                env = await self.ctx.environment()
                result = await env.run(command, shell=self.ctx.settings.get("shellPath"),
                                       signal=signal, prefix="pi-bash")
            finally:
                self._bash_signal = None
            message = BashExecutionMessage(
                command=command, output=result.output, exit_code=result.exit_code,
                cancelled=result.killed, truncated=result.truncated,
                full_output_path=result.full_output_path,
                exclude_from_context=exclude_from_context or None,
            )
        self._pending_bash.append(message)
        if not self.agent.is_running:
            self._flush_bash()
        return message

    def abort_bash(self) -> None:
        """Stop the user's running command and everything it started."""
        if self._bash_signal is not None:
            self._bash_signal.abort()

    def _flush_bash(self) -> None:
        pending, self._pending_bash = self._pending_bash, []
        for message in pending:
            self.agent.messages.append(message)
            self.session.append_message(message)

    # ------------------------------------------------------------ cycling and stats

    async def cycle_model(self, step: int = 1) -> tuple[Model, str, bool] | None:
        """Switch to the next model (of ``--models`` when given, else of every available
        one); returns (model, thinking level, scoped?), or None when there is only one."""
        scoped = bool(self.scoped_models)
        choices = self.scoped_models or [(m, None) for m in self.available_models()]
        if len(choices) < 2:
            return None
        keys = [m.key for m, _ in choices]
        current = keys.index(self.model.key) if self.model.key in keys else -1
        model, level = choices[(current + step) % len(choices)]
        await self.set_model(model, source="cycle")
        if level is not None:
            await self.set_thinking_level(level)
        return model, self.thinking_level, scoped

    def thinking_levels(self) -> list[str]:
        """The levels this model takes (only "off" for a model without reasoning)."""
        if not self.model.reasoning:
            return ["off"]
        mapped = self.model.thinking_level_map or {}
        levels = [level for level in THINKING_LEVELS[:-1] if not (level in mapped and mapped[level] is None)]
        if (self.model.compat or {}).get("supportsXhigh") or mapped.get("xhigh") is not None:
            levels.append("xhigh")
        return levels or ["off"]

    async def cycle_thinking_level(self) -> str | None:
        levels = self.thinking_levels()
        if len(levels) < 2:
            return None
        current = levels.index(self.thinking_level) if self.thinking_level in levels else -1
        await self.set_thinking_level(levels[(current + 1) % len(levels)])
        return self.thinking_level

    def stats(self) -> dict:
        """Message counts, token totals and cost of the current context (what the model
        sees: after a compaction, only what came after it), and the context's use of the
        window; pi's ``get_session_stats`` shape."""
        counts = {"user": 0, "assistant": 0, "toolResult": 0}
        tokens = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
        tool_calls, cost = 0, 0.0
        for message in self.agent.messages:
            role = getattr(message, "role", None)
            counts[role] = counts.get(role, 0) + 1
            if isinstance(message, AssistantMessage):
                tool_calls += len(message.tool_calls)
                usage = message.usage
                tokens["input"] += usage.input
                tokens["output"] += usage.output
                tokens["cacheRead"] += usage.cache_read
                tokens["cacheWrite"] += usage.cache_write
                cost += usage.cost.total
        tokens["total"] = tokens["input"] + tokens["output"] + tokens["cacheRead"] + tokens["cacheWrite"]
        stats = {
            "sessionFile": str(self.session.file) if self.session.file else None,
            "sessionId": self.session.id,
            "userMessages": counts["user"],
            "assistantMessages": counts["assistant"],
            "toolCalls": tool_calls,
            "toolResults": counts["toolResult"],
            "totalMessages": len(self.agent.messages),
            "tokens": tokens,
            "cost": cost,
        }
        usage = self.context_usage()
        if usage is not None:
            stats["contextUsage"] = usage
        return stats

    def context_usage(self) -> dict | None:
        """Tokens in the context against the window (None without a window). Right after
        a compaction the count is unknown (null) until a model has answered again, as pi
        reports it."""
        from pi_core.protocol.entries import CompactionEntry
        from pi_core.tokens import context_tokens, usage_tokens

        window = self.model.context_window or 0
        if window <= 0:
            return None
        branch = self.session.path()
        last_compaction = max((i for i, e in enumerate(branch) if isinstance(e, CompactionEntry)),
                              default=None)
        if last_compaction is not None:
            answered = False
            for entry in reversed(branch[last_compaction + 1:]):
                message = getattr(entry, "message", None)
                if isinstance(message, AssistantMessage) and message.stop_reason not in ("aborted", "error"):
                    answered = usage_tokens(message.usage) > 0
                    break
            if not answered:
                return {"tokens": None, "contextWindow": window, "percent": None}
        used = context_tokens(self.agent.messages)
        return {"tokens": used, "contextWindow": window, "percent": 100 * used / window}

    async def commands(self) -> list:
        """Slash commands from the plugins (``register_commands``). Plugin commands of
        the same name all stay reachable, numbered in load order (``/review:1``,
        ``/review:2``), as in pi; a skill or template command of a taken name gives way."""
        found = await self.plugins.call("register_commands", ctx=self.ctx)
        return number_duplicates(found)


def number_duplicates(commands: list) -> list:
    """Commands in order, extension commands sharing a name suffixed ``:1``, ``:2``…;
    for other sources (skills, templates) a later one replaces an earlier one."""
    counts: dict[str, int] = {}
    for command in commands:
        if command.source == "extension":
            counts[command.name] = counts.get(command.name, 0) + 1
    result, seen, numbered = [], {}, {}
    for command in commands:
        name = command.name
        if command.source == "extension" and counts[name] > 1:
            numbered[name] = numbered.get(name, 0) + 1
            result.append(attrs.evolve(command, name=f"{name}:{numbered[name]}"))
            continue
        if command.source != "extension" and counts.get(name):
            continue  # an extension command has the name
        if name in seen:
            result[seen[name]] = command
        else:
            seen[name] = len(result)
            result.append(command)
    return result


def _fill_from_plan(result: CompactionResult, plan: Any) -> CompactionResult:
    """A plugin's summary may leave out where the kept part starts and the tokens
    before: the plan's are used (there is no summary to keep without them)."""
    if not result.first_kept_entry_id:
        if plan is None:
            raise ValueError("the summary names no firstKeptEntryId and there is no plan to take it from")
        result = attrs.evolve(result, first_kept_entry_id=plan.first_kept_entry_id)
    if not result.tokens_before and plan is not None:
        result = attrs.evolve(result, tokens_before=plan.tokens_before)
    return result


def _no_model_problem(model: Model) -> str | None:
    if is_unknown(model):
        return ("No model available: set a provider's API key (for example OPENAI_API_KEY), "
                "add a model to models.json, or pass --model. `pi --list-models` lists models.")
    return None


def _call(callback: Callable[[], Any] | None) -> None:
    if callback is not None:
        callback()


def _text(message: Any) -> str:
    content = getattr(message, "content", "")
    return text_of(content) if isinstance(content, (str, list)) else str(content)


#: Statuses that mean "later", whatever the body says: the same body twice proves nothing.
_TRANSIENT_STATUS = frozenset({408, 425, 429, 503, 529})


def _deterministic(failed: AssistantMessage, previous: str | None) -> bool:
    """An HTTP error answered with the same body as the attempt before: a third try
    would get it again (a server that cannot take the request), so stop retrying."""
    failure = failed.failure
    return (previous is not None and failed.error_message == previous and failure.status is not None
            and failure.status >= 400 and failure.status not in _TRANSIENT_STATUS
            and failure.retry_after_ms is None)


def _went_away(last: AssistantMessage, first: AssistantMessage | None) -> bool:
    """The retries ended on a server that no longer answers, after a first attempt that
    failed another way (a server that crashed on the request): the first failure is the
    one that says why, so it must not be lost."""
    return (first is not None and first is not last and first.error_message != last.error_message
            and last.failure.status is None and first.failure.status is None)
