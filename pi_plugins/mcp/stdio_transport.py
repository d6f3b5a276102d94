"""Our own stdio transport for MCP servers, over ``anyio.open_process``.

The SDK's ``stdio_client`` ends a server the spec's way (close stdin, wait a 2 s grace,
then SIGTERM; pi 1.6 waits 0.5 s, and so do we) inside a shielded scope and keeps no handle on the process, so a server
spawned but still starting when pi exits held the exit for those 2 s; pi 1.6 exits at
once. This transport keeps the process: :meth:`StdioTransport.end_now` drops the grace
for a server nobody needs any more, and a connected server still gets the grace to
exit on its own. Messages are newline-delimited JSON-RPC, as the SDK's."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import AsyncIterator
from typing import IO, Any

import anyio
import anyio.abc

#: the spec's wait for a server to exit once its stdin closes: pi 1.6's 0.5 s (the SDK's
#: 2 s held a loaded machine's exit for as long as a slow server took to end)
GRACE_S = 0.5
#: after SIGTERM, before SIGKILL (pi 1.6's figure too)
TERM_WAIT_S = 2.0
_POLL_S = 0.01


class StdioTransport:
    """One server process and the two message streams the SDK's ``Client`` takes."""

    def __init__(self, command: str, args: list[str], *, env: dict[str, str], cwd: str, errlog: IO[str]) -> None:
        self.command, self.args, self.env, self.cwd, self.errlog = command, args, env, cwd, errlog
        self.grace = GRACE_S
        self.process: anyio.abc.Process | None = None

    def end_now(self) -> None:
        """The server is not needed any more: end it without the grace (and at once if
        it is still running when its streams close)."""
        self.grace = 0.0
        process = self.process
        if process is not None and process.returncode is None:
            _signal_group(process, signal.SIGTERM)

    @contextlib.asynccontextmanager
    async def streams(self) -> AsyncIterator[Any]:
        from mcp.shared.message import SessionMessage
        from mcp.types import jsonrpc_message_adapter

        process = self.process = await anyio.open_process(
            [self.command, *self.args], env=self.env, cwd=self.cwd, stderr=self.errlog, start_new_session=True)
        if self.grace == 0:
            _signal_group(process, signal.SIGTERM)  # ended while it was being spawned
        to_client, read_stream = anyio.create_memory_object_stream[Any](0)
        write_stream, from_client = anyio.create_memory_object_stream[Any](0)

        async def read_stdout() -> None:
            assert process.stdout is not None
            buffer = b""
            async with to_client:
                with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                    async for chunk in process.stdout:
                        *lines, buffer = (buffer + chunk).split(b"\n")
                        for line in lines:
                            if not line.strip():
                                continue
                            try:
                                item: Any = SessionMessage(jsonrpc_message_adapter.validate_json(line, by_name=False))
                            except ValueError as exc:  # a line that is not JSON-RPC: the SDK's client reports it
                                item = exc
                            await to_client.send(item)

        async def write_stdin() -> None:
            assert process.stdin is not None
            async with from_client:
                with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                    async for message in from_client:
                        data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                        await process.stdin.send(data.encode())
            await to_client.aclose()  # the server cannot be written to: end the session's reads too

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read_stdout)
            tasks.start_soon(write_stdin)
            try:
                yield read_stream, write_stream
            finally:
                with anyio.CancelScope(shield=True):  # the process must not outlive us, whatever cancels
                    await self._stop(process)
                    for stream in (read_stream, write_stream, to_client, from_client):
                        await stream.aclose()
                tasks.cancel_scope.cancel()

    async def _stop(self, process: anyio.abc.Process) -> None:
        """Close stdin; wait the grace (none after :meth:`end_now`); SIGTERM the group,
        then SIGKILL."""
        assert process.stdin is not None
        with contextlib.suppress(OSError, anyio.ClosedResourceError, anyio.BrokenResourceError):
            await process.stdin.aclose()
        if await _exited(process, self.grace):
            return
        _signal_group(process, signal.SIGTERM)
        if not await _exited(process, TERM_WAIT_S):
            _signal_group(process, signal.SIGKILL)
            await _exited(process, TERM_WAIT_S)


async def _exited(process: anyio.abc.Process, within: float) -> bool:
    """Polls ``returncode`` (``wait()`` also waits for the pipes, which a child the
    server started may hold open)."""
    deadline = anyio.current_time() + within
    while process.returncode is None:
        if anyio.current_time() >= deadline:
            return False
        await anyio.sleep(_POLL_S)
    return True


def _signal_group(process: anyio.abc.Process, sig: signal.Signals) -> None:
    """The server and what it started (its own session, so its own process group)."""
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(sig)
