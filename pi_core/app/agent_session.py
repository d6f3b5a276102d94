"""pi's AgentSession: the core's harness plus what the application offers on top.

The core (:class:`pi_core.harness.Harness`) joins loop, session and plugins; this class
adds what the modes (interactive, rpc, acp, print) and the SDK use: retries and overflow
recovery (:mod:`pi_core.app.recovery`), compaction (planned by
:mod:`pi_core.app.compaction_plan`, decided by ``session_before_compact``), summaries by
the current model, tree navigation with a branch summary, model and thinking-level
cycling, session stats and context use, the user's ``!cmd``, the slash commands of the
plugins, workspace checkpoints, and leaving the session (new, resume, fork, clone,
reload). Its ``ctx`` (:class:`pi_core.app.agent_session_context.AgentSessionContext`)
gives plugins the session control and processes of pi's ``ExtensionContext``.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from pi_core.app.agent_session_context import AgentSessionContext
from pi_core.app.auth import MissingAuthError, no_model_problem
from pi_core.app.budget import Budget, BudgetExceeded, Spent, has_prices, spent_of
from pi_core.app.recovery import RetryPolicy, last_failure, with_recovery
from pi_core.app.session_events import AgentSettled, SessionInfoChanged
from pi_core.app.session_stats import context_usage, session_stats
from pi_core.harness import Harness
from pi_core.loop import AgentBusyError, user_message
from pi_core.plugins import flag
from pi_core.protocol.events import (
    BeforeCompactEvent,
    BeforeTreeEvent,
    CompactionEnd,
    CompactionResult,
    CompactionStart,
    ForkEvent,
    InputEvent,
    ModelSelect,
    QueueUpdate,
    SessionCompactEvent,
    SessionShutdown,
    SessionStart,
    SessionTreeEvent,
    SwitchEvent,
    ThinkingLevelChanged,
    ThinkingLevelSelect,
    UserBashEvent,
)
from pi_core.protocol.messages import (
    AgentMessage,
    AssistantMessage,
    BashExecutionMessage,
    ImageContent,
    TextContent,
    Usage,
    UserMessage,
    text_of,
)
from pi_core.protocol.model import Model
from pi_core.protocol.provider import THINKING_LEVELS, LlmContext, StreamOptions, complete
from pi_core.protocol.signal import AbortSignal
from pi_core.protocol.usage import total_usage

log = logging.getLogger("pi.harness")


class SummaryError(RuntimeError):
    """The model could not write a summary (its error is in the message)."""


class AgentSession(Harness):
    """The harness with the application's features (see the module's docstring).

    ``available_models()`` gives every model the user could switch to (the registry's,
    with keys); ``scoped_models`` (``--models`` / ``enabledModels``) is what cycling goes
    through, with thinking levels. ``auth_problem(model)`` says why a request cannot be
    made, or None."""

    context_class = AgentSessionContext
    #: The :class:`pi_core.app.registry.ModelRegistry` the models come from (set by the wiring).
    model_registry: Any = None

    def register_provider(self, name: str, config: dict) -> None:
        """pi's ``registerProvider`` (:meth:`ModelRegistry.register_provider`), now."""
        if self.model_registry is None:
            raise RuntimeError("register_provider: this session has no model registry")
        self.model_registry.register_provider(name, config)
        self._rescope()

    def unregister_provider(self, name: str) -> bool:
        """pi's ``unregisterProvider``: the provider's models leave the registry (the
        built-in ones it replaced come back), so ``available_models()`` and the scoped
        cycle follow; False when it had none."""
        if self.model_registry is None or not self.model_registry.unregister_provider(name):
            return False
        self._rescope()
        return True

    def _rescope(self) -> None:
        """The scoped cycle as the registry now has its models (gone ones leave it)."""
        registry = self.model_registry
        self.scoped_models = [(found, level) for m, level in self.scoped_models
                              if (found := registry.find(m.provider, m.id)) is not None]

    def __init__(self, *, available_models: Callable[[], list[Model]] | None = None,
                 scoped_models: list[tuple[Model, str | None]] | None = None,
                 auth_problem: Callable[[Model], str | None] | None = None,
                 budget: Budget | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        #: The spend limits (:mod:`pi_core.app.budget`); ``budget_stop``: why the last run
        #: stopped, if its budget stopped it.
        self.budget = budget if budget is not None else Budget.from_settings(self.ctx.settings)
        self.budget_stop: BudgetExceeded | None = None
        #: Spend not on the path yet: the running subagents' (callables giving a Spent).
        self.spend_sources: list[Callable[[], Spent]] = []
        self._said_no_prices = False
        #: The answers to the summary requests of the compaction or branch summary under way.
        self._summary_answers: list[AssistantMessage] = []
        self.auth_problem = auth_problem
        # pi's default level is medium, clamped to what the model takes (off without reasoning)
        self.agent.thinking_level = self.clamp_thinking_level(self.agent.thinking_level)
        self.available_models = available_models or (lambda: [self.agent.model])
        self.scoped_models = list(scoped_models or [])
        self._bash_signal: AbortSignal | None = None
        self._pending_bash: list = []
        self.auto_compaction = bool(self.ctx.settings.get("compaction.enabled", True))
        self.retry = RetryPolicy(self.ctx.settings)
        self.is_compacting = False
        self._summary_signal: AbortSignal | None = None
        self._published_queue: tuple[list[str], list[str]] = ([], [])
        self.agent.subscribe(self._queue_drained)
        #: When the answer under way began (monotonic seconds), for pi 1.6's durationMs.
        self._answer_began: float | None = None
        self.agent._listeners.insert(0, self._stamp)  # before the message is stored
        #: Runs plugins started while the agent was idle (``send_user_message``).
        self._background: set[asyncio.Future] = set()
        #: Builds a fresh plugin manager for /reload (set by the app, which knows how
        #: its plugins were found); None: reload keeps the plugins, re-reads resources.
        self.plugin_loader: Callable[[], Any] | None = None

    # ------------------------------------------------------------ runs: recovery, abort

    async def _run_prompt(self, text: str, images: list, on_accepted=None) -> list:
        """The harness's run, once the model can be asked: as pi, a missing model or key
        is said before any request (:class:`MissingAuthError`)."""
        problem = no_model_problem(self.model) or (self.auth_problem and self.auth_problem(self.model))
        if problem:
            raise MissingAuthError(problem)
        await self._refresh_sign_in()
        return await super()._run_prompt(text, images, on_accepted)

    async def _refresh_sign_in(self) -> None:
        """As pi: an expired sign-in is refreshed before the prompt is sent, and one whose
        refresh is refused is the prompt's error in pi's words (naming the provider and
        ``/login``), said before any request."""
        from pi_core.app.auth import SignInExpiredError

        get_key = self.agent.get_api_key
        key = get_key(self.model) if get_key is not None else None
        if inspect.isawaitable(key):
            try:
                await key
            except SignInExpiredError as exc:
                raise MissingAuthError(str(exc)) from None

    async def _run(self, run) -> list:
        """A run with pi's recovery (:mod:`pi_core.app.recovery`); then the user's
        commands that ran meanwhile join the conversation."""
        self.budget_stop = None
        produced = await with_recovery(self, run)
        self._flush_bash()
        last = next((m for m in reversed(produced) if isinstance(m, AssistantMessage)), None)
        await self.emit(AgentSettled(aborted=last is not None and last.stop_reason == "aborted"))
        return produced

    def abort(self) -> None:
        """Stop whatever runs: the stream, the tools, a retry wait, a summary."""
        self.abort_retry()
        if self._summary_signal is not None:
            self._summary_signal.abort()
        super().abort()

    def abort_retry(self) -> None:
        self.retry.cancel()

    # ------------------------------------------------------------ the budget

    def spent(self) -> Spent:
        """What the session's path has spent (:func:`pi_core.app.budget.spent_of`), with
        what its running subagents have spent so far."""
        spent = spent_of(self.session.path())
        for source in self.spend_sources:
            spent = spent.add(source())
        return spent

    async def check_budget(self, request):
        """Before a request (the ``budget`` plugin's ``prepare_request``): past a limit,
        record why, send ``budget_exceeded`` and end the run without the request."""
        if not self.budget.active:
            return None
        if self.budget.max_cost is not None and not has_prices(request.model) \
                and not self._said_no_prices:
            self._said_no_prices = True
            said = (f"budget: {request.model.key} has no prices: its requests count tokens "
                    "and turns only, no cost")
            ui = getattr(self.ctx, "ui", None)
            if getattr(ui, "has_ui", False):  # the chat, an RPC or ACP client
                ui.notify(said, "warning")
            else:  # pi -p, --mode json: stdout is the answer's
                import sys

                sys.stderr.write(said + "\n")
        hit = await self.budget.check(self.spent())
        if hit is None:
            return None
        self.budget_stop = hit
        self.session.append_custom("budget_exceeded", {"limit": hit.limit, "spent": hit.spent,
                                                       "max": hit.max})
        await self.agent.emit(hit)
        return attrs.evolve(request, stop=True)

    def _take_summary_usage(self) -> Usage | None:
        """What the summary requests under way spent, for their entry's ``usage`` (where
        pi 1.6 writes it: the session's totals and the budget count it)."""
        answers, self._summary_answers = self._summary_answers, []
        return total_usage(answers) if answers else None

    # ------------------------------------------------------------ the queues

    def steer(self, message) -> None:
        super().steer(message)
        self._queue_changed()

    def follow_up(self, message) -> None:
        super().follow_up(message)
        self._queue_changed()

    def clear_queues(self) -> tuple[list, list]:
        cleared = super().clear_queues()
        self._queue_changed()
        return cleared

    def _stamp(self, event: Any) -> None:
        """pi 1.6's fields: ``willRetry`` on ``agent_end``; on a finished answer
        ``durationMs`` (from its first event) and the ``thinkingLevel`` it was asked with. (A tool
        result's ``durationMs`` is the loop's: it times the tool's execute.)"""
        if event.type == "agent_end":
            event.will_retry = self.retry.will_retry(last_failure(self.agent.messages),
                                                     self.auto_compaction)
            return
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

    # ------------------------------------------------------------ commands

    async def commands(self) -> list:
        """Slash commands from the plugins (``register_commands``). Plugin commands of
        the same name all stay reachable, numbered in load order (``/review:1``,
        ``/review:2``), as in pi; a skill or template command of a taken name gives way."""
        found = await self.plugins.call("register_commands", ctx=self.ctx)
        return number_duplicates(found)

    async def prompt(self, text: str, images: Iterable[ImageContent] = (), *,
                     on_accepted: Callable[[str], Any] | None = None, **kwargs: Any) -> list:
        """The harness's prompt, but a ``/command`` with a handler runs at once, even
        while the agent runs (as pi runs extension commands)."""
        if not self._started:
            await self.start()
        if text.startswith("/") and await self.run_extension_command(text):
            if on_accepted is not None:
                on_accepted("handled")
            return []
        return await super().prompt(text, images, on_accepted=on_accepted, **kwargs)

    async def queue(self, text: str, images: Iterable[ImageContent] = (), *,
                    behavior: str = "steer", source: str = "interactive") -> str:
        """Queue a message as steering or a follow-up (RPC ``steer`` / ``follow_up``),
        expanded by the ``input`` chain; a ``/command`` with a handler cannot be queued.
        Returns pi 1.6's disposition: "handled" (an input plugin took it) or "queued"."""
        if text.startswith("/"):
            name = text[1:].split(" ", 1)[0]
            if await self.command_handler(name) is not None:
                raise ValueError(f'Extension command "/{name}" cannot be queued. Use prompt '
                                 "or run the command when the agent is not streaming.")
        event = await self.plugins.call("input", event=InputEvent(text, list(images), source), ctx=self.ctx)
        if event.handled:
            return "handled"
        self._enqueue(user_message(event.text, event.images), behavior)
        return "queued"

    async def run_extension_command(self, text: str) -> bool:
        """Run ``/name args`` if a plugin's command ``name`` has a handler (True), as
        pi runs extension commands; a handler that raises is reported, not raised."""
        name, _, args = text[1:].partition(" ")
        handler = await self.command_handler(name)
        if handler is None:
            return False
        try:
            result = handler(args, self.ctx)
            if inspect.isawaitable(result):
                await result
        except Exception as exc:
            self.plugins.report(f"command:{name}", "command", exc)
        return True

    async def command_handler(self, name: str) -> Callable | None:
        for command in await self.commands():
            if command.name == name and command.handler is not None:
                return command.handler
        return None

    # ------------------------------------------------------------ plugins sending

    async def wait_for_idle(self) -> None:
        """Until the agent has finished, including runs plugins started while it was idle."""
        while True:
            await self.agent.wait_for_idle()
            pending = [t for t in self._background if not t.done()]
            if not pending:
                return
            await asyncio.gather(*pending, return_exceptions=True)

    def send(self, message: Any, *, deliver_as: str = "steer", trigger_turn: bool = False,
             as_prompt: bool = False) -> None:
        """A message from a plugin (see ``ctx.send_user_message`` / ``send_message``).
        A user message goes through the ``input`` chain (``source="extension"``), as pi
        fires ``input`` for every plugin send, whether it starts a run or is queued."""
        deliver_as = {"followUp": "follow_up", "nextTurn": "next_turn"}.get(deliver_as, deliver_as)
        if deliver_as not in ("steer", "follow_up", "next_turn"):
            raise ValueError(f"deliver_as must be steer, follow_up or next_turn, not {deliver_as!r}")
        message = user_message(message) if isinstance(message, str) else (
            UserMessage(content=list(message)) if isinstance(message, list) else message)
        busy = self.is_running
        if deliver_as == "next_turn" and (busy or not trigger_turn):
            self._next_turn.append(message)
            return
        if as_prompt and isinstance(message, UserMessage):
            if not busy:
                self._start_background(self.prompt(*_text_and_images(message), source="extension"))
            elif self.plugins.has("input"):
                self._start_background(self._send_prompt(message, deliver_as))
            else:
                self._enqueue(message, deliver_as)  # no input hook to ask: queued at once
            return
        if busy:
            self._enqueue(message, deliver_as)
            return
        # a plugin's own message while idle: into the conversation (and the file) now,
        # with its message events so the chat shows it; trigger_turn answers it
        self._start_background(self._deliver_idle(message, trigger_turn))

    async def _send_prompt(self, message: UserMessage, deliver_as: str) -> None:
        """A plugin's user message sent while the agent runs, through ``input``; then
        queued, or (when the run ended meanwhile) the start of the next run."""
        text, images = _text_and_images(message)
        event = await self.plugins.call("input", event=InputEvent(text, images, "extension"), ctx=self.ctx)
        if event.handled:
            return
        if self.is_running:
            self._enqueue(user_message(event.text, event.images), deliver_as)
        else:
            await self._run_prompt(event.text, event.images)

    async def _deliver_idle(self, message: AgentMessage, trigger_turn: bool) -> None:
        await self.agent._deliver(message, [])
        if trigger_turn:
            await self._run(self.agent.continue_())

    def _start_background(self, run) -> None:
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
            self.plugins.report("extension message", "send_user_message", exc)

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

    # ------------------------------------------------------------ workspace checkpoints

    async def checkpointer(self):
        """The plugin that keeps workspace checkpoints (``workspace_checkpoints``);
        raises :class:`LookupError` saying why there is none."""
        found = await self.plugins.call("workspace_checkpoints", ctx=self.ctx)
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
        from pi_core.app.forks import fork

        await self._replace_session(fork(self.session, at), "fork")
        return text, False

    async def clone(self) -> bool:
        """A new session holding the current branch, to go on from its leaf."""
        if await self._vetoed("session_before_fork", ForkEvent(self.session.leaf_id, "at")):
            return False
        from pi_core.app.forks import clone

        await self._replace_session(clone(self.session), "fork")
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
                prefix = self.ctx.settings.get("shellCommandPrefix")
                result = await env.run(f"{prefix}\n{command}" if prefix else command,
                                       shell=self.ctx.settings.get("shellPath"),
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
        self._summary_answers.append(message)
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
        from pi_core.app.compaction_plan import fill_from_plan, prepare_compaction, to_event
        from pi_core.app.tokens import estimate_tokens, fit_budget

        settings = self.ctx.settings
        entries = self.session.path()
        window = self.model.context_window
        keep = fit_budget(int(settings.get("compaction.keepRecentTokens", 20000)), window)
        event = BeforeCompactEvent(
            reason=reason, entries=entries, will_retry=will_retry, instructions=instructions,
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

                result = fill_from_plan(compaction_result(result), event.preparation)
                entry = self.session.append_compaction(
                    result.summary, result.first_kept_entry_id, result.tokens_before,
                    result.details, from_hook=decision.from_hook, usage=self._take_summary_usage())
                self.agent.messages = list(self.session.build_context().messages)
                result = attrs.evolve(result, usage=entry.usage, estimated_tokens_after=sum(
                    estimate_tokens(m) for m in self.agent.messages))
                await self.notify(SessionCompactEvent(entry=entry, from_hook=bool(entry.from_hook),
                                                      reason=reason, will_retry=will_retry))
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
                    target_id, summary, details, from_hook=bool(decision.from_hook),
                    usage=self._take_summary_usage())
        if summary_entry is None:
            if target_id is None:
                self.session.reset_leaf()
            else:
                self.session.branch(target_id)
        self.agent.messages = list(self.session.build_context().messages)
        await self.notify(SessionTreeEvent(old_leaf_id=old_leaf, new_leaf_id=self.session.leaf_id,
                                         summary_entry=summary_entry))
        return True

    # ------------------------------------------------------------ model and thinking level

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

    def thinking_levels(self) -> list[str]:
        """The levels this model takes (only "off" for a model without reasoning)."""
        if not self.model.reasoning:
            return ["off"]
        mapped = self.model.thinking_level_map or {}
        levels = [level for level in THINKING_LEVELS[:-2] if not (level in mapped and mapped[level] is None)]
        if (self.model.compat or {}).get("supportsXhigh") or mapped.get("xhigh") is not None:
            levels.append("xhigh")
        if mapped.get("max") is not None:  # pi 1.6's level above xhigh, where a model names it
            levels.append("max")
        return levels or ["off"]

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


    async def cycle_thinking_level(self) -> str | None:
        levels = self.thinking_levels()
        if len(levels) < 2:
            return None
        current = levels.index(self.thinking_level) if self.thinking_level in levels else -1
        await self.set_thinking_level(levels[(current + 1) % len(levels)])
        return self.thinking_level

    async def set_session_name(self, name: str) -> None:
        """Name the session (``/name``, RPC ``set_session_name``, ``ctx.set_session_name``)
        and say so: ``session_info_changed`` to the plugins and the event stream (pi 1.6)."""
        self.session.append_session_info(name)
        await self.emit(SessionInfoChanged(name=self.session.name))

    def session_info_changed(self) -> None:
        """``session_info_changed`` soon (for a name set outside a coroutine)."""
        try:
            task = asyncio.get_running_loop().create_task(
                self.emit(SessionInfoChanged(name=self.session.name)))
        except RuntimeError:  # no event loop: nobody listens
            return
        task.add_done_callback(lambda t: t.exception())

    # ------------------------------------------------------------ stats

    def stats(self) -> dict:
        """pi's ``get_session_stats`` (:func:`pi_core.app.session_stats.session_stats`)."""
        return session_stats(self)

    def context_usage(self) -> dict | None:
        """The context's tokens against the window (:func:`pi_core.app.session_stats.context_usage`)."""
        return context_usage(self)


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


def _text_and_images(message: UserMessage) -> tuple[str, list]:
    content = message.content
    return text_of(content), [b for b in content if isinstance(b, ImageContent)] if isinstance(content, list) else []


def _text(message: Any) -> str:
    content = getattr(message, "content", "")
    return text_of(content) if isinstance(content, (str, list)) else str(content)
