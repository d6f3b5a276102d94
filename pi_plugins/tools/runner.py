"""The one way a command runs: the bash tool, the user's ``!cmd`` / ``!!cmd`` and
``ctx.exec`` all come here, through an execution environment.

One kill policy: on timeout, on abort and when the caller is cancelled the command and
every process it started are killed (:meth:`Process.kill`, which reaches processes that
left the group). One bounded output buffer (:class:`OutputCollector`: a rolling tail in
memory, the whole output in a temp file once it outgrows the budget) and one truncation
rule (the tail, 2,000 lines or 50 KB).

A command returns when it exits, not when its output pipe closes: a background job it
started on purpose (``server &``) may hold the pipe for ever. That job lives on until
the session ends (see :mod:`pi_plugins.tools.processes`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from attrs import define

from pi_plugins.tools.output import OutputCollector
from pi_plugins.tools.truncation import Truncation

if TYPE_CHECKING:
    from pi_core.protocol.environment import ExecutionEnvironment

#: After the command exits, how long to wait for output still in the pipe. A background
#: job that keeps the pipe open must not hold the caller up.
EXIT_GRACE = 0.1
#: After a kill, how long to wait for the last output (every writer is dead by then).
KILL_GRACE = 1.0


_draining: set[asyncio.Task] = set()


def _drain(process, readers: Sequence[asyncio.Future]) -> None:
    """Let ``readers`` read the pipes to their end in the background, then close them."""

    async def finish() -> None:
        try:
            await asyncio.gather(*readers, return_exceptions=True)
        finally:
            process.close()

    task = asyncio.ensure_future(finish())
    _draining.add(task)
    task.add_done_callback(_draining.discard)


@define
class CommandResult:
    """How a command ended and what it printed (its tail within budget)."""

    output: str
    truncation: Truncation
    #: The whole output, once it outgrew the budget.
    full_output_path: str | None
    #: None when the command was stopped (timeout, abort); negative: killed by a signal.
    exit_code: int | None
    timed_out: bool = False
    aborted: bool = False
    #: stderr, when it was not merged into ``output`` (its tail within budget).
    stderr: str = ""
    #: Length in bytes of the last line (for a notice about a cut line).
    last_line_bytes: int = 0
    #: Stopped for printing more than ``max_buffer`` bytes (pi 1.6's ``maxBuffer``).
    overflowed: bool = False

    @property
    def truncated(self) -> bool:
        return self.truncation.truncated or self.overflowed

    @property
    def killed(self) -> bool:
        return self.timed_out or self.aborted or self.overflowed


async def run_command(
    env: ExecutionEnvironment,
    argv: list[str],
    *,
    cwd: str | None = None,
    signal: Any = None,
    timeout: float | None = None,
    merge_stderr: bool = True,
    on_output: Callable[[OutputCollector], None] | None = None,
    prefix: str = "pi-bash",
    max_buffer: int | None = None,
) -> CommandResult:
    """Run ``argv`` through ``env`` to its end, a timeout, or an abort of ``signal``
    (a :class:`pi_core.protocol.signal.AbortSignal`). ``on_output`` is called with the collector
    after each piece of output. Past ``max_buffer`` bytes of stdout and stderr together the
    command is killed, its output kept up to the limit (pi 1.6's ``pi.exec`` ``maxBuffer``;
    its code is then 128 + the signal, like a shell's). Spawn errors (``OSError``) propagate."""
    output = OutputCollector(env, prefix)
    errors = OutputCollector(env, f"{prefix}-stderr") if not merge_stderr else None
    if signal is not None and signal.aborted:
        return CommandResult("", output.snapshot(), None, None, aborted=True)
    process = await env.spawn(argv, cwd=cwd, merge_stderr=merge_stderr)

    draining = False  # the call has returned: what a background job prints is dropped
    room = [max_buffer]  # bytes still allowed (None: no limit)

    def within(chunk: bytes) -> bytes:
        if room[0] is None:
            return chunk
        if len(chunk) > room[0]:
            chunk, room[0] = chunk[:room[0]], -1
            process.kill()
        else:
            room[0] -= len(chunk)
        return chunk

    async def pump() -> None:
        while chunk := await process.read():
            if draining or not (chunk := within(chunk)):
                continue
            await output.add(chunk)
            if on_output is not None:
                on_output(output)

    async def pump_errors() -> None:
        if errors is not None:
            while chunk := await process.read_errors():
                if not draining and (chunk := within(chunk)):
                    await errors.add(chunk)

    stop_on_abort = signal.on_abort(process.kill) if signal is not None else (lambda: None)
    readers = [asyncio.ensure_future(pump()), asyncio.ensure_future(pump_errors())]
    exited = asyncio.ensure_future(process.wait())
    timed_out = False
    try:
        done, _ = await asyncio.wait([exited], timeout=timeout)
        if not done:
            timed_out = True
            process.kill()
            await exited
        stopped = timed_out or room[0] == -1 or (signal is not None and signal.aborted)
        if stopped:
            await process.wait_killed()
        await asyncio.wait(readers, timeout=KILL_GRACE if stopped else EXIT_GRACE)
        for reader in readers:
            if reader.done() and not reader.cancelled() and (failed := reader.exception()) is not None:
                raise failed
        code = exited.result()
    finally:
        stop_on_abort()
        if not exited.done():  # cancelled: nothing may outlive the command
            process.kill()
        draining = True
        if exited.done() and not all(r.done() for r in readers):
            # A background job holds the pipe (``server &``): keep reading it, so the job
            # never dies of a closed pipe, until it ends (or the session stops it).
            _drain(process, readers)
        else:
            for reader in readers:
                reader.cancel()
            process.close()
        exited.cancel()
        output.close()
        if errors is not None:
            errors.close()
    overflowed = room[0] == -1 and not timed_out
    aborted = not timed_out and not overflowed and signal is not None and signal.aborted
    if overflowed:
        code = 128 - code if code < 0 else code or 128 + 9  # as a shell reports a kill (SIGKILL: 137)
    snapshot = output.snapshot()
    return CommandResult(
        output=snapshot.content, truncation=snapshot, full_output_path=output.full_output_path,
        exit_code=None if timed_out or aborted else code, timed_out=timed_out, aborted=aborted,
        stderr=errors.snapshot().content if errors is not None else "",
        last_line_bytes=output.last_line_bytes, overflowed=overflowed,
    )
