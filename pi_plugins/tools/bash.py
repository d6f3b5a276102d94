"""``bash``: run a shell command, streaming its output.

The command runs through the execution environment's one runner
(:mod:`pi_plugins.tools.runner`). On timeout, on abort and when the tool is cancelled,
the command is killed with every process it started, also those that left its process
group, so nothing survives. (A command that ends normally may leave a background job
running on purpose, ``server &``; its output is not waited for, and it is stopped when
the session ends.)

The model sees the last 2,000 lines or 50 KB of the output; beyond that the full
output goes to a temporary file whose path the result gives. Output streams to
``tool_execution_update`` events at most ten times a second. A non-zero exit status
is an error result that states the code. The settings ``shellPath`` (the shell) and
``shellCommandPrefix`` (a line run before each command) apply, as in pi.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from pi_core.protocol.messages import TextContent
from pi_core.protocol.tools import Tool, ToolResult, ToolRun
from pi_plugins.tools.errors import ToolError
from pi_plugins.tools.lookup import environment_for
from pi_plugins.tools.truncation import MAX_BYTES, MAX_LINES, Truncation, format_size

if TYPE_CHECKING:
    from pi_plugins.tools.output import OutputCollector
    from pi_plugins.tools.runner import CommandResult

UPDATE_INTERVAL = 0.1

DESCRIPTION = (
    "Run a bash command in the working directory. Returns stdout and stderr together. "
    f"Only the last {MAX_LINES} lines or {MAX_BYTES // 1024}KB of output are shown (whichever "
    "is less); the full output then goes to a temp file whose path is given. A non-zero exit "
    "status is reported as an error with the code. There is no time limit unless you give "
    "timeout (seconds); on timeout the command and everything it started are stopped."
)

PARAMETERS = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "The bash command to run"},
        "timeout": {
            "type": "number",
            "exclusiveMinimum": 0,
            "description": "Seconds after which the command is stopped (default: no time limit)",
        },
    },
    "required": ["command"],
}


def _details(snapshot: Truncation, path: str | None) -> dict[str, Any] | None:
    if not snapshot.truncated:
        return None
    return {"truncation": snapshot.as_details(), "fullOutputPath": path}


def _shown(result: CommandResult, snapshot: Truncation, empty: str) -> str:
    """The output text for the model, with a notice when it was cut."""
    text = snapshot.content or empty
    if not snapshot.truncated:
        return text
    path = result.full_output_path
    end = snapshot.total_lines
    if snapshot.last_line_partial:
        notice = (
            f"[Output cut: showing the last {format_size(snapshot.output_bytes)} of line {end}, "
            f"which is {format_size(result.last_line_bytes)} long. Full output: {path}]"
        )
    else:
        start = end - snapshot.output_lines + 1
        budget = f", {format_size(MAX_BYTES)} budget" if snapshot.truncated_by == "bytes" else ""
        notice = (
            f"[Output cut: showing lines {start}-{end} of {end}{budget}. Full output: {path} "
            "(read it in parts with read, or search it with grep)]"
        )
    return f"{text}\n\n{notice}" if text else notice


def _with_status(text: str, status: str) -> str:
    return f"{text}\n\n{status}" if text else status


async def execute(args: dict, run: ToolRun) -> ToolResult:
    if run.signal.aborted:
        raise ToolError("Command aborted before it started")
    command: str = args["command"]
    timeout: float | None = args.get("timeout")
    env = await environment_for(run)
    loop = asyncio.get_running_loop()
    last_update, timer, dirty = 0.0, None, False
    collector: OutputCollector | None = None

    def emit() -> None:
        nonlocal last_update, timer, dirty
        timer, last_update, dirty = None, loop.time(), False
        assert collector is not None  # updates start once the command does
        snapshot = collector.snapshot()
        run.update(ToolResult(
            content=[TextContent(snapshot.content)],
            details=_details(snapshot, collector.full_output_path),
        ))

    def on_output(output: OutputCollector) -> None:
        nonlocal timer, dirty, collector
        collector, dirty = output, True
        if run.on_update is None or timer is not None:
            return
        delay = last_update + UPDATE_INTERVAL - loop.time()
        if delay <= 0:
            emit()
        else:
            timer = loop.call_later(delay, emit)

    if run.on_update is not None:
        run.update(ToolResult())
    settings = getattr(run.ctx, "settings", None)
    shell = settings.get("shellPath") if settings is not None else None
    prefix = settings.get("shellCommandPrefix") if settings is not None else None
    if prefix:  # pi's shellCommandPrefix (e.g. "shopt -s expand_aliases") runs first
        command = f"{prefix}\n{command}"
    try:
        result = await env.run(command, shell=shell or None, signal=run.signal, timeout=timeout,
                               on_output=on_output)
    except FileNotFoundError:
        raise ToolError(
            f"Cannot run commands: the working directory {env.cwd} does not exist "
            f"(or bash is missing)."
        ) from None
    except OSError as exc:
        raise ToolError(f"Could not start the command: {exc.strerror or exc}.") from None
    finally:
        if timer is not None:
            timer.cancel()
    if dirty and run.on_update is not None:
        emit()  # the output that arrived since the last update
    snapshot = result.truncation
    details = _details(snapshot, result.full_output_path)
    shown = _shown(result, snapshot, "")
    if result.timed_out:
        status = (
            f"Command timed out after {timeout:g} seconds and was stopped, with every process it "
            "started. If it needs longer, run it again with a larger timeout."
        )
        return ToolResult.text(_with_status(shown, status), details or {}, is_error=True)
    if result.aborted:
        return ToolResult.text(_with_status(shown, "Command aborted"), details or {}, is_error=True)
    code = result.exit_code
    assert code is not None  # it exited: neither timed out nor aborted
    if code != 0:
        if code < 0:
            import signal

            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            status = f"Command was killed by {name}"
        else:
            status = f"Command exited with code {code}"
        return ToolResult.text(_with_status(shown, status), details or {}, is_error=True)
    return ToolResult.text(_shown(result, snapshot, "(no output)"), details)


bash_tool = Tool(
    name="bash",
    label="bash",
    description=DESCRIPTION,
    parameters=PARAMETERS,
    function=execute,
    execution_mode="parallel",
)
