"""Running a script in a worker process (:mod:`.worker`), off the event loop: the
harness side of the JSON-lines conversation, the deadline, the abort, and the pool.

At most ``PI_CODEMODE_MAX_WORKERS`` (default 2) workers are alive in one process, as in
pi 1.6; a script waits for a free one in arrival order, and the wait counts toward its
deadline. A finished script hands its worker to the next; a script stopped by its
deadline, an abort or its output limit kills its worker, which frees the slot when it
has exited. Requests from a script (tool calls, look-ups) run as concurrent tasks, and
those still running when the script ends are cancelled.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import sys
import time
import weakref
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from attrs import define, field

from pi_core import AbortSignal

WORKER = Path(__file__).with_name("worker.py")
WORKER_WAIT = 60.0  # pi 1.6: a script that gets no worker within 60 s fails
MAX_OUTPUT_CHARS = 16_777_216  # text and base64 image data, all output together

#: Answers one request of a script: ``(ok, value)``, value JSON-able (None: undefined).
Answer = Callable[[dict], Awaitable[tuple[bool, Any]]]


@define
class Outcome:
    """What a script did: its output in order, and how it ended."""

    ok: bool = False
    error: str | None = None
    output: list[tuple[str, Any]] = field(factory=list)  # ("text" | "image" | "console", value)
    store: dict = field(factory=dict)  # key -> JSON text, or None for a deleted key


class SandboxError(Exception):
    """The script could not run, or was stopped; the message says why and ``outcome``
    holds what it had written by then."""

    outcome: Outcome = Outcome()


class Worker:
    """One worker process."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(cls) -> Worker:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-I", str(WORKER), stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, limit=64 * 1024 * 1024)
        return cls(process)

    @property
    def alive(self) -> bool:
        return self.process.returncode is None

    def send(self, message: dict) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")

    async def receive(self) -> dict:
        assert self.process.stdout is not None
        line = await self.process.stdout.readline()
        if not line:
            stderr = b""
            if self.process.stderr is not None:
                stderr = await self.process.stderr.read()
            await self.process.wait()
            tail = stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
            raise SandboxError(f"The codemode worker stopped (exit code {self.process.returncode}): {tail[0]}")
        return json.loads(line)

    def kill(self) -> None:
        if self.alive:
            self.process.kill()


class WorkerPool:
    """The workers of one event loop (subprocess pipes belong to a loop)."""

    def __init__(self, size: int) -> None:
        self.size = max(1, size)
        self._slots = asyncio.Semaphore(self.size)
        self._idle: list[Worker] = []
        self._all: set[Worker] = set()

    async def acquire(self, timeout: float) -> Worker:
        try:
            await asyncio.wait_for(self._slots.acquire(), timeout)
        except TimeoutError:
            raise SandboxError(f"No codemode worker was free within {timeout:g} seconds") from None
        while self._idle:
            worker = self._idle.pop()
            if worker.alive:
                return worker
        try:
            worker = await Worker.start()
        except BaseException:
            self._slots.release()
            raise
        self._all.add(worker)
        return worker

    def release(self, worker: Worker) -> None:
        """The script ended cleanly: the worker serves the next."""
        self._idle.append(worker)
        self._slots.release()

    async def discard(self, worker: Worker) -> None:
        """Kill the worker; its slot is free once it has exited."""
        worker.kill()
        self._all.discard(worker)
        try:
            await asyncio.shield(worker.process.wait())
        finally:
            self._slots.release()

    def close(self) -> None:
        for worker in list(self._all):
            worker.kill()
        self._all.clear()
        self._idle.clear()


def _settled(settle: Callable[[asyncio.Task, int], None], request_id: int, task: asyncio.Task) -> None:
    settle(task, request_id)


_pools: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def pool() -> WorkerPool:
    """This event loop's pool."""
    loop = asyncio.get_running_loop()
    found = _pools.get(loop)
    if found is None:
        size = int(os.environ.get("PI_CODEMODE_MAX_WORKERS") or 2)
        found = _pools[loop] = WorkerPool(size)
    return found


async def run_script(code: str, config: dict, answer: Answer, *, timeout: float | None = None,
                     signal: AbortSignal | None = None) -> Outcome:
    """Run ``code`` with the globals ``config`` describes; ``answer`` serves its requests.
    Raises :class:`SandboxError` when the deadline passes, the signal aborts, or the
    output grows past its limit; the outcome so far is on the exception's ``outcome``."""
    began = time.monotonic()
    workers = pool()
    wait = WORKER_WAIT if timeout is None else min(WORKER_WAIT, timeout)
    try:
        worker = await workers.acquire(wait)
    except SandboxError as busy:
        if timeout is not None and wait == timeout:
            raise SandboxError(f"Script timed out: Execution timed out after {round(timeout * 1000)} ms") from None
        raise busy from None
    outcome = Outcome()
    requests: set[asyncio.Task] = set()
    clean = False

    def settle(task: asyncio.Task, request_id: int) -> None:
        requests.discard(task)
        if task.cancelled() or not worker.alive:
            return
        failure = task.exception()
        ok, value = (False, str(failure) or type(failure).__name__) if failure is not None else task.result()
        try:
            text = "" if value is None and ok else json.dumps(value, ensure_ascii=False, default=str)
            worker.send({"op": "settle", "id": request_id, "ok": ok, "value": text})
        except (ConnectionError, RuntimeError):
            pass  # the worker went away; the conversation notices

    async def converse() -> None:
        nonlocal clean
        size = 0
        worker.send({"op": "run", "code": code, "config": config})
        while True:
            message = await worker.receive()
            op = message.get("op")
            if op == "out":
                value = message.get("value")
                size += len(value) if isinstance(value, str) else len((value or {}).get("data", ""))
                if size > MAX_OUTPUT_CHARS:
                    raise SandboxError(
                        f"The script's output passed {MAX_OUTPUT_CHARS} characters; write large data to a "
                        "file with a tool instead.")
                outcome.output.append((message.get("kind", "text"), value))
            elif op == "req":
                task = asyncio.ensure_future(answer(message))
                requests.add(task)
                task.add_done_callback(functools.partial(_settled, settle, message["id"]))
            elif op == "done":
                outcome.ok = bool(message.get("ok"))
                outcome.error = message.get("error")
                outcome.store = message.get("store") or {}
                clean = True
                return

    talking = asyncio.ensure_future(converse())
    stop = asyncio.ensure_future(signal.wait()) if signal is not None else None
    remaining = None if timeout is None else max(0.0, timeout - (time.monotonic() - began))
    try:
        done, _ = await asyncio.wait({talking, *([stop] if stop else [])}, timeout=remaining,
                                     return_when=asyncio.FIRST_COMPLETED)
        if talking in done:
            talking.result()  # a broken worker or the output limit raises here
            return outcome
        if stop is not None and stop in done:
            raise SandboxError("Script aborted")
        raise SandboxError(f"Script timed out: Execution timed out after {round((timeout or 0) * 1000)} ms")
    except SandboxError as exc:
        exc.outcome = outcome
        raise
    finally:
        for task in (talking, stop):
            if task is not None and not task.done():
                task.cancel()
        for task in list(requests):
            task.cancel()
        if requests:
            await asyncio.gather(*requests, return_exceptions=True)
        if clean and worker.alive:
            workers.release(worker)
        else:
            await workers.discard(worker)


def close_idle() -> None:
    """Kill this loop's idle workers (a session ended); busy ones finish their script."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    found = _pools.get(loop)
    if found is not None:
        for worker in found._idle:
            worker.kill()
            found._all.discard(worker)
        found._idle.clear()
