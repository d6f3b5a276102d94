"""Confinement of commands: where a command runs so that it cannot outlive pi.

Each command gets a cgroup (v2) of its own under one cgroup of this pi process, where
the machine lets this process make one (:mod:`pi_plugins.tools.cgroups`): the command is
moved into it before it runs (a one-line ``sh`` trampoline writes its own pid to
``cgroup.procs`` and execs the command), so ``setsid``, ``env -i`` and double forks
stay inside, and a kill of the cgroup reaches them all.

A cgroup does not die with pi, so one small process per pi process, the *warden*,
waits for pi's end: it holds the read end of a pipe only pi writes to, and when that
pipe closes (pi exited, or was killed with SIGKILL) it kills pi's cgroup, removes the
folders and exits. It is a ``sh`` script, in a session of its own (a Ctrl-C or hangup
of pi's terminal does not reach it), started with the first command.

Where no cgroup can be made (no cgroup v2, not writable, not Linux) the fallback is the
kernel's parent-death signal on the command (``setpriv --pdeathsig KILL``, util-linux:
no standard-library call sets it, and a re-exec through setpriv needs no compiled
extension; the kernel sends it when the thread that started the command ends, and pi
starts commands on its event loop's thread, which lives as long as pi) plus its process
group: the warden is told each command's group and, once
pi has ended, kills those groups and every process still carrying one of this pi's
command markers in its environment. In that mode ``env -i setsid …`` escapes a ``kill -9`` of
pi (documented in ``docs/plugins.md``).
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import threading
import time

from pi_plugins.tools import cgroups

#: The trampoline that puts a command into its cgroup: ``$0`` is the cgroup's
#: ``cgroup.procs``; a move that fails stops the command (it would run unconfined).
ENTER = ('echo 0 > "$0" || { echo "pi: cannot move the command into its cgroup ($0)" >&2; '
         'exit 126; }; exec "$@"')

#: The warden. ``$1``: the folder of pi's cgroups ("", or a folder never made: the
#: fallback); ``$2``: the start of this pi's command markers. pi writes ``+PGID`` and ``-PGID`` lines (each
#: command's process group, in the fallback) until its end closes the pipe.
WARDEN = r"""
trap '' INT HUP QUIT TERM PIPE
groups=' '
while IFS= read -r line; do
  case $line in
    +*) groups="$groups${line#+} " ;;
    -*) id=${line#-}
        case $groups in *" $id "*) groups="${groups%% $id *} ${groups#* $id }" ;; esac ;;
  esac
done
if [ -n "$1" ] && [ -d "$1" ]; then
  echo 1 > "$1/cgroup.kill" 2>/dev/null
  n=0
  while [ $n -lt 200 ]; do
    populated=0
    while read -r key value; do
      [ "$key" = populated ] && populated=$value
    done < "$1/cgroup.events"
    [ "$populated" = 1 ] || break
    for pid in $(find "$1" -name cgroup.procs -exec cat {} + 2>/dev/null); do
      kill -s KILL "$pid" 2>/dev/null
    done
    sleep 0.05
    n=$((n + 1))
  done
  find "$1" -depth -type d -exec rmdir {} + 2>/dev/null
  exit 0
