"""A tool call from announcement to result: the tool found, its arguments validated (pi's
words when they are not), ``before_tool_call`` asked, the tool run, ``after_tool_call``
asked; and a plugin's nested call (pi 1.6's ``ctx.executeTool``). The loop runs a batch
of calls (:meth:`pi_core.loop.Agent._run_tools`) with these."""

from __future__ import annotations

import asyncio
import copy
import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from attrs import asdict, has

from pi_core.protocol.events import ToolCallEvent, ToolExecutionEnd, ToolExecutionStart, ToolExecutionUpdate
from pi_core.protocol.messages import TextContent, ToolCall, Usage
from pi_core.protocol.records import record
from pi_core.protocol.schema import ArgumentsError
from pi_core.protocol.signal import AbortSignal
from pi_core.protocol.tools import Tool, ToolResult, ToolRun, as_result

if TYPE_CHECKING:
    from pi_core.loop import Agent

ABORTED_TOOL_TEXT = "Tool execution was aborted"
#: pi 1.6's bounds on a ``nestedCalls`` record: calls kept, argument bytes per call and per result, error characters.
MAX_CALLS, MAX_CALL_BYTES, MAX_RECORD_BYTES, MAX_ERROR_CHARS = 256, 8 * 1024, 32 * 1024, 500


class NestedCalls:
    """pi 1.6's ``nestedCalls`` on a tool result: the calls one model-issued call made (nested
    ones too), bounded: name, arguments, status, duration, error, never results; and their
    usage, which the result's adds up. Numbers their ids."""

    def __init__(self) -> None:
        self.calls: list[dict] = []
        self.usages: list[Usage] = []  # of every nested result, kept in the record or not (pi 1.6)
        self.complete, self.argument_bytes, self.began, self.counts = True, 0, dict[str, float](), dict[str, int]()

    def start(self, call: ToolCall) -> dict | None:
        if len(self.calls) >= MAX_CALLS:
            self.complete = False
            return None
        record: dict = {"id": call.id, "name": call.name, "status": "unfinished"}
        size = len(json.dumps(call.arguments, ensure_ascii=False, separators=(",", ":"), default=str).encode())
        if size > MAX_CALL_BYTES or self.argument_bytes + size > MAX_RECORD_BYTES:
            record["argumentsBytes"], self.complete = size, False
        else:
            record["arguments"], self.argument_bytes = copy.deepcopy(call.arguments), self.argument_bytes + size
        self.calls.append(record)
        self.began[call.id] = time.monotonic()
        return record

    def finish(self, record: dict | None, result: ToolResult) -> None:
        self.usages += [result.usage] if result.usage is not None else []
        if record is not None:
            took = round((time.monotonic() - self.began.pop(record["id"])) * 1000)
            record.update(status="error" if result.is_error else "ok", durationMs=took)
            if result.is_error and (error := "\n".join(c.text for c in result.content if isinstance(c, TextContent))):
                record["error"] = error[:MAX_ERROR_CHARS]

    def snapshot(self) -> dict | None:
        calls = [dict(call) for call in self.calls]
        done = self.complete and all(c["status"] != "unfinished" for c in calls)
        return {"calls": calls, "complete": done} if calls or not self.complete else None


@record
class PreparedCall:
    """A tool call ready to run, or (``immediate``) one already answered."""

    call: ToolCall
    tool: Tool | None = None
    args: Any = None
    immediate: ToolResult | None = None


def arguments_dict(args: Any, fallback: dict) -> dict:
    """Validated arguments as the plain dict ``before_tool_call`` sees."""
    return args if isinstance(args, dict) else asdict(args) if has(type(args)) else dict(fallback)


def validation_failed(call: ToolCall, exc: ArgumentsError) -> str:
    """pi's words for arguments the tool's schema refuses, with what the model sent."""
    received = json.dumps(call.arguments, indent=2, ensure_ascii=False, default=str)
    return f'Validation failed for tool "{call.name}":\n{exc}\n\nReceived arguments:\n{received}'


