"""Process supervision: no process a command started outlives its command's end.

A command may leave its process group (``setsid``, ``nohup … &``, double forks), so a
group kill is not enough. Three things together find everything it started:

- every command gets a marker in its environment (``PI_COMMAND_ID``), inherited by
  every descendant; a kill sweeps ``/proc`` for it;
- on Linux this process becomes a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``),
  so an orphan comes back to us instead of to init, and its zombie is ours to reap;
- the descendants and session members of what was found, by ``/proc`` too.

Elsewhere (no ``/proc``) the process group is the fallback.

A command that ended normally may leave a process running on purpose (``npm run dev
&``): it stays registered under its owner (the session's ``ctx``) and is stopped by
:func:`stop_commands` when the session ends, and in any case when this process exits.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
import time
from collections import deque
from typing import Any

from attrs import define, field

MARKER = "PI_COMMAND_ID"
PR_SET_CHILD_SUBREAPER = 36

_lock = threading.Lock()
_subreaper: bool | None = None


def become_subreaper() -> bool:
    """Make orphaned descendants come back to this process (Linux); once. True if it is
    a subreaper."""
    global _subreaper
    if _subreaper is None:
        _subreaper = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                libc = ctypes.CDLL(None, use_errno=True)
                _subreaper = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
            except (OSError, AttributeError):
                pass
        atexit.register(stop_commands)
    return _subreaper


def new_marker() -> str:
    return os.urandom(16).hex()  # as unique as uuid4's hex, without importing uuid


# ---------------------------------------------------------------- /proc


def _stat(pid: int | str) -> tuple[int, int, int, str, int] | None:
    """(pid, parent pid, session id, state, process group) from /proc, or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            rest = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(pid), int(rest[1]), int(rest[3]), rest[0].decode(), int(rest[2])


def _table() -> list[tuple[int, int, int, str, int]]:
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    return [row for name in names if name.isdigit() and (row := _stat(name)) is not None]


def _has_marker(pid: int, entry: bytes) -> bool:
    try:
        fd = os.open(f"/proc/{pid}/environ", os.O_RDONLY)
    except OSError:
        return False
    try:
        data = b""
        while chunk := os.read(fd, 65536):
            data += chunk
    except OSError:
        return False
    finally:
        os.close(fd)
    return data.startswith(entry + b"\0") or (b"\0" + entry + b"\0") in data or data.endswith(b"\0" + entry)


def _descendants(roots: set[int], children: dict[int, list[int]]) -> set[int]:
    found, stack = set(), list(roots)
    while stack:
        pid = stack.pop()
        if pid not in found:
            found.add(pid)
            stack.extend(children.get(pid, ()))
    return found


def command_processes(leader: int | None, marker: str | None, *, everywhere: bool = False) -> set[int]:
    """Every live process of one command: those carrying its marker, the leader's
    descendants and session members (while the leader lives), and the descendants of all
    of them. Zombies and this process are left out.

    Once the leader is reaped, this process (a subreaper) is an ancestor of everything
    the command left (orphans come back to it), so only its own descendants need be
    searched for the marker. While processes are being killed, an orphan may be between
    parents, so a kill searches ``everywhere``."""
    table = _table()
    me = os.getpid()
    alive = {pid for pid, _, _, state, _ in table if state != "Z" and pid != me}
    children: dict[int, list[int]] = {}
    for pid, parent, *_ in table:
        children.setdefault(parent, []).append(pid)
    roots: set[int] = set()
    if leader is not None:
        roots.add(leader)
        roots.update(pid for pid, _, session, _, _ in table if session == leader)
    if marker:
        entry = f"{MARKER}={marker}".encode()
        candidates = alive if everywhere or not _subreaper else _descendants({me}, children) & alive
        roots.update(pid for pid in candidates if _has_marker(pid, entry))
    return _descendants(roots, children) & alive


def process_tree(pid: int) -> set[int]:
    """``pid``'s descendants and the members of the session it leads, where /proc tells."""
    return command_processes(pid, None) - {pid}


# ---------------------------------------------------------------- killing


def kill_command(leader: int | None, marker: str | None) -> set[int]:
    """SIGKILL the leader's group and every process of the command, again until none is
    left (a process forking while we kill is caught on the next sweep). ``leader`` is
    None once it has been reaped (its pid may be reused). Returns what was killed."""
    killed: set[int] = set()
    if leader is not None:
        try:
            os.killpg(leader, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, OSError):
            pass
    if not os.path.isdir("/proc"):
        return killed
    for _ in range(20):
        targets = command_processes(leader, marker, everywhere=True) - killed
        if leader is not None:
            targets.discard(leader)  # killed with its group; its Popen reaps it
        if not targets:
            break
        for pid in targets:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        killed |= targets
    _adopted.update(killed)
    reap()
    return killed


#: Processes we killed or left running that may come back to us as orphans.
_adopted: set[int] = set()
#: The process groups (= leader pids) of recent commands: an orphan's zombie of one of
#: them is ours to reap.
_groups: deque[int] = deque(maxlen=1000)


def dead(pids: set[int]) -> bool:
    """Whether every one of ``pids`` has exited (a zombie counts as dead)."""
    return not any((row := _stat(pid)) is not None and row[3] not in ("Z", "X") for pid in pids)


def reap() -> None:
    """Collect the exit of every orphan of our commands that came back to us and ended:
    those we killed or saw left running, and those of a command's process group or
    session. Never a command's leader (its Popen waits for it) nor another child of this
    process, whose owner waits for it."""
    if not _subreaper:
        return
    me = os.getpid()
    groups = set(_groups)
    for pid, parent, session, state, group in _table():
        if parent != me or state != "Z" or pid in groups:
            continue
        if pid in _adopted or group in groups or session in groups:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
            _adopted.discard(pid)
    for pid in list(_adopted):
        if _stat(pid) is None:
            _adopted.discard(pid)


# ---------------------------------------------------------------- the registry


@define(eq=False)
class Command:
    """One command started by an execution environment."""

    leader: int
    marker: str
    owner: Any = field(default=None, repr=False)
    ended: bool = False  # the leader exited and was reaped

    def kill(self) -> set[int]:
        return kill_command(None if self.ended else self.leader, self.marker)

    def survivors(self) -> set[int]:
        return command_processes(None, self.marker)


_commands: dict[str, Command] = {}


def register(command: Command) -> None:
    with _lock:
        _commands[command.marker] = command
        _groups.append(command.leader)


def finished(command: Command) -> None:
    """The command's leader ended normally: forget it unless it left processes running
    (a server started with ``&``), which live until its owner stops them."""
    command.ended = True
    left = command.survivors()
    with _lock:
        if not left:
            _commands.pop(command.marker, None)
    _adopted.update(left)
    reap()


def killed(command: Command) -> None:
    with _lock:
        _commands.pop(command.marker, None)


def running(owner: Any = None) -> list[Command]:
    """The commands (with what they left running) of ``owner``, or of everyone."""
    with _lock:
        return [c for c in _commands.values() if owner is None or c.owner is owner]


def stop_commands(owner: Any = None) -> int:
    """Kill the commands of ``owner`` (every command when None) and everything they
    left running, and wait (briefly) for them to die; returns how many were killed."""
    killed_now: set[int] = set()
    for command in running(owner):
        killed_now |= command.kill()
        killed(command)
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        reap()
        if dead(killed_now):
            break
        time.sleep(0.01)
    reap()
    return len(killed_now)
