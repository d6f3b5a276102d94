"""Commands that try to outlive pi, and the count of what is left of them.

:func:`escape_forms` is a bash command that forks, leaves the session (``setsid``), drops
its whole environment and leaves the session (``env -i setsid``), double forks, and
sleeps. Its processes are found by a number in their command lines (``sleep
600.<mark><n>``), since ``env -i`` drops any marker in the environment; pi itself is
found by ``PI_ESCAPE_RUN=<mark>`` in its environment, which its warden inherits.

:func:`kill_points` is the issue's figure: SIGKILL of ``pi -p``, ``pi serve`` or the
chat at random points during its bash command (:func:`escape_forms`), and the processes
of the session left afterwards (``bench/bench_kill_points.py`` and ``tests/safety/test_no_escape.py``).
"""

from __future__ import annotations

import contextlib
import json
import os
import pty
import random
import re
import signal
import subprocess
import sys
import threading
import time

from support.llm_server import Reply

SLEEPS = 5
ENV = "PI_ESCAPE_RUN"


def new_mark() -> int:
    return random.randrange(10**8, 10**9)


def escape_forms(mark: int) -> str:
    def sleep(n: int) -> str:
        return f"sleep 600.{mark}{n}"

    return (f"{sleep(1)} & setsid sh -c '{sleep(2)}' & env -i setsid {sleep(3)} & "
            f"(sh -c '{sleep(4)} &' &); echo started; {sleep(5)}")


def _read(pid: str, what: str) -> bytes | None:
    try:
        with open(f"/proc/{pid}/{what}", "rb") as f:
            return f.read()
    except OSError:
        return None


def _alive(pid: str) -> bool:
    stat = _read(pid, "stat")
    return stat is not None and stat.rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")


def session_processes(mark: int) -> dict[int, str]:
    """Live processes with ``mark`` in their command line or ``PI_ESCAPE_RUN=<mark>`` in
    their environment (pi, its warden, the commands), with their command lines."""
    found = {}
    text, entry = str(mark).encode(), f"{ENV}={mark}".encode()
    me = str(os.getpid())
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or pid == me:
            continue
        line = _read(pid, "cmdline") or b""
        if text in line or entry in (_read(pid, "environ") or b"").split(b"\0"):
            if _alive(pid):
                found[int(pid)] = line.replace(b"\0", b" ").decode(errors="replace").strip()
    return found


def sleeping(mark: int) -> int:
    """How many of the escape forms' sleeps run."""
    return sum(line.startswith(f"sleep 600.{mark}") for line in session_processes(mark).values())


def left_after(mark: int, grace: float = 5.0) -> dict[int, str]:
    """The session's processes still alive ``grace`` seconds from now at the latest."""
    deadline = time.monotonic() + grace
    while (left := session_processes(mark)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return left


def kill_all(found: dict[int, str]) -> None:
    for pid in found:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def start_print_mode(pi, server, mark: int, command: list[str] | None = None) -> subprocess.Popen:
    """``pi -p`` (or ``command``) whose model answers every request with the escape forms."""
    server.default = Reply(tool_calls=[("bash", {"command": escape_forms(mark)})])
    return subprocess.Popen(command or pi.command("-p", "run it"), cwd=pi.cwd,
                            env={**pi.env, ENV: str(mark)}, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def command_started(mark: int) -> bool:
    """Whether a process of the command runs (its shell carries the mark)."""
    return any(str(mark) in line for line in session_processes(mark).values())


def start_serve(pi, server, mark: int, stack: contextlib.ExitStack) -> subprocess.Popen:
    """``pi serve`` with one session whose prompt (sent over its WebSocket, kept open in
    ``stack``) makes the model run the escape forms."""
    import httpx
    from websockets.sync.client import connect

    server.default = Reply(tool_calls=[("bash", {"command": escape_forms(mark)})])
    token = f"kill-points-{mark}-0123456789"
    served = subprocess.Popen([sys.executable, "-m", "pi_plugins.cli", "serve", "--port", "0"],
                              cwd=pi.cwd, env={**pi.env, "PI_SERVE_TOKEN": token, ENV: str(mark)},
                              text=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    stack.callback(_reap, served)
    assert served.stdout is not None
    port = int(re.search(r"127\.0\.0\.1:(\d+)/", served.stdout.readline())[1])  # type: ignore[index]
    http = stack.enter_context(httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=15,
                                            headers={"Authorization": f"Bearer {token}"}))
    session = http.post("/api/sessions", json={"cwd": str(pi.cwd), "model": "local/test-model"})
    socket = stack.enter_context(connect(  # its server is killed: no close frame comes
        f"ws://127.0.0.1:{port}/api/sessions/{session.json()['id']}/rpc?token={token}",
        close_timeout=0.5))
    socket.send(json.dumps({"id": "p", "type": "prompt", "message": "run it"}))
    return served


def start_chat(pi, server, mark: int, stack: contextlib.ExitStack) -> subprocess.Popen:
    """The interactive chat on a pseudo-terminal (read and thrown away on a thread, as a
    terminal would), started with the prompt that makes the model run the escape forms."""
    server.default = Reply(tool_calls=[("bash", {"command": escape_forms(mark)})])
    terminal, screen = pty.openpty()
    chat = subprocess.Popen(pi.command("run it"), cwd=pi.cwd,
                            env={**pi.env, "TERM": "xterm-256color", ENV: str(mark)},
                            stdin=screen, stdout=screen, stderr=screen, start_new_session=True)
    os.close(screen)
    stack.callback(_reap, chat)
    threading.Thread(target=_drain, args=(terminal,), daemon=True).start()
    return chat


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 65536):
            pass
    except OSError:  # the chat is gone: the terminal's other end closed
        pass
    finally:
        os.close(fd)


def _reap(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.kill()
    process.wait()


STARTS = {"print": lambda pi, server, mark, stack: start_print_mode(pi, server, mark),
          "serve": start_serve, "chat": start_chat}


def kill_points(pi, server, count: int, seed: int = 0, spread: float = 0.3,
                mode: str = "print") -> list[dict]:
    """SIGKILL pi (``mode``: ``pi -p``, ``pi serve`` or the chat) at ``count`` random
    points of its bash command: a random moment within ``spread`` seconds of the
    command's first process appearing, so some points fall while the escape forms are
    still starting and most while they all run. For each: when (after the command
    started), how many sleeps ran at the kill, and the session's processes left
    afterwards (killed once counted)."""
    rng = random.Random(seed)
    points = []
    for _ in range(count):
        mark = new_mark()
        with contextlib.ExitStack() as stack:
            process = STARTS[mode](pi, server, mark, stack)
            deadline = time.monotonic() + 30
            while not command_started(mark):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("pi ended, or its command did not start within 30 s")
                time.sleep(0.002)
            at = rng.uniform(0, spread)
            time.sleep(at)
            running = sleeping(mark)
            process.kill()
            process.wait()
        left = left_after(mark)
        kill_all(left)
        points.append({"at": at, "sleeps_at_kill": running, "left": sorted(left.values())})
    return points


def fallback_command(pi, *args: str) -> list[str]:
    """``pi`` as on a machine where no cgroup can be made (the parent-death signal,
    process groups and environment markers only)."""
    launcher = ("import sys; from pi_plugins.tools import cgroups; cgroups.own_folder = lambda: None; "
                "from pi_plugins.cli.main import main; sys.argv[0] = 'pi'; main()")
    return [sys.executable, "-c", launcher, *pi.flags(*args)]
