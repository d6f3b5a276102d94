"""Linux control groups (v2) as a container for commands: a folder of the kernel's that
holds every process started in it and every descendant, whatever session or process
group they move to, so nothing a command starts can leave it (``setsid``, ``env -i``,
double forks). Killing the folder (``cgroup.kill``) kills all of them at once.

Only the core files of cgroup v2 are used (``cgroup.procs``, ``cgroup.kill``,
``cgroup.events``): no controller, so this works in the hybrid layout (cgroup v2 at
``/sys/fs/cgroup/unified``) as in the unified one, wherever this process may create a
folder under its own cgroup (root, a delegated systemd unit, a container with its own
cgroup namespace). Elsewhere :func:`own_folder` answers None and the callers fall back.
"""

from __future__ import annotations

import os
import re
import signal


def _unescape(field: str) -> str:
    """A path field of ``/proc/self/mountinfo`` (spaces and the like are octal escapes)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), field)


def unified_mount(mountinfo: str = "/proc/self/mountinfo") -> tuple[str, str] | None:
    """(where the cgroup v2 hierarchy is mounted, the cgroup that mount shows as its
    root), or None when there is no cgroup2 mount."""
    try:
        with open(mountinfo) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        try:
            kind = fields[fields.index("-") + 1]
        except (ValueError, IndexError):
            continue
        if kind == "cgroup2":
            return _unescape(fields[4]), _unescape(fields[3])
    return None


def own_cgroup(proc_cgroup: str = "/proc/self/cgroup") -> str | None:
    """This process's cgroup in the v2 hierarchy (the ``0::`` line), or None."""
    try:
        with open(proc_cgroup) as f:
            for line in f:
                if line.startswith("0::"):
                    return line[3:].rstrip("\n") or "/"
    except OSError:
        pass
    return None


def own_folder() -> str | None:
    """The folder of this process's own cgroup, if it is one this process may create
    cgroups under; else None."""
    mount, cgroup = unified_mount(), own_cgroup()
    if mount is None or cgroup is None:
        return None
    point, root = mount
    root = root.rstrip("/")
    if cgroup != root and not cgroup.startswith(root + "/"):
        return None  # this cgroup is outside what the mount shows
    folder = point.rstrip("/") + cgroup[len(root):]
    if not (os.access(folder, os.W_OK) and os.access(os.path.join(folder, "cgroup.procs"), os.W_OK)):
        return None
    return folder


def members(folder: str) -> set[int]:
    """The processes in ``folder`` and in the cgroups below it."""
    found: set[int] = set()
    for here, _, _ in os.walk(folder):
        try:
            with open(os.path.join(here, "cgroup.procs")) as f:
                found.update(int(line) for line in f if line.strip())
        except (OSError, ValueError):
            continue
    return found


def populated(folder: str) -> bool:
    """Whether any process is left in ``folder`` or below it."""
    try:
        with open(os.path.join(folder, "cgroup.events")) as f:
            return any(line.split() == ["populated", "1"] for line in f)
    except OSError:
        return False  # the folder is gone


def kill(folder: str) -> set[int]:
    """SIGKILL every process in ``folder`` and below it; returns those it held. With
    ``cgroup.kill`` (Linux 5.14) the kernel does it in one step, processes forking
    meanwhile included; before that, what ``cgroup.procs`` lists is killed until it is
    empty."""
    held = members(folder)
    try:
        with open(os.path.join(folder, "cgroup.kill"), "w") as f:
            f.write("1")
        return held
    except FileNotFoundError:
        if not os.path.isdir(folder):
            return held
    except OSError:
        pass
    pids = held
    for _ in range(50):
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        pids = members(folder) - held
        held |= pids
    return held


def remove(folder: str) -> bool:
    """Remove ``folder`` and the cgroups below it (a pi run inside a command makes its
    own); False while a process is still in one of them (it may take a moment to die)."""
    gone = True
    for here, _, _ in os.walk(folder, topdown=False):
        try:
            os.rmdir(here)
        except FileNotFoundError:
            pass
        except OSError:
            gone = False
    return gone
