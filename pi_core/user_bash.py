"""The user's own shell commands (``!cmd``, ``!!cmd``, RPC ``bash``): run in a process
group, output kept to its tail within budget (the whole of it saved to a temp file), and
turned into a ``bashExecution`` message for the conversation."""

from __future__ import annotations

import asyncio
import os
import signal
import tempfile

from pi_core.messages import BashExecutionMessage

MAX_LINES = 2000
MAX_BYTES = 50 * 1024


def tail_within_budget(text: str) -> tuple[str, bool]:
    """The end of ``text`` within 2,000 lines and 50 KB, and whether anything was cut."""
    lines = text.splitlines(keepends=True)
    kept, size = [], 0
    for line in reversed(lines[-MAX_LINES:]):
        size += len(line.encode("utf-8", errors="replace"))
        if size > MAX_BYTES:
            break
        kept.append(line)
    kept.reverse()
    return "".join(kept), len(kept) < len(lines)


#: How long an aborted command's output gets to be read out of the pipe after the kill
#: (a child that left the process group may hold the pipe open for good).
DRAIN_TIMEOUT = 1.0


async def _printed_before_the_kill(stdout: asyncio.StreamReader) -> bytes:
    """What the command wrote before it was killed but we had not read yet."""
    try:
        return await asyncio.wait_for(stdout.read(), DRAIN_TIMEOUT)
    except asyncio.TimeoutError:
        return b""


async def run_user_bash(command: str, cwd: str, *, exclude_from_context: bool = False,
                        shell: str | None = None) -> BashExecutionMessage:
    """Run ``command`` with the user's shell; cancelling the task kills the whole group
    and keeps the output printed so far, as pi does."""
    starting = asyncio.ensure_future(asyncio.create_subprocess_exec(
        shell or os.environ.get("SHELL") or "/bin/bash", "-c", command, cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT, start_new_session=True,
    ))
    cancelled = False
    process = None
    chunks: list[bytes] = []  # read as it comes, so an abort keeps what was printed
    try:
        # the command runs before we hear it started: an abort in between must still
        # stop it and keep what it printed, so the start is never cut short
        try:
            process = await asyncio.shield(starting)
        except asyncio.CancelledError:
            process = await starting
            raise
        while chunk := await process.stdout.read(65536):
            chunks.append(chunk)
        await process.wait()
    except asyncio.CancelledError:
        if process is None:  # cancelled twice while starting: nothing to report
            raise
        cancelled = True
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        await process.wait()
        chunks.append(await _printed_before_the_kill(process.stdout))
    output = b"".join(chunks).decode("utf-8", errors="replace")
    shown, truncated = tail_within_budget(output)
    full_path = None
    if truncated:
        handle, full_path = tempfile.mkstemp(prefix="pi-bash-", suffix=".log")
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(output)
    return BashExecutionMessage(
        command=command, output=shown, exit_code=None if cancelled else process.returncode,
        cancelled=cancelled, truncated=truncated, full_output_path=full_path,
        exclude_from_context=exclude_from_context or None,
    )
