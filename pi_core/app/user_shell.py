"""The user's own commands, ``!cmd`` and ``!!cmd`` (pi's ``executeBash``): run through the
execution environment, offered to ``user_bash`` first, and joined to the conversation
when the agent is idle, or after the run that was under way."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_core.protocol import events
from pi_core.protocol.messages import BashExecutionMessage
from pi_core.protocol.signal import AbortSignal

if TYPE_CHECKING:
    from pi_core.app.harness import Harness


async def run_user_command(harness: Harness, command: str, *, exclude_from_context: bool = False,
                           on_output: Any = None):
    """Run the user's ``!cmd`` (``!!cmd`` keeps it out of the context). ``user_bash``
    may cancel it or return the result itself. The message joins the conversation
    now, or when the current run ends; :func:`abort_user_command` stops the command.
    ``on_output`` is the execution environment's (called as output arrives)."""
    ctx = harness.ctx
    event = events.UserBashEvent(command=command, exclude_from_context=exclude_from_context, cwd=ctx.cwd)
    decision = await harness.plugins.call("user_bash", event=event, ctx=ctx)
    if decision is not None and decision.cancel:
        return None
    if decision is not None and (decision.message is not None or decision.result is not None):
        message = decision.message or BashExecutionMessage(
            command=command, exclude_from_context=exclude_from_context or None, **decision.result)
    else:
        signal = harness.bash_signal = AbortSignal()
        try:
            env = await ctx.environment()
            prefix = ctx.settings.get("shellCommandPrefix")
            result = await env.run(f"{prefix}\n{command}" if prefix else command,
                                   shell=ctx.settings.get("shellPath"), signal=signal, prefix="pi-bash",
                                   on_output=on_output)
        finally:
            harness.bash_signal = None
        message = BashExecutionMessage(
            command=command, output=result.output, exit_code=result.exit_code,
            cancelled=result.killed, truncated=result.truncated,
            full_output_path=result.full_output_path,
            exclude_from_context=exclude_from_context or None,
        )
    harness.pending_commands.append(message)
    if not harness.agent.is_running:
        flush_user_commands(harness)
    return message


def abort_user_command(harness: Harness) -> None:
    """Stop the user's running command and everything it started."""
    if harness.bash_signal is not None:
        harness.bash_signal.abort()


def flush_user_commands(harness: Harness) -> None:
    """The commands that finished while the agent ran join the conversation and the file."""
    pending, harness.pending_commands = harness.pending_commands, []
    for message in pending:
        harness.agent.messages.append(message)
        harness.session.append_message(message)