async def prepare(agent: Agent, call: ToolCall, by_name: dict[str, Tool], message,
                  parent: str | None = None) -> PreparedCall:
    """Announce the call, find the tool, validate the arguments, ask before_tool_call."""
    await agent.emit(ToolExecutionStart(tool_call_id=call.id, tool_name=call.name, args=call.arguments,
                                        parent_tool_call_id=parent))
    tool = by_name.get(call.name)
    if tool is None:
        return PreparedCall(call, immediate=ToolResult.error(f"Tool {call.name} not found"))
    try:
        args = tool.validate(call.arguments)
    except ArgumentsError as exc:
        return PreparedCall(call, immediate=ToolResult.error(validation_failed(call, exc)))
    if agent.plugins.has("before_tool_call"):
        raw = arguments_dict(args, call.arguments)
        event = ToolCallEvent(call.id, call.name, copy.deepcopy(raw), message, parent)
        decision = await agent.plugins.call("before_tool_call", event=event, ctx=agent.ctx)
        if decision is not None and decision.block:
            return PreparedCall(call, immediate=ToolResult.error(decision.reason or "Tool execution was blocked"))
        changed = decision.arguments if decision is not None and decision.arguments is not None else event.arguments
        if changed != raw:
            try:
                args = tool.validate(changed)
            except ArgumentsError as exc:
                return PreparedCall(call, immediate=ToolResult.error(validation_failed(call, exc)))
    return PreparedCall(call, tool=tool, args=args)


async def execute(agent: Agent, prepared: PreparedCall, signal: AbortSignal, message, took: dict,
                  parent: str | None = None, also: Callable[[ToolResult], None] | None = None) -> ToolResult:
    call = prepared.call
    updates: list[asyncio.Future] = []

    def on_update(partial: ToolResult) -> None:
        updates.append(asyncio.ensure_future(agent.emit(ToolExecutionUpdate(
            tool_call_id=call.id, tool_name=call.name, args=call.arguments, partial_result=partial,
            parent_tool_call_id=parent))))
        if also is not None:
            also(partial)

    run, began = ToolRun(tool_call_id=call.id, signal=signal, ctx=agent.ctx, on_update=on_update), time.monotonic()
    assert prepared.tool is not None  # (calls answered without running never get here)
    try:
        result = as_result(await prepared.tool.execute(prepared.args, run))
    except Exception as exc:
        result = ToolResult.error(str(exc) or type(exc).__name__)
    finally:
        took[call.id] = round((time.monotonic() - began) * 1000)
        if updates:
            await asyncio.gather(*updates, return_exceptions=True)
    if agent.plugins.has("after_tool_call"):
        event = ToolCallEvent(call.id, call.name, arguments_dict(prepared.args, call.arguments), message, parent)
        patched = await agent.plugins.call("after_tool_call", result=result, event=event, ctx=agent.ctx)
        result = as_result(patched)
    return result


async def execute_nested(agent: Agent, name: str, arguments: Any, *, parent_tool_call_id: str,
                         signal: AbortSignal | None = None,
                         on_update: Callable[[ToolResult], None] | None = None) -> ToolResult:
    """Run a registered tool as a nested call of ``parent_tool_call_id`` (pi 1.6's
    ``ctx.executeTool``): validated, through ``before_tool_call`` and ``after_tool_call``, its
    events carrying the parent, its id ``<parent>/<n>``. Never raises for the tool's failures
    (unknown or hidden, invalid, blocked, thrown): they are error results. Cancelling the caller
    cancels the tool and says so in ``tool_execution_end``. Nothing is added to the transcript."""
    nested = agent.nested_calls.setdefault(parent_tool_call_id, NestedCalls())
    nested.counts[parent_tool_call_id] = number = nested.counts.get(parent_tool_call_id, 0) + 1
    call = ToolCall(id=f"{parent_tool_call_id}/{number}", name=name,
                    arguments=arguments if isinstance(arguments, dict) else {})
    agent.nested_calls[call.id], record = nested, nested.start(call)  # its own calls join the same record
    took: dict[str, int] = {}
    callable_ = {t.name: t for t in agent.tools or [] if t.exposure != "hidden"}
    prepared = await prepare(agent, call, callable_, None, parent_tool_call_id)
    result, cancelled = prepared.immediate, None
    try:
        if result is None:
            result = await execute(agent, prepared, signal or AbortSignal(), None, took, parent_tool_call_id, on_update)
        nested.finish(record, result)
    except asyncio.CancelledError as exc:
        result, cancelled = ToolResult.error(ABORTED_TOOL_TEXT), exc
    agent.nested_calls.pop(call.id, None)
    await agent.emit(ToolExecutionEnd(tool_call_id=call.id, tool_name=name, result=result, is_error=result.is_error,
                                      duration_ms=took.get(call.id), parent_tool_call_id=parent_tool_call_id))
    if cancelled is not None:
        raise cancelled
    return result