fi
for id in $groups; do kill -s KILL -- "-$id" 2>/dev/null; done
n=0
while [ $n -lt 20 ]; do
  left=$(grep -lzs "^$2" /proc/[0-9]*/environ 2>/dev/null)
  [ -n "$left" ] || break
  for file in $left; do
    pid=${file#/proc/}
    kill -s KILL "${pid%/environ}" 2>/dev/null
  done
  n=$((n + 1))
done
"""

SHELL = "/bin/sh"


class Warden:
    """This pi process's warden and the cgroup folder it guards (None: the fallback)."""

    def __init__(self, marker_name: str) -> None:
        self.pid = os.getpid()  # a forked child of pi needs a warden of its own
        self.token = os.urandom(8).hex()
        #: What every command marker of this pi process starts with.
        self.marker_prefix = f"{self.token}-"
        self._entry = f"{marker_name}={self.marker_prefix}"
        self._lock = threading.Lock()
        self._groups: set[int] = set()
        parent = cgroups.own_folder()
        planned = None
        if parent is not None:
            _clear_stale(parent)
            planned = os.path.join(parent, f"pi-{self.pid}-{self.token}")
        # started before the folder is made: a pi killed in between leaves no folder
        self._process = self._start(planned)
        self.folder = _make_folder(planned) if planned else None
        self.setpriv = None if self.folder else _pdeathsig_helper()

    def _start(self, folder: str | None) -> subprocess.Popen:
        return subprocess.Popen(
            [SHELL, "-c", WARDEN, "pi-warden", folder or "", self._entry],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            cwd="/", start_new_session=True)

    def ensure_running(self) -> None:
        """Start the warden again if someone killed it: same folder, same groups."""
        with self._lock:
            if self._process.poll() is None:
                return
            self._process = self._start(self.folder)
            for group in self._groups:
                self._write(f"+{group}\n")

    def confine(self, argv: list[str], marker: str) -> tuple[list[str], str | None]:
        """The command line that runs ``argv`` confined, and its cgroup folder (None in
        the fallback). The folder is made here; the command moves itself in."""
        if self.folder is not None:
            folder = os.path.join(self.folder, f"command-{marker[-12:]}")
            os.mkdir(folder)
            return [SHELL, "-c", ENTER, os.path.join(folder, "cgroup.procs"), *argv], folder
        if self.setpriv is not None:
            return [self.setpriv, "--pdeathsig", "KILL", "--", *argv], None
        return list(argv), None

    def watch_group(self, group: int) -> None:
        """Fallback: kill this process group if pi ends while it may live."""
        if self.folder is None:
            with self._lock:
                self._groups.add(group)
                self._write(f"+{group}\n")

    def forget_group(self, group: int) -> None:
        if self.folder is None:
            with self._lock:
                if group in self._groups:
                    self._groups.discard(group)
                    self._write(f"-{group}\n")

    def _write(self, line: str) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        try:
            stdin.write(line.encode())
            stdin.flush()
        except (BrokenPipeError, ValueError):  # the warden was killed: ensure_running
            pass

    def stop(self) -> None:
        """Close the pipe (as pi's end would): the warden clears up and exits."""
        with self._lock:
            if self._process.stdin is not None:
                try:
                    self._process.stdin.close()
                except BrokenPipeError:
                    pass
        try:
            self._process.wait(5)
        except subprocess.TimeoutExpired:
            pass


def _make_folder(folder: str) -> str | None:
    """``folder``, made as a cgroup under this process's own, if a command can be moved
    into a cgroup there; else None."""
    try:
        os.mkdir(folder)
    except OSError:
        return None
    probe = os.path.join(folder, "probe")
    try:
        os.mkdir(probe)
        moved = subprocess.run([SHELL, "-c", ENTER, os.path.join(probe, "cgroup.procs"), "true"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        moved = False
    for _ in range(200):  # the kernel lets a cgroup go a moment after its last process
        if cgroups.remove(probe):
            break
        time.sleep(0.001)
    if not moved:
        cgroups.remove(folder)
        return None
    return folder


def _clear_stale(parent: str) -> None:
    """Remove the empty folders of pi processes that are gone and whose warden was
    killed with them (a batch runner's cleanup may kill both at once). A folder still
    holding processes is left alone: its pid may belong to another pid namespace."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        parts = name.split("-")
        if len(parts) != 3 or parts[0] != "pi" or not parts[1].isdigit():
            continue
        try:
            os.kill(int(parts[1]), 0)
            continue  # its pi lives
        except ProcessLookupError:
            pass
        except OSError:
            continue
        folder = os.path.join(parent, name)
        if not cgroups.populated(folder):
            cgroups.remove(folder)


def _pdeathsig_helper() -> str | None:
    """``setpriv`` when it can set the parent-death signal (util-linux 2.33 and later)."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    try:
        works = subprocess.run([setpriv, "--pdeathsig", "KILL", "--", "true"], stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return None
    return setpriv if works else None


_lock = threading.Lock()
_warden: Warden | None = None


def warden(marker_name: str) -> Warden:
    """This process's warden, started on first use (again in a forked child, and if
    someone killed it)."""
    global _warden
    with _lock:
        if _warden is None or _warden.pid != os.getpid():
            _warden = Warden(marker_name)
        current = _warden
    current.ensure_running()
    return current


def resolve(program: str, cwd: str, env: dict[str, str]) -> str:
    """``program`` as the command's ``exec`` will find it, or the error ``Popen`` would
    raise (a trampoline turns a missing program into exit code 127 instead)."""
    if "/" in program:
        path = os.path.join(cwd, program)
        if not os.path.exists(path):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
        if os.path.isdir(path) or not os.access(path, os.X_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)
        return program
    found = shutil.which(program, path=env.get("PATH", os.defpath))
    if found is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
    return found
