"""The agent loop: turns while tools are owed or steering is queued, follow-ups after.

::

    while True:                                   # outer: follow-ups
        while tools_owed or pending:              # inner: turns
            deliver pending (steering) messages
            prepare_request → context → convert_to_llm → provider stream
            error / aborted → end the run
            run the tool calls (parallel, or sequential if any tool asks)
            pending = steering queue
        pending = follow-up queue
        if not pending: break

The loop never persists, renders or compacts by itself: it emits events (to the notify
hooks of the same name, then to subscribers) and calls hooks. Abort cancels the stream or
the running tools; the partial assistant message is kept with stop reason ``aborted``,
every tool call still gets a result, and queued messages stay queued."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Iterable
from typing import Any, Literal, cast

from pi_core.context import Context
from pi_core.plugins import Plugins
from pi_core.protocol.events import (
    AgentEnd,
    AgentStart,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ToolExecutionEnd,
    TurnEnd,
    TurnStart,
)
from pi_core.protocol.messages import (
    LLM_MESSAGE_TYPES,
    AgentMessage,
    AssistantMessage,
    ImageContent,
    ToolCall,
    ToolResultMessage,
)
from pi_core.protocol.model import Model
from pi_core.protocol.provider import LlmContext, RequestContext, StreamOptions, ToolSpec
from pi_core.protocol.signal import AbortSignal
from pi_core.protocol.stream import TextEndEvent, ThinkingEndEvent
from pi_core.protocol.tools import Tool, ToolResult
from pi_core.protocol.usage import total_usage
from pi_core.queues import AgentBusyError, MessageQueue, QueueMode, user_message
from pi_core.tool_calls import ABORTED_TOOL_TEXT, NestedCalls, PreparedCall, execute, execute_nested, prepare


class StopRun(Exception):
    """Raised by a subscriber (the session's writer: the disk is full) to end the run, as a
    failed request ends it, once every subscriber has the event. Outside a run: raised."""


class Agent:
    """A conversation with a model and its tools, driven by the loop above.

    ``tools`` and ``providers`` default to what the plugins register (``register_tools``,
    ``register_providers``), collected on the first run. Subscribers (``subscribe``)
    receive every :mod:`pi_core.protocol.events` event after the plugins' notify hooks.
    """

    def __init__(self, *, model: Model, plugins: Plugins | None = None, system_prompt: str = "",
                 thinking_level: str = "off", tools: list[Tool] | None = None,
                 providers: Iterable[Any] | None = None, messages: list[AgentMessage] | None = None,
                 steering_mode: QueueMode = "one-at-a-time", follow_up_mode: QueueMode = "one-at-a-time",
                 tool_execution: Literal["parallel", "sequential"] = "parallel",
                 get_api_key: Callable[[Model], Any] | None = None,
                 get_headers: Callable[[Model], dict] | None = None,
                 get_env: Callable[[Model], dict] | None = None, cwd: str = ".", ctx: Context | None = None) -> None:
        self.plugins = plugins or Plugins()
        self.model, self.system_prompt, self.thinking_level = model, system_prompt, thinking_level
        self.messages: list[AgentMessage] = list(messages or [])
        self.steering, self.follow_up_queue = MessageQueue(steering_mode), MessageQueue(follow_up_mode)
        self.tool_execution, self.get_api_key, self.get_headers = tool_execution, get_api_key, get_headers
        #: The environment a model's credential carries (auth.json's ``env``), per request.
        self.get_env = get_env
        self.ctx = ctx or Context(cwd=cwd, plugins=self.plugins)
        self.ctx.agent = self
        self.tools = tools
        self.providers = {p.api: p for p in providers} if providers is not None else None
        self._active: set[str] | None = None
        self._listeners: list[Callable[[Any], Any]] = []
        self._task: asyncio.Task | None = None
        self._signal: AbortSignal | None = None
        self._closing, self._turn_index = False, 0
        self.nested_calls: dict[str, NestedCalls] = {}  # the record of each running call's nested calls
        self.last_request: tuple | None = None  # (model, context, options, messages) last sent: cache warming repeats it

    # ------------------------------------------------------------ public API

    @property
    def is_running(self) -> bool:
        return self._task is not None

    def subscribe(self, listener: Callable[[Any], Any]) -> Callable[[], None]:
        """Receive every agent event (plain or async callable); returns an unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    async def setup(self) -> None:
        if self.tools is None:
            self.tools = await self.plugins.call("register_tools", ctx=self.ctx)
        if self.providers is None:
            found = await self.plugins.call("register_providers", ctx=self.ctx)
            self.providers = {p.api: p for p in found}

    def active_tools(self) -> list[Tool]:
        """The tools the model is offered: those named by :meth:`set_active_tools`, or
        by default every tool marked ``default_active``."""
        tools = self.tools or []
        if self._active is None:
            return [t for t in tools if t.default_active and t.exposure != "hidden"]
        return [t for t in tools if t.name in self._active and t.exposure != "hidden"]

    def set_active_tools(self, names: Iterable[str] | None) -> None:
        self._active = None if names is None else set(names)

    def add_tool(self, tool: Tool) -> None:
        """Add or replace (by name) a tool; offered from the next request if it is on by default."""
        self.tools = [*(t for t in self.tools or [] if t.name != tool.name), tool]
        if self._active is not None and tool.default_active:
            self._active.add(tool.name)

    def remove_tool(self, name: str) -> bool:
        before = self.tools or []
        self.tools = [t for t in before if t.name != name]
        if self._active is not None:
            self._active.discard(name)
        return len(self.tools) != len(before)

    async def collect_again(self) -> None:
        """Collect tools and providers from the plugins anew (a reload); the tools that
        were switched on stay on where they still exist."""
        self.tools = self.providers = None
        await self.setup()
        if self._active is not None:
            self._active &= {t.name for t in self.tools} if self.tools else set()

    def provider_for(self, model: Model) -> Any:
        return (self.providers or {}).get(model.api)

    def steer(self, message: str | AgentMessage) -> None:
        """Queue a message for the model's next request, after the running tools finish."""
        self.steering.messages.append(user_message(message))

    def follow_up(self, message: str | AgentMessage) -> None:
        """Queue a message for when the run would otherwise end."""
        self.follow_up_queue.messages.append(user_message(message))

    def clear_queues(self) -> tuple[list[AgentMessage], list[AgentMessage]]:
        """Take every queued (steering, follow-up) message out, e.g. back into an editor."""
        return self.steering.clear(), self.follow_up_queue.clear()

    def abort(self) -> None:
        """Stop the current run: the stream or the running tools are cancelled."""
        if self._task is None or self._closing or self._signal is None or self._signal.aborted:
            return
        self._signal.abort()
        self._task.cancel()

    async def wait_for_idle(self) -> None:
        if self._task is not None:
            await asyncio.shield(self._task)

    async def prompt(
        self, message: str | AgentMessage | list[AgentMessage], images: Iterable[ImageContent] = ()
    ) -> list[AgentMessage]:
        """Run the loop on a new prompt; returns the messages the run produced."""
        prompts = message if isinstance(message, list) else [user_message(message, images)]
        return await self._start(prompts)

    async def continue_(self) -> list[AgentMessage]:
        """Run the loop from the current transcript (queued messages, a retry)."""
        if not self.messages:
            raise ValueError("no messages to continue from")
        if self.messages[-1].role == "assistant":
            queued = self.steering.drain() or self.follow_up_queue.drain()
            if not queued:
                raise ValueError("cannot continue from an assistant message with nothing queued")
            return await self._start(queued)
        return await self._start([])

    # ------------------------------------------------------------ the run

    async def _start(self, prompts: list[AgentMessage]) -> list[AgentMessage]:
        if self._task is not None:
            raise AgentBusyError("the agent is already running: use steer() or follow_up()")
        await self.setup()
        self._signal, self._closing = AbortSignal(), False
        task = self._task = asyncio.ensure_future(self._run(prompts, self._signal))
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            # The caller was cancelled (Ctrl+C, a timeout): abort the run cleanly first.
            self.abort()
            await asyncio.shield(task)
            raise
        finally:
            if task.done() and self._task is task:
                self._task = None

    async def _run(self, prompts: list[AgentMessage], signal: AbortSignal) -> list[AgentMessage]:
        produced: list[AgentMessage] = []
        try:
            await self.emit(AgentStart())
            self._turn_index = 0
            await self.emit(TurnStart(turn_index=0))
            stop = None
            for message in prompts:  # each kept (in memory at least) before a StopRun ends the run
                try:
                    await self.deliver(message, produced)
                except StopRun as exc:
                    stop = stop or exc
            if stop is not None:
                raise stop
            await self._turns(produced, signal)
        except asyncio.CancelledError:
            if not signal.aborted:
                raise
            _take_back_cancel()
        except StopRun as exc:
            try:
                await self.deliver(self._failure(None, str(exc)), produced)
            except StopRun:
                pass  # (the failure could not be kept either: its text already says why)
        except Exception as exc:  # a bug below the providers' contract; keep the session usable
            self.plugins.report("agent loop", "run", exc)
            failure = self._failure(None, f"{type(exc).__name__}: {exc}", aborted=signal.aborted)
            await self.deliver(failure, produced)
        finally:
            self._closing = True
        await self.emit(AgentEnd(messages=produced))
        self._task = None
        return produced

    async def _turns(self, produced: list[AgentMessage], signal: AbortSignal) -> None:
        pending = self.steering.drain()
        first = True
        while True:
            tools_owed = True
            while tools_owed or pending:
                if not first:
                    self._turn_index += 1
                    await self.emit(TurnStart(turn_index=self._turn_index))
                first = False
                for message in pending:
                    await self.deliver(message, produced)
                pending = []
                answer = await self._respond(signal, produced)
                if answer is None:  # prepare_request stopped the run (a budget)
                    return
                if answer.stop_reason in ("error", "aborted"):
                    await self.emit(TurnEnd(message=answer, turn_index=self._turn_index))
                    return
                calls = answer.tool_calls
                results, terminate = await self._run_tools(answer, calls, signal, produced) if calls else ([], False)
                tools_owed = bool(calls) and not terminate
                await self.emit(TurnEnd(message=answer, tool_results=results, turn_index=self._turn_index))
                if signal.aborted or terminate:
                    return
                pending = self.steering.drain()
            pending = self.follow_up_queue.drain()
            if not pending:
                return

    async def deliver(self, message: AgentMessage, produced: list | None = None) -> None:
        """A complete message: message_start, the message_end chain, then into the transcript."""
        await self.emit(MessageStart(message=message))
        await self._finish_message(message, produced)

    async def _finish_message(self, message: AgentMessage, produced: list | None) -> AgentMessage:
        message = await self.plugins.call("message_end", message=message, ctx=self.ctx)
        self.messages.append(message)
        if produced is not None:
            produced.append(message)
        await self.emit(MessageEnd(message=message))
        return message

    # ------------------------------------------------------------ one response

    async def _request(self) -> tuple[RequestContext, LlmContext]:
        ctx = self.ctx
        request = RequestContext(system_prompt=self.system_prompt, messages=list(self.messages),
                                 tools=self.active_tools(), model=self.model, thinking_level=self.thinking_level)
        request = await self.plugins.call("prepare_request", request=request, ctx=ctx)
        messages = await self.plugins.call("context", messages=list(request.messages), ctx=ctx)
        messages = await self.plugins.call("convert_to_llm", messages=messages, ctx=ctx)
        llm = LlmContext(system_prompt=request.system_prompt,
                         messages=[m for m in messages if isinstance(m, LLM_MESSAGE_TYPES)],
                         tools=[ToolSpec(t.name, t.description, t.schema) for t in request.tools], transcript=messages)
        return request, llm

    async def _respond(self, signal: AbortSignal, produced: list) -> AssistantMessage | None:
        """Stream one assistant message (None: ``request.stop``); never raises for provider trouble."""
        partial: AssistantMessage | None = None
        final: AssistantMessage | None = None
        request = None
        open_blocks: dict[int, str] = {}  # content index → "text" / "thinking", still streaming
        try:
            request, llm = await self._request()
            if request.stop:
                return None
            model = request.model
            provider = self.provider_for(model)
            if provider is None:
                raise LookupError(f"no provider for api {model.api!r} (model {model.key})")
            options = StreamOptions(
                signal=signal, api_key=await self.api_key(model), thinking_level=request.thinking_level,
                session_id=getattr(self.ctx, "session_id", None),
                headers=dict(self.get_headers(model)) if self.get_headers else {},
                env=dict(self.get_env(model)) if self.get_env else {}, on_response=self._on_response,
                on_payload=self._chained("before_provider_request", "payload", model),
                on_headers=self._chained("before_provider_headers", "headers", model),
                on_stream_event=self._chained("provider_stream_event", "data", model),
                # a discovered local server gets no provider retries: the harness's are enough
                max_retries=0 if model.discovered else self._count("retry.provider.maxRetries"),
                max_retry_delay_ms=self._count("retry.provider.maxRetryDelayMs"),
                thinking_budgets=self._setting("thinkingBudgets"), timeout_ms=self._count("retry.provider.timeoutMs"),
                idle_timeout_ms=idle_timeout_ms(self._setting("httpIdleTimeoutMs")),
                connect_timeout_ms=idle_timeout_ms(self._setting("websocketConnectTimeoutMs")),
            )
            self.last_request = (model, llm, options, list(self.messages))
            stream = provider.stream(model, llm, options)
            try:
                async for event in stream:
                    kind = event.type
                    if kind == "start":
                        partial = event.partial
                        await self.emit(MessageStart(message=partial))
                    elif kind in ("done", "error"):
                        final = event.message if kind == "done" else event.error
                        break
                    else:
                        if partial is None:  # a provider that skipped "start"
                            partial = event.partial
                            await self.emit(MessageStart(message=partial))
                        if kind in ("text_start", "thinking_start"):
                            open_blocks[event.content_index] = kind[:-6]
                        elif kind in ("text_end", "thinking_end"):
                            open_blocks.pop(event.content_index, None)
                        await self.emit(MessageUpdate(message=partial, assistant_message_event=event))
            finally:  # release the provider's connection now, not when collected
                if hasattr(stream, "aclose"):
                    await stream.aclose()
            if final is None:
                raise RuntimeError("the provider's stream ended without done or error")
        except asyncio.CancelledError:
            if not signal.aborted:
                raise
            _take_back_cancel()
            final = self._failure(partial, "Request was aborted", aborted=True, request=request)
        except Exception as exc:
            final = self._failure(partial, f"{type(exc).__name__}: {exc}", request=request)
        if partial is None:
            await self.emit(MessageStart(message=final))
        elif final.stop_reason == "aborted" and open_blocks:
            await self._end_blocks(partial, open_blocks)
        stored = await self._finish_message(final, produced)
        assert isinstance(stored, AssistantMessage)  # message_end keeps the role
        return stored

    async def _end_blocks(self, message: AssistantMessage, open_blocks: dict[int, str]) -> None:
        """An aborted stream still ends the text and thinking it began (pi sends their
        ``*_end`` before ``message_end``), so clients close what they show."""
        for index in sorted(open_blocks):
            if index < len(message.content):
                kind = open_blocks[index]  # also the name of the block's text attribute
                event = (TextEndEvent if kind == "text" else ThinkingEndEvent)(
                    content_index=index, content=getattr(message.content[index], kind, ""), partial=message)
                await self.emit(MessageUpdate(message=message, assistant_message_event=event))

    def _setting(self, key: str):
        return settings.get(key) if (settings := getattr(self.ctx, "settings", None)) is not None else None

    def _count(self, key: str) -> int | None:
        """The setting ``key`` if a whole number ≥ 0, else None (the provider's default)."""
        value = self._setting(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None

    def _failure(self, partial, text: str, *, aborted: bool = False, request=None) -> AssistantMessage:
        model = request.model if request is not None else self.model
        message = partial or AssistantMessage(api=model.api, provider=model.provider, model=model.id)
        message.stop_reason, message.error_message = "aborted" if aborted else "error", text
        return message

    async def api_key(self, model: Model) -> str | None:
        key = self.get_api_key(model) if self.get_api_key is not None else None
        return await key if inspect.isawaitable(key) else key

    def _chained(self, hook: str, arg: str, model: Model):
        """A provider's callback through the chain ``hook`` (None when nobody implements it)."""
        if not self.plugins.has(hook):
            return None

        async def through(value: dict) -> dict:
            return await self.plugins.call(hook, **{arg: value}, model=model, ctx=self.ctx)

        return through

    async def _on_response(self, status: int, headers: dict) -> None:
        if self.plugins.has("after_provider_response"):
            from pi_core.protocol.events import ProviderResponseEvent  # rare: loaded on first use

            event = ProviderResponseEvent(status=status, headers=dict(headers))
            await self.plugins.call("after_provider_response", event=event, ctx=self.ctx)

    # ------------------------------------------------------------ tools

    async def _run_tools(self, message, calls, signal, produced) -> tuple[list[ToolResultMessage], bool]:
        """Run one batch of tool calls; results come back in the assistant's call order."""
        by_name = {t.name: t for t in self.active_tools()}
        sequential = self.tool_execution == "sequential" or any(
            by_name[c.name].execution_mode == "sequential" for c in calls if c.name in by_name
        )
        finished: dict[str, ToolResult] = {}
        took: dict[str, int] = {}  # milliseconds in the tool's execute (pi 1.6's durationMs)
        results: list[ToolResultMessage] = []
        tasks: list[asyncio.Future] = []

        async def finish(prepared: PreparedCall) -> None:
            result = prepared.immediate
            if result is None:
                result = await execute(self, prepared, signal, message, took)
            finished[prepared.call.id] = result
            await self.emit(ToolExecutionEnd(tool_call_id=prepared.call.id, tool_name=prepared.call.name, result=result,
                                             is_error=result.is_error, duration_ms=took.get(prepared.call.id)))

        async def record(call: ToolCall) -> None:
            result, nested = finished[call.id], self.nested_calls.pop(call.id, None)
            usage = total_usage(AssistantMessage(usage=u) for u in [result.usage, *nested.usages] if u is not None) \
                if nested is not None and nested.usages else result.usage
            result_message = ToolResultMessage(
                tool_call_id=call.id, tool_name=call.name, content=result.content, details=result.details,
                usage=usage, is_error=result.is_error, duration_ms=took.get(call.id),
                nested_calls=nested.snapshot() if nested else None)
            await self.deliver(result_message, produced)
            stored = self.messages[-1]
            assert isinstance(stored, ToolResultMessage)  # message_end keeps the role
            results.append(stored)

        try:
            if sequential:
                for call in calls:
                    await finish(await prepare(self, call, by_name, message))
                    await record(call)
            else:
                for call in calls:
                    prepared = await prepare(self, call, by_name, message)
                    if prepared.immediate is not None:
                        await finish(prepared)
                    else:
                        tasks.append(asyncio.ensure_future(finish(prepared)))
                if tasks:
                    await asyncio.gather(*tasks)
                for call in calls:
                    await record(call)
        except asyncio.CancelledError:
            if not signal.aborted:
                raise
            _take_back_cancel()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for call in calls:
                if call.id not in finished:
                    await finish(PreparedCall(call, immediate=ToolResult.error(ABORTED_TOOL_TEXT)))
            recorded = {r.tool_call_id for r in results}
            for call in calls:
                if call.id not in recorded:
                    await record(call)
        terminate = bool(finished) and all(r.terminate for r in finished.values())
        return results, terminate

    async def execute_tool(self, name: str, arguments: Any, *, parent_tool_call_id: str,
                           signal: AbortSignal | None = None,
                           on_update: Callable[[ToolResult], None] | None = None) -> ToolResult:
        """Run a registered tool as a nested call of ``parent_tool_call_id`` (pi 1.6's
        ``ctx.executeTool``; :func:`pi_core.tool_calls.execute_nested`)."""
        return await execute_nested(self, name, arguments, parent_tool_call_id=parent_tool_call_id,
                                    signal=signal, on_update=on_update)

    # ------------------------------------------------------------ events

    async def emit(self, event: Any) -> None:
        """An agent event reaches the notify hook of its name, then the subscribers."""
        if event.type != "message_end":
            await self.plugins.call(event.type, event=event, ctx=self.ctx)
        stop: StopRun | None = None
        for listener in self._listeners:
            try:
                result = listener(event)
                if result is not None and inspect.isawaitable(result):
                    await result
            except StopRun as exc:
                stop = stop or exc
            except Exception as exc:
                self.plugins.report(f"subscriber {listener!r}", event.type, exc)
        if stop is not None:
            raise stop


def _take_back_cancel() -> None:
    """An abort cancelled this task (only ever the run's): take the cancel back, so the run records what it had."""
    cast(asyncio.Task, asyncio.current_task()).uncancel()


def idle_timeout_ms(value: Any) -> int | None:
    """pi 1.6's ``httpIdleTimeoutMs`` (and ``websocketConnectTimeoutMs``, read alike): milliseconds (a number or a
    numeric string, whole part), ``"disabled"`` or ``0`` for none; anything else (unset, malformed) is None, the default."""
    if isinstance(value, str):
        text = value.strip()
        if text.lower() == "disabled":
            return 0
        try:
            value = float(text)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value or value < 0:
        return None
    return None if value == float("inf") else int(value)
