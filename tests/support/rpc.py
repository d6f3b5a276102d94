"""A small client for ``pi --mode rpc``, run in-process (:class:`InProcessPi`, the
default: no interpreter to start) or as a subprocess (for EOF, signals, a closed stdout).

::

    client = RpcClient(InProcessPi(pi, "--mode", "rpc"))   # or RpcClient(pi.popen("--mode", "rpc"))
    state = client.ok("get_state")                    # send, wait for the response, assert success
    client.send("prompt", message="hi")               # send only (returns the command with its id)
    end = client.event("agent_end")                   # wait for an event
    client.close()                                    # EOF on stdin; returns the exit code

Every line the process writes is kept, parsed, in ``lines`` (in order); waits look at
lines from ``after`` (an index, e.g. ``client.mark()``) on, so a test can ask for "the
next agent_end" without being fooled by an earlier one.
"""

from __future__ import annotations

import asyncio
import io
import itertools
import json
import os
import subprocess
import sys
import threading
import time
import traceback
from contextlib import contextmanager
from typing import Any, Callable

DEFAULT_TIMEOUT = 15.0


class RpcClient:
    def __init__(self, process: subprocess.Popen, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.process = process
        self.timeout = timeout
        self.lines: list[dict] = []
        self.stderr_lines: list[str] = []
        self.eof = False
        self.bytes_read = 0
        self._changed = threading.Condition()
        self._ids = itertools.count(1)
        threading.Thread(target=self._read_stdout, daemon=True).start()
        if isinstance(process, InProcessPi):
            self.stderr_lines = process.stderr_lines
        else:
            threading.Thread(target=self._read_stderr, daemon=True).start()

    # ------------------------------------------------------------ reading

    def _read_stdout(self) -> None:
        stream = getattr(self.process.stdout, "buffer", self.process.stdout)
        for raw in iter(stream.readline, b""):  # split on LF only, as the protocol says
            self.bytes_read += len(raw)
            try:
                line = json.loads(raw.decode("utf-8"))
            except ValueError:
                line = {"type": "<not json>", "raw": raw}
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()
        with self._changed:
            self.eof = True
            self._changed.notify_all()

    def _read_stderr(self) -> None:
        for raw in self.process.stderr:
            self.stderr_lines.append(raw)

    @property
    def stderr(self) -> str:
        return "".join(self.stderr_lines)

    def mark(self) -> int:
        """The index the next line will have (for ``after=``)."""
        with self._changed:
            return len(self.lines)

    def position(self, line: dict) -> int:
        """Where ``line`` (an object returned by a wait) came in the output."""
        return next(i for i, seen in enumerate(self.lines) if seen is line)

    def wait_for(self, predicate: Callable[[dict], bool], after: int = 0,
                 timeout: float | None = None, what: str = "a matching line") -> dict:
        deadline = time.monotonic() + (timeout or self.timeout)
        with self._changed:
            index = after
            while True:
                while index < len(self.lines):
                    if predicate(self.lines[index]):
                        return self.lines[index]
                    index += 1
                remaining = deadline - time.monotonic()
                if self.eof or remaining <= 0:
                    break
                self._changed.wait(remaining)
        tail = "\n".join(json.dumps(l)[:300] for l in self.lines[-15:])
        raise AssertionError(f"no {what} after line {after} ({'EOF' if self.eof else 'timed out'}); "
                             f"last lines:\n{tail}\nstderr:\n{self.stderr[-3000:]}")

    def event(self, type: str, after: int = 0, timeout: float | None = None, **fields: Any) -> dict:
        """The first line of ``type`` (with these field values) from ``after`` on."""
        return self.wait_for(lambda l: l.get("type") == type and all(l.get(k) == v for k, v in fields.items()),
                             after, timeout, what=f"{type} {fields or ''}")

    def events(self, type: str | None = None, after: int = 0) -> list[dict]:
        with self._changed:
            return [l for l in self.lines[after:] if type is None or l.get("type") == type]

    def response_to(self, command: dict | str, timeout: float | None = None) -> dict:
        request_id = command["id"] if isinstance(command, dict) else command
        return self.wait_for(lambda l: l.get("type") == "response" and l.get("id") == request_id,
                             timeout=timeout, what=f"response to {request_id}")

    # ------------------------------------------------------------ writing

    def send(self, type: str, **fields: Any) -> dict:
        """Write a command (with a fresh ``id`` unless one is given); returns it."""
        command = {"id": f"req-{next(self._ids)}", "type": type, **fields}
        self.write(json.dumps(command))
        return command

    def write(self, line: str | bytes) -> None:
        """Write one raw line (a newline is added)."""
        data = line.encode("utf-8") if isinstance(line, str) else line
        stream = getattr(self.process.stdin, "buffer", self.process.stdin)
        stream.write(data + b"\n")
        stream.flush()

    def request(self, type: str, timeout: float | None = None, **fields: Any) -> dict:
        """Send a command and wait for its response."""
        return self.response_to(self.send(type, **fields), timeout)

    def ok(self, type: str, timeout: float | None = None, **fields: Any) -> Any:
        """Send a command, check it succeeded and return its ``data`` (None if none)."""
        response = self.request(type, timeout, **fields)
        assert response["success"] is True, f"{type} failed: {response}\nstderr:\n{self.stderr[-3000:]}"
        return response.get("data")

    def answer_ui(self, request: dict, **fields: Any) -> None:
        """Answer an ``extension_ui_request`` (``confirmed=``, ``value=`` or ``cancelled=``)."""
        self.write(json.dumps({"type": "extension_ui_response", "id": request["id"], **fields}))

    # ------------------------------------------------------------ the end

    def close(self, timeout: float | None = None) -> int:
        """Close stdin (EOF) and wait for the process to end; returns its exit code."""
        if not self.process.stdin.closed:
            self.process.stdin.close()
        code = self.process.wait(timeout or self.timeout)
        with self._changed:
            self._changed.wait_for(lambda: self.eof, 2.0)
        return code

    def kill(self) -> None:
        if self.process.poll() is None:  # (in-process: ends stdin and waits)
            self.process.kill()
            self.process.wait(5)


# ---------------------------------------------------------------- pi on a thread


class InProcessPi:
    """``pi <flags>`` run by this interpreter on a thread, looking like a
    :class:`subprocess.Popen` to :class:`RpcClient`: ``stdin`` and ``stdout`` are real
    pipes handed to the app (the RPC server reads and writes them as it would the
    process's), ``wait`` joins the thread and returns the mode's exit code.

    The environment and working directory are the process's, so the caller sets them
    (the ``start_rpc`` fixture does, from the :class:`support.cli.PiRunner`). There are
    no signals to send: tests of SIGTERM start a real process.
    """

    def __init__(self, *flags: str) -> None:
        from support.cli import parse_run_args

        args = parse_run_args(*flags)
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        self.stdin = open(in_w, "wb")
        self.stdout = open(out_r, "rb")
        self._app_stdin = open(in_r, "rb")
        self._app_stdout = open(out_w, "wb")
        self._stderr = _StderrTee()
        self.stderr_lines = self._stderr.lines  # RpcClient reads these instead of a pipe
        self.returncode: int | None = None
        self._thread = threading.Thread(target=self._main, args=(args,), name="pi-in-process", daemon=True)
        self._thread.start()

    def _main(self, args) -> None:
        from pi_plugins.cli.main import _run

        code = 1
        try:
            with self._stderr:
                code = asyncio.run(_run(args, stdin=self._app_stdin, stdout=self._app_stdout))
        except BaseException:  # what a crashed process would print
            self._stderr.write(traceback.format_exc())
        finally:
            self.returncode = code
            _close_quietly(self._app_stdout)  # the client sees EOF, as when a process exits

    def poll(self) -> int | None:
        return None if self._thread.is_alive() else self.returncode

    def wait(self, timeout: float | None = None) -> int:
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise subprocess.TimeoutExpired("pi (in-process)", timeout)
        _close_quietly(self._app_stdin)  # only now: its reader thread has seen EOF or gone
        return self.returncode

    def kill(self) -> None:
        """No process to kill: end stdin (the server shuts down on EOF) and wait."""
        _close_quietly(self.stdin)
        self.wait(10)


def _close_quietly(stream) -> None:
    try:
        stream.close()
    except OSError:
        pass


class _StderrTee(io.TextIOBase):
    """sys.stderr while the app runs: what it says goes to the real stderr and to
    ``lines`` (what :attr:`RpcClient.stderr` shows when a wait fails)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._saved = None

    def __enter__(self):
        self._saved, sys.stderr = sys.stderr, self
        return self

    def __exit__(self, *exc) -> None:
        if sys.stderr is self:
            sys.stderr = self._saved

    def write(self, text: str) -> int:
        self.lines.append(text)
        if self._saved is not None:
            self._saved.write(text)
        return len(text)

    def flush(self) -> None:
        if self._saved is not None:
            self._saved.flush()


# ---------------------------------------------------------------- setting up a PiRunner


def write_settings(pi, **settings: Any) -> None:
    """The global settings.json of a :class:`support.cli.PiRunner`'s agent dir."""
    (pi.agent_dir / "settings.json").write_text(json.dumps(settings))


def write_models(pi, *models: str | dict) -> None:
    """models.json with several models (ids, or dicts of model fields) on the test server."""
    (pi.agent_dir / "models.json").write_text(
        json.dumps(pi.server.models_json("local", models=list(models))))


@contextmanager
def rpc_starter(launch: Callable[..., Any]):
    """``start(*flags)`` starts ``pi --mode rpc`` through ``launch`` (``pi.popen``, or an
    :class:`InProcessPi` maker); every client is ended on leaving (a test may close one
    itself to look at the exit)."""
    clients: list[RpcClient] = []

    def start(*flags: str) -> RpcClient:
        client = RpcClient(launch("--mode", "rpc", *flags))
        clients.append(client)
        return client

    try:
        yield start
    finally:
        for client in clients:
            try:
                client.close(timeout=10)
            finally:
                client.kill()
