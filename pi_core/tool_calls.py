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
from pi_core.protocol.messages import ToolCall
from pi_core.protocol.records import record
from pi_core.protocol.schema import ArgumentsError
from pi_core.protocol.signal import AbortSignal
from pi_core.protocol.tools import Tool, ToolResult, ToolRun, as_result

if TYPE_CHECKING:
    from pi_core.loop import Agent

ABORTED_TOOL_TEXT = "Tool execution was aborted"


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
    await agent.emit(ToolExecutionStart(
        tool_call_id=call.id, tool_name=call.name, args=call.arguments, parent_tool_call_id=parent,
    ))
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
            reason = decision.reason or "Tool execution was blocked"
            return PreparedCall(call, immediate=ToolResult.error(reason))
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
            tool_call_id=call.id, tool_name=call.name, args=call.arguments,
            partial_result=partial, parent_tool_call_id=parent,
        ))))
        if also is not None:
            also(partial)

    run = ToolRun(tool_call_id=call.id, signal=signal, ctx=agent.ctx, on_update=on_update)
    began = time.monotonic()
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
    """Run a registered tool as a nested call of the tool call ``parent_tool_call_id``
    (pi 1.6's ``ctx.executeTool``): validated, through ``before_tool_call`` and
    ``after_tool_call``, its events carrying the parent, its id ``<parent>/<n>``. Never
    raises for the tool's failures (unknown, invalid, blocked, thrown): they come back
    as error results. Cancelling the caller cancels the tool and says so in
    ``tool_execution_end``. Nothing is added to the transcript."""
    agent.nested_counts[parent_tool_call_id] = number = agent.nested_counts.get(parent_tool_call_id, 0) + 1
    call = ToolCall(id=f"{parent_tool_call_id}/{number}", name=name,
                    arguments=arguments if isinstance(arguments, dict) else {})
    by_name = {t.name: t for t in agent.tools or []}
    took: dict[str, int] = {}
    prepared = await prepare(agent, call, by_name, None, parent_tool_call_id)
    result = prepared.immediate
    try:
        if result is None:
            result = await execute(agent, prepared, signal or AbortSignal(), None, took,
                                   parent_tool_call_id, on_update)
    except asyncio.CancelledError:
        await agent.emit(ToolExecutionEnd(
            tool_call_id=call.id, tool_name=name, result=ToolResult.error(ABORTED_TOOL_TEXT),
            is_error=True, duration_ms=took.get(call.id), parent_tool_call_id=parent_tool_call_id,
        ))
        raise
    await agent.emit(ToolExecutionEnd(
        tool_call_id=call.id, tool_name=name, result=result, is_error=result.is_error,
        duration_ms=took.get(call.id), parent_tool_call_id=parent_tool_call_id,
    ))
    return result
