"""The execution environment: the one door through which the tools reach files and
processes.

The built-in tools never open a file or start a process themselves; they ask an
:class:`ExecutionEnvironment`. :class:`LocalEnvironment` (this machine, the harness's
working directory) is the default. A plugin swaps in another one, for example a
container, a remote host or a sandbox that records or vets every call, by implementing
the ``execution_environment`` hook. :func:`environment_for` asks that hook once per tool
run.

Errors are the ordinary :class:`OSError` family (``FileNotFoundError``,
``PermissionError``, ``IsADirectoryError``…), whatever the environment, so every tool
turns them into the same advice for the model.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import stat as stat_mode
from typing import TYPE_CHECKING, Any, Literal

from attrs import define

if TYPE_CHECKING:
    from pi_core.tools import ToolRun

Kind = Literal["file", "directory", "other"]


@define(frozen=True)
class FileInfo:
    """What ``stat`` tells about a path (symbolic links followed)."""

    path: str
    kind: Kind
    size: int


@define(frozen=True)
class DirEntry:
    """One name in a directory. ``kind`` is what it is (a symbolic link is followed;
    ``None`` when it cannot be inspected, a dangling link say), ``is_link`` whether it
    is a symbolic link."""

    name: str
    kind: Kind | None
    is_link: bool = False


class Process:
    """A running command. Output arrives in chunks from :meth:`read` (``b""`` at the
    end); :meth:`kill` stops the command and everything it started."""

    pid: int

    async def read(self, size: int = 65536) -> bytes:
        raise NotImplementedError

    async def errors(self) -> bytes:
        """Everything written to stderr, when it was not merged into the output."""
        raise NotImplementedError

    async def wait(self) -> int:
        """Wait for the command to exit; its exit code (negative: killed by that signal)."""
        raise NotImplementedError

    def kill(self) -> None:
        """Stop the command and every process it started, now. Safe to call twice, and
        from an abort callback (it does not block)."""
        raise NotImplementedError

    def close(self) -> None:
        """Let go of the output pipes (another process may still hold them open)."""


class OutputSink:
    """A file being written in pieces: the full output of a long command."""

    path: str

    def write(self, data: bytes) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class ExecutionEnvironment:
    """Files and processes for the tools. Paths given to the methods are absolute: the
    tools turn the model's paths into them with :meth:`resolve`."""

    cwd: str = "/"
    home: str | None = None

    def resolve(self, path: str) -> str:
        """The absolute path the model means: relative to ``cwd``, ``~`` for the home
        directory, and a leading ``@`` (copied from an @file mention) dropped."""
        if path.startswith("@"):
            path = path[1:]
        if self.home and (path == "~" or path.startswith("~/")):
            path = self.home + path[1:]
        return os.path.normpath(os.path.join(self.cwd, path))

    async def stat(self, path: str) -> FileInfo:
        raise NotImplementedError

    async def read_bytes(self, path: str, offset: int = 0, size: int | None = None) -> bytes:
        """``size`` bytes from ``offset`` (the rest of the file when ``size`` is None)."""
        raise NotImplementedError

    async def write_bytes(self, path: str, data: bytes) -> None:
        """Create or replace the file's content (the directory must exist)."""
        raise NotImplementedError

    async def make_dirs(self, path: str) -> None:
        """Create the directory and its missing parents; an existing one is fine."""
        raise NotImplementedError

    async def list_dir(self, path: str) -> list[DirEntry]:
        raise NotImplementedError

    async def which(self, program: str) -> str | None:
        """The path of ``program`` if it is installed, else None."""
        raise NotImplementedError

    async def spawn(
        self,
        argv: list[str],
        *,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        merge_stderr: bool = True,
    ) -> Process:
        """Start ``argv`` (stdin empty) in its own process group, so that
        :meth:`Process.kill` reaches every process it starts."""
        raise NotImplementedError

    async def open_output_file(self, prefix: str) -> OutputSink:
        """A new temporary file for output too long for the model, readable later with
        the ``read`` tool."""
        raise NotImplementedError


# ---------------------------------------------------------------- the local machine


def _kind(st: os.stat_result) -> Kind:
    if stat_mode.S_ISREG(st.st_mode):
        return "file"
    if stat_mode.S_ISDIR(st.st_mode):
        return "directory"
    return "other"


def _read(path: str, offset: int, size: int | None) -> bytes:
    with open(path, "rb") as f:
        if offset:
            f.seek(offset)
        return f.read(-1 if size is None else size)


