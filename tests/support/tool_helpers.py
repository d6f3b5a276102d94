"""Helpers for the coding-tool tests (tests/tools): run a tool the way the agent loop
does, drop root privileges for permission tests, tell whether a process is alive."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any, Callable

from pi_core import hookimpl
from pi_core.context import Context
from pi_core.plugins import Plugins
from pi_core.protocol.signal import AbortSignal
from pi_core.protocol.tools import ToolResult, ToolRun, as_result
from pi_plugins.tools import builtin_tools
from pi_plugins.tools.environment import ExecutionEnvironment, LocalEnvironment

TOOLS = {t.name: t for t in builtin_tools()}


class EnvironmentPlugin:
    """A plugin whose ``execution_environment`` hook answers with ``env``."""

    def __init__(self, env: ExecutionEnvironment):
        self.env = env

    @hookimpl
    def execution_environment(self, ctx):
        return self.env


class NoRipgrep(LocalEnvironment):
    """The local machine as if ripgrep were not installed: grep's Python search runs."""

    async def which(self, program: str) -> str | None:
        return None if program == "rg" else await super().which(program)


async def invoke(
    name: str,
    args: dict,
    cwd: str | Path,
    *,
    env: ExecutionEnvironment | None = None,
    signal: AbortSignal | None = None,
    updates: list[ToolResult] | None = None,
) -> ToolResult:
    """Validate and execute one tool call; an exception becomes an error result with its
    text, exactly as the agent loop does it."""
    plugins = Plugins()
    if env is not None:
        plugins.register(EnvironmentPlugin(env))
    ctx = Context(cwd=str(cwd), plugins=plugins)
    tool = TOOLS[name]
    run = ToolRun("call_1", signal or AbortSignal(), ctx, updates.append if updates is not None else None)
    try:
        return as_result(await tool.execute(tool.validate(args), run))
    except Exception as exc:
        return ToolResult.error(str(exc))


def call(name: str, args: dict, cwd: str | Path, **kwargs: Any) -> ToolResult:
    return asyncio.run(invoke(name, args, cwd, **kwargs))


def text_of(result: ToolResult) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting to be reaped counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in (b"Z", b"X")


class Updates(list):
    """The updates a tool streams (pass as ``updates=``), calling ``when(update)`` on each
    as it arrives: a test acts on what the tool said, not after a guessed delay."""

    def __init__(self, when: Callable[[ToolResult], Any]) -> None:
        super().__init__()
        self.when = when

    def append(self, update: ToolResult) -> None:
        super().append(update)
        self.when(update)


def wait_dead(pids: list[int], within: float = 3.0) -> list[int]:
    """The pids still alive after ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        living = [p for p in pids if alive(p)]
        if not living:
            return []
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


NOBODY = 65534


def as_unprivileged(function: Callable[[], Any]) -> Any:
    """Run ``function`` in a forked child as user nobody and return its (JSON) result.

    The tests run as root, and root reads and writes any file whatever its mode, so a
    permission test would prove nothing. The child gives up root first; as a normal
    user the function simply runs in this process.
    """
    if os.geteuid() != 0:
        return function()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            payload = {"result": function()}
        except BaseException as exc:  # noqa: BLE001 - report anything to the parent
            payload = {"crash": f"{type(exc).__name__}: {exc}"}
        os.write(write_end, json.dumps(payload).encode())
        os._exit(0)
    os.close(write_end)
    chunks = []
    while chunk := os.read(read_end, 65536):
        chunks.append(chunk)
    os.close(read_end)
    os.waitpid(pid, 0)
    payload = json.loads(b"".join(chunks))
    if "crash" in payload:
        raise AssertionError(f"the unprivileged child failed: {payload['crash']}")
    return payload["result"]
