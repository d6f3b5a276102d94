"""Process supervision: no process a command started outlives its command's end, or pi.

Where the machine allows it each command runs in a cgroup (v2) of its own
(:mod:`pi_plugins.tools.warden`): nothing it starts can leave that, and killing the
cgroup kills all of it. Elsewhere a command may leave its process group (``setsid``,
``nohup … &``, double forks), so a group kill is not enough, and two things together
find what it started:

- every command gets a marker in its environment (``PI_COMMAND_ID``), inherited by
  every descendant; a kill sweeps ``/proc`` for it;
- the descendants and session members of what was found, by ``/proc`` too.

An orphan goes to init (or the nearest subreaper), which reaps it: this process does not
make itself a subreaper (that takes ``prctl``, which the standard library does not offer).

Elsewhere (no ``/proc``) the process group is the fallback.

A command that ended normally may leave a process running on purpose (``npm run dev
&``): it stays registered under its owner (the session's ``ctx``) and is stopped by
:func:`stop_commands` when the session ends, and in any case when this process exits
(and, should pi be killed, by its warden).
"""

from __future__ import annotations

import atexit
import os
import signal
import threading
import time
from typing import Any

from pi_core.protocol.records import field, record
from pi_plugins.tools import cgroups

MARKER = "PI_COMMAND_ID"

_lock = threading.Lock()
_supervising = False


def supervise() -> None:
    """Stop every command still running when this process exits (registered once)."""
    global _supervising
    with _lock:
        if not _supervising:
            _supervising = True
            atexit.register(stop_commands)


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
    of them. Zombies and this process are left out. (``everywhere`` is kept for callers:
    every live process is searched for the marker in any case, since an orphan goes to
    init.)"""
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
        roots.update(pid for pid in alive if _has_marker(pid, entry))
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
    return killed


def dead(pids: set[int]) -> bool:
    """Whether every one of ``pids`` has exited (a zombie counts as dead)."""
    return not any((row := _stat(pid)) is not None and row[3] not in ("Z", "X") for pid in pids)


# ---------------------------------------------------------------- the registry


@record(eq=False)
class Command:
    """One command started by an execution environment."""

    leader: int
    marker: str
    owner: Any = field(default=None, repr=False)
    ended: bool = False  # the leader exited and was reaped
    #: Its cgroup folder, where commands run in cgroups.
    cgroup: str | None = None
    #: The warden guarding it (:mod:`pi_plugins.tools.warden`), told when it is over.
    warden: Any = field(default=None, repr=False)

    def kill(self) -> set[int]:
        if self.cgroup is not None:
            return cgroups.kill(self.cgroup)
        return kill_command(None if self.ended else self.leader, self.marker)

    def survivors(self) -> set[int]:
        if self.cgroup is not None:
            return cgroups.members(self.cgroup)
        return command_processes(None, self.marker)

    def release(self) -> None:
        """Nothing of it is left (or all of it was killed): remove its cgroup (once
        its last process is gone) and stop its warden watching its group."""
        if self.cgroup is not None:
            tidy(self.cgroup)
        elif self.warden is not None:
            self.warden.forget_group(self.leader)


_commands: dict[str, Command] = {}
#: Cgroups of killed commands whose processes had not all died yet: removed later.
_unremoved: set[str] = set()


def tidy(folder: str | None = None) -> None:
    """Remove ``folder`` and the cgroups of killed commands left earlier, those now
    empty."""
    with _lock:
        folders = set(_unremoved) | ({folder} if folder else set())
    left = {f for f in folders if not cgroups.remove(f)}
    with _lock:
        _unremoved.difference_update(folders - left)
        _unremoved.update(left)


def register(command: Command) -> None:
    with _lock:
        _commands[command.marker] = command
        retry = bool(_unremoved)
    if retry:
        tidy()


def finished(command: Command) -> None:
    """The command's leader ended normally: forget it unless it left processes running
    (a server started with ``&``), which live until its owner stops them."""
    command.ended = True
    left = command.survivors()
    if not left:
        with _lock:
            _commands.pop(command.marker, None)
        command.release()


def killed(command: Command) -> None:
    """``command`` was killed: forget it (its cgroup goes once its processes are dead)."""
    with _lock:
        _commands.pop(command.marker, None)
    command.release()


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
    while time.monotonic() < deadline and not dead(killed_now):
        time.sleep(0.01)
    tidy()
    return len(killed_now)