def _write(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


def _list(path: str) -> list[DirEntry]:
    entries = []
    with os.scandir(path) as it:
        for entry in it:
            link = entry.is_symlink()
            try:
                kind: Kind | None = _kind(entry.stat()) if link else (
                    "directory" if entry.is_dir() else "file" if entry.is_file() else "other"
                )
            except OSError:
                kind = None
            entries.append(DirEntry(entry.name, kind, link))
    return entries


class LocalEnvironment(ExecutionEnvironment):
    """This machine. File work runs in a worker thread so a large read never stalls
    the event loop (and the streaming UI with it)."""

    def __init__(self, cwd: str | None = None):
        self.cwd = os.path.abspath(cwd or os.getcwd())
        self.home = os.path.expanduser("~")

    def __repr__(self) -> str:
        return f"LocalEnvironment(cwd={self.cwd!r})"

    async def stat(self, path: str) -> FileInfo:
        st = await asyncio.to_thread(os.stat, path)
        return FileInfo(path, _kind(st), st.st_size)

    async def read_bytes(self, path: str, offset: int = 0, size: int | None = None) -> bytes:
        return await asyncio.to_thread(_read, path, offset, size)

    async def write_bytes(self, path: str, data: bytes) -> None:
        await asyncio.to_thread(_write, path, data)

    async def make_dirs(self, path: str) -> None:
        await asyncio.to_thread(os.makedirs, path, exist_ok=True)

    async def list_dir(self, path: str) -> list[DirEntry]:
        return await asyncio.to_thread(_list, path)

    async def which(self, program: str) -> str | None:
        return shutil.which(program)

    async def spawn(
        self,
        argv: list[str],
        *,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        merge_stderr: bool = True,
    ) -> Process:
        import asyncio.subprocess as aio

        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd or self.cwd,
            env=env,
            stdin=aio.DEVNULL,
            stdout=aio.PIPE,
            stderr=aio.STDOUT if merge_stderr else aio.PIPE,
            start_new_session=True,  # its own session and process group: killable as one
        )
        return LocalProcess(proc)

    async def open_output_file(self, prefix: str) -> OutputSink:
        return LocalOutputFile(prefix)


class LocalOutputFile(OutputSink):
    def __init__(self, prefix: str):
        import tempfile

        fd, self.path = tempfile.mkstemp(prefix=f"{prefix}-", suffix=".log")
        self._file = os.fdopen(fd, "wb")

    def write(self, data: bytes) -> None:
        self._file.write(data)

    def close(self) -> None:
        self._file.close()


class LocalProcess(Process):
    def __init__(self, proc: asyncio.subprocess.Process):
        self._proc = proc
        self.pid = proc.pid
        self._errors: asyncio.Task | None = None
        if proc.stderr is not None:
            self._errors = asyncio.ensure_future(proc.stderr.read())

    async def read(self, size: int = 65536) -> bytes:
        return await self._proc.stdout.read(size)

    async def errors(self) -> bytes:
        return await self._errors if self._errors is not None else b""

    async def wait(self) -> int:
        return await self._proc.wait()

    def kill(self) -> None:
        kill_process_tree(self.pid)

    def close(self) -> None:
        if self._errors is not None and not self._errors.done():
            self._errors.cancel()
        transport = getattr(self._proc, "_transport", None)
        if transport is not None:
            transport.close()


def _processes() -> list[tuple[int, int, int]]:
    """(pid, parent pid, session id) of every process, from /proc (Linux)."""
    found = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        found.append((int(name), int(fields[1]), int(fields[3])))
    return found


def process_tree(pid: int) -> set[int]:
    """``pid``'s descendants and the members of the session it leads, where /proc tells."""
    table = _processes()
    children: dict[int, list[int]] = {}
    tree = set()
    for p, parent, session in table:
        children.setdefault(parent, []).append(p)
        if session == pid and p != pid:
            tree.add(p)
    stack = [pid]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in tree:
                tree.add(child)
                stack.append(child)
    return tree


def kill_process_tree(pid: int) -> None:
    """SIGKILL ``pid``'s process group, then every descendant and session member that
    left the group (``setsid``, job control), so nothing a command started survives."""
    others = process_tree(pid)  # before the kill: orphans are re-parented and lost
    for target, kill in ((pid, os.killpg), *((p, os.kill) for p in others)):
        try:
            kill(target, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


# ---------------------------------------------------------------- the lookup


async def environment_for(run: "ToolRun | None") -> ExecutionEnvironment:
    """The environment for one tool run: the ``execution_environment`` hook's answer
    (the last plugin's wins), else the local machine in the harness's cwd."""
    ctx: Any = getattr(run, "ctx", None)
    plugins = getattr(ctx, "plugins", None)
    if plugins is not None and plugins.has("execution_environment"):
        found = await plugins.decide("execution_environment", ctx=ctx)
        if found is not None:
            return found
    return LocalEnvironment(getattr(ctx, "cwd", None))
