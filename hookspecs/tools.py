"""Hooks around tools: registration, permission, execution and results."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hookspecs.markers import chain, collect, decide, hookspec, notify

if TYPE_CHECKING:
    from pi_core.protocol.ctx import Ctx
    from pi_core.protocol.environment import ExecutionEnvironment
    from pi_core.protocol.events import (
        ToolCallDecision,
        ToolCallEvent,
        ToolExecutionEnd,
        ToolExecutionStart,
        ToolExecutionUpdate,
        UserBashDecision,
        UserBashEvent,
    )
    from pi_core.protocol.messages import BashExecutionMessage
    from pi_core.protocol.tools import Tool, ToolResult


@hookspec
@collect(key="name")
def register_tools(ctx: Ctx) -> Tool | list[Tool] | None:
    """Kind: collect (by tool name).

    At start-up and reload. Return a list of :class:`pi_core.protocol.tools.Tool`. A tool from a
    later plugin replaces an earlier one of the same name.
    """


@hookspec
@decide(result="pi_core.protocol.results:tool_call_decision", guard=True)
def before_tool_call(event: ToolCallEvent, ctx: Ctx) -> ToolCallDecision | dict | None:
    """Kind: decide (stops on ``block``).

    Before a tool runs, after its arguments were validated. ``event`` is a
    :class:`pi_core.protocol.events.ToolCallEvent` (``tool_call_id``, ``tool_name``, ``arguments``).
    Return :class:`pi_core.protocol.events.ToolCallDecision` with ``block=True`` and a ``reason``
    to refuse the call (the model reads the reason), or with ``arguments`` to replace
    them; ``None`` lets the call through.
    """


@hookspec
@notify
def tool_execution_start(event: ToolExecutionStart, ctx: Ctx) -> None:
    """Kind: notify. A tool call starts (``tool_call_id``, ``tool_name``, ``args``)."""


@hookspec
@notify
def tool_execution_update(event: ToolExecutionUpdate, ctx: Ctx) -> None:
    """Kind: notify. A running tool reported progress (``partial_result``)."""


@hookspec
@notify
def tool_execution_end(event: ToolExecutionEnd, ctx: Ctx) -> None:
    """Kind: notify. A tool call finished (``result``, ``is_error``). In a parallel
    batch these come in completion order; the tool-result messages keep call order."""


@hookspec
@chain("result")
def after_tool_call(result: ToolResult, event: ToolCallEvent, ctx: Ctx) -> ToolResult | None:
    """Kind: chain.

    After a tool ran, before its result becomes a message. ``result`` is a
    :class:`pi_core.protocol.tools.ToolResult`; ``event`` the :class:`pi_core.protocol.events.ToolCallEvent`.
    Return a changed result to patch ``content``, ``details``, ``is_error`` or (pi 1.6)
    ``usage``, the model work the tool did itself.
    """


@hookspec
@decide(result="pi_core.protocol.results:user_bash_decision", guard=True)
def user_bash(event: UserBashEvent, ctx: Ctx) -> UserBashDecision | BashExecutionMessage | dict | None:
    """Kind: decide.

    The user ran ``!cmd`` (``event.exclude_from_context`` is true for ``!!cmd``). Return
    ``{"cancel": True}`` to stop it, or the output yourself: pi's ``{"result": {"output":
    ..., "exitCode": 0}}``, a :class:`pi_core.protocol.messages.BashExecutionMessage` or a
    :class:`pi_core.protocol.events.UserBashDecision`; ``None`` runs it.
    """


@hookspec
@decide
def execution_environment(ctx: Ctx) -> ExecutionEnvironment | None:
    """Kind: decide (the last plugin's environment wins).

    Each time a built-in tool (read, write, edit, bash, grep, find, ls) starts running,
    before it touches a file or starts a process. Return a
    :class:`pi_core.protocol.environment.ExecutionEnvironment` to have the tools read,
    write, list and run commands through it (a container, a remote host, a sandbox that
    vets or records every call); ``None`` keeps the default, the local machine in
    ``ctx.cwd``.
    """
