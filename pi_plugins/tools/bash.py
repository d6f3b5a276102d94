"""``bash``: run a shell command, streaming its output.

The command runs in its own process group. On timeout, on abort and when the tool is
cancelled, the whole group is killed, together with any descendant that left it, so
nothing the command started survives. (A command that ends normally may leave a
background job running on purpose, ``server &``; its output is not waited for.)

The model sees the last 2,000 lines or 50 KB of the output; beyond that the full
output goes to a temporary file whose path the result gives. Output streams to
``tool_execution_update`` events at most ten times a second. A non-zero exit status
is an error result that states the code.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pi_core.messages import TextContent
from pi_core.tools import Tool, ToolResult, ToolRun
from pi_plugins.tools.environment import environment_for
from pi_plugins.tools.errors import ToolError
from pi_plugins.tools.output import OutputCollector
from pi_plugins.tools.truncation import MAX_BYTES, MAX_LINES, Truncation, format_size

UPDATE_INTERVAL = 0.1
#: After the shell exits, how long to wait for output still in the pipe. A background
#: job that keeps the pipe open must not hold the tool up.
EXIT_GRACE = 0.1
#: After a kill, how long to wait for the last output (every writer is dead by then).
KILL_GRACE = 1.0

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


def _shown(output: OutputCollector, snapshot: Truncation, empty: str) -> str:
    """The output text for the model, with a notice when it was cut."""
    text = snapshot.content or empty
    if not snapshot.truncated:
        return text
    path = output.full_output_path
    end = snapshot.total_lines
    if snapshot.last_line_partial:
        notice = (
            f"[Output cut: showing the last {format_size(snapshot.output_bytes)} of line {end}, "
            f"which is {format_size(output.last_line_bytes)} long. Full output: {path}]"
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
    shell = await env.which("bash") or "sh"
    output = OutputCollector(env)
    try:
        process = await env.spawn([shell, "-c", command])
    except FileNotFoundError:
        raise ToolError(
            f"Cannot run commands: the working directory {env.cwd} does not exist "
            f"(or {shell} is missing)."
        ) from None
    except OSError as exc:
        raise ToolError(f"Could not start the command: {exc.strerror or exc}.") from None
    loop = asyncio.get_running_loop()
    last_update, timer, dirty = 0.0, None, False

    def emit() -> None:
        nonlocal last_update, timer, dirty
        timer, last_update, dirty = None, loop.time(), False
        snapshot = output.snapshot()
        run.update(ToolResult(
            content=[TextContent(snapshot.content)],
            details=_details(snapshot, output.full_output_path),
        ))

    def schedule() -> None:
        nonlocal timer, dirty
        dirty = True
        if run.on_update is None or timer is not None:
            return
        delay = last_update + UPDATE_INTERVAL - loop.time()
        if delay <= 0:
            emit()
        else:
            timer = loop.call_later(delay, emit)

    async def pump() -> None:
        while chunk := await process.read():
            await output.add(chunk)
            schedule()

    if run.on_update is not None:
        run.update(ToolResult())
    stop_on_abort = run.signal.on_abort(process.kill)
    reader = asyncio.ensure_future(pump())
    exited = asyncio.ensure_future(process.wait())
    timed_out = False
    try:
        done, _ = await asyncio.wait([exited], timeout=timeout)
        if not done:
            timed_out = True
            process.kill()
            await exited
        killed = timed_out or run.signal.aborted
        await asyncio.wait([reader], timeout=KILL_GRACE if killed else EXIT_GRACE)
        if reader.done() and reader.exception() is not None:
            raise reader.exception()
        code = exited.result()
    finally:
        stop_on_abort()
        if not exited.done():  # cancelled (the user aborted): nothing may outlive the tool
            process.kill()
        for task in (reader, exited):
            task.cancel()
        if timer is not None:
            timer.cancel()
        process.close()
        output.close()

    if dirty and run.on_update is not None:
        emit()  # the output that arrived since the last update
    snapshot = output.snapshot()
    details = _details(snapshot, output.full_output_path)
    if timed_out:
        text = _shown(output, snapshot, "")
        status = (
            f"Command timed out after {timeout:g} seconds and was stopped, with every process it "
            "started. If it needs longer, run it again with a larger timeout."
        )
        return ToolResult.text(_with_status(text, status), details or {}, is_error=True)
    if run.signal.aborted:
        return ToolResult.text(_with_status(_shown(output, snapshot, ""), "Command aborted"), details or {}, is_error=True)
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
        return ToolResult.text(_with_status(_shown(output, snapshot, ""), status), details or {}, is_error=True)
    return ToolResult.text(_shown(output, snapshot, "(no output)"), details)


bash_tool = Tool(
    name="bash",
    label="bash",
    description=DESCRIPTION,
    parameters=PARAMETERS,
    function=execute,
    execution_mode="parallel",
)
