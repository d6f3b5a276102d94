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
import stat as stat_mode
from typing import TYPE_CHECKING, Any, cast

from pi_core.protocol.environment import DirEntry, FileInfo, Kind, OutputSink, Process
from pi_plugins.tools import cgroups, processes, warden

if TYPE_CHECKING:
    from pi_core.protocol import environment as protocol
    from pi_core.protocol.tools import ToolRun
    from pi_plugins.tools.runner import CommandResult


class ExecutionEnvironment:
    """The one concrete execution environment to subclass (a sandbox, a remote machine):
    the path rules and the shared command runner over the methods a subclass gives
    (``stat``, ``read_bytes``, ``write_bytes``, ``make_dirs``, ``list_dir``, ``which``,
    ``spawn``, ``open_output_file``; their shape: :class:`pi_core.protocol.environment.ExecutionEnvironment`)."""

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

    async def run(
        self,
        command: str | list[str],
        *,
        shell: str | None = None,
        cwd: str | None = None,
        signal: Any = None,
        timeout: float | None = None,
        merge_stderr: bool = True,
        on_output: Any = None,
        prefix: str = "pi-bash",
        max_buffer: int | None = None,
    ) -> CommandResult:
        """Run a command to its end through :meth:`spawn`: the one runner that the bash
        tool, the user's ``!cmd`` and ``ctx.exec`` share (one kill policy, one bounded
        output buffer, one truncation rule; :mod:`pi_plugins.tools.runner`). A string
        runs with ``shell -c`` (``shell``, else bash, else sh); a leading ``~`` in ``shell``
        is the home directory (pi 1.6's ``shellPath``)."""
        import os.path

        from pi_plugins.tools.runner import run_command

        env = cast("protocol.ExecutionEnvironment", self)  # a subclass gives the rest of the shape
        if isinstance(command, str):
            shell = os.path.expanduser(shell) if shell and shell.startswith("~") else shell
            argv = [shell or await env.which("bash") or "sh", "-c", command]
        else:
            argv = list(command)
        return await run_command(env, argv, cwd=cwd, signal=signal, timeout=timeout,
                                 merge_stderr=merge_stderr, on_output=on_output, prefix=prefix,
                                 max_buffer=max_buffer)


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

    def __init__(self, cwd: str | None = None, owner: Any = None):
        self.cwd = os.path.abspath(cwd or os.getcwd())
        self.home = os.path.expanduser("~")
        #: Whose commands these are (the session's ``ctx``): what they leave running is
        #: stopped when its session ends.
        self.owner = owner

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
        """Start ``argv``. Without ``env`` it gets this process's environment less the
        keys (:func:`command_environment`): every command of every path (the bash tool,
        ``!cmd``, ``ctx.exec``, grep's ripgrep, a sandbox built on this class) starts here.
        An ``env`` given is used as it is: its caller chose it."""
        if env is None:
            env = self.command_environment()
        return await LocalProcess.start(argv, cwd or self.cwd, env, merge_stderr, self.owner)

    def command_environment(self) -> dict[str, str]:
        """The environment commands start with: this process's without the variables
        holding keys, as the owner's ``toolEnvironment`` setting says
        (:mod:`pi_plugins.keys.rules`), with pi 1.6's ``PI_*`` variables
        (:mod:`pi_plugins.tools.session_environment`)."""
        from pi_plugins.keys.rules import command_environment
        from pi_plugins.tools.session_environment import with_session_environment

        env = command_environment(os.environ, getattr(self.owner, "settings", None))
        return with_session_environment(env, self.owner)  # pi 1.6's PI_* variables

    async def open_output_file(self, prefix: str) -> OutputSink:
        return LocalOutputFile(prefix)


class LocalOutputFile(OutputSink):
    def __init__(self, prefix: str):
        from pi_plugins.tools.output_files import open_output_file

        self.path, self._file = open_output_file(prefix, ".log")

    def write(self, data: bytes) -> None:
        self._file.write(data)

    def close(self) -> None:
        self._file.close()


class LocalProcess(Process):
    """A child process of this one, in a new session (so a new process group) and, where
    the machine allows it, a cgroup of its own (:mod:`pi_plugins.tools.warden`).

    Its exit is watched apart from its pipes: a background job the command left behind
    may hold the output pipe open long after the command itself has ended (asyncio's own
    ``Process.wait`` would wait for the pipe too).
    """

    def __init__(self, popen: Any, command: processes.Command):
        self._popen = popen
        self.pid: int = popen.pid
        self.command = command
        self._settled = False  # killed, or its leftovers registered
        self._killed: set[int] = set()  # what kill() killed (besides the leader's group)
        self._exit: asyncio.Future = asyncio.get_running_loop().create_future()
        self._transports: list[asyncio.BaseTransport] = []
        self._output: asyncio.StreamReader | None = None
        self._error_reader: asyncio.StreamReader | None = None
        self._pidfd: int | None = None

    @classmethod
    async def start(cls, argv: list[str], cwd: str, env: dict[str, str] | None, merge_stderr: bool,
                    owner: Any = None) -> LocalProcess:
        import subprocess

        processes.supervise()
        guard = warden.warden(processes.MARKER)
        marker = guard.marker_prefix + processes.new_marker()
        env = {**(os.environ if env is None else env), processes.MARKER: marker}
        if argv:
            warden.resolve(argv[0], cwd, env)  # a missing program fails here, as in Popen
        confined, cgroup = guard.confine(argv, marker)
        try:
            popen = subprocess.Popen(
                confined,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
                start_new_session=True,  # its own session and process group: killable as one
            )
        except BaseException:
            if cgroup is not None:
                cgroups.remove(cgroup)
            raise
        guard.watch_group(popen.pid)
        command = processes.Command(popen.pid, marker, owner, cgroup=cgroup, warden=guard)
        processes.register(command)
        self = cls(popen, command)
        try:
            self._output = await self._reader(popen.stdout)
            if popen.stderr is not None:
                self._error_reader = await self._reader(popen.stderr)
            self._watch_exit()
        except BaseException:
            self.kill()
            self.close()
            raise
        return self

    async def _reader(self, pipe: Any) -> asyncio.StreamReader:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 20)
        transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
        self._transports.append(transport)
        return reader

    def _watch_exit(self) -> None:
        loop = asyncio.get_running_loop()

        def exited(code: int) -> None:
            self.command.ended = True  # reaped: its pid may be reused from now on
            if not self._exit.done():
                self._exit.set_result(code)

        try:
            self._pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # no pidfd (not Linux, old kernel): a waiting thread
            import threading

            def wait() -> None:
                code = self._popen.wait()
                self.command.ended = True
                try:
                    loop.call_soon_threadsafe(exited, code)
                except RuntimeError:  # the loop is gone; the child is reaped all the same
                    pass

            threading.Thread(target=wait, name=f"wait-{self.pid}", daemon=True).start()
            return

        def ready() -> None:
            self._stop_watching()
            exited(self._popen.wait())

        loop.add_reader(self._pidfd, ready)

    def _stop_watching(self) -> None:
        if self._pidfd is not None:
            asyncio.get_running_loop().remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None

    async def read(self, size: int = 65536) -> bytes:
        assert self._output is not None  # (set by start, before the process is handed out)
        return await self._output.read(size)

    async def errors(self) -> bytes:
        return await self._error_reader.read() if self._error_reader is not None else b""

    async def read_errors(self, size: int = 65536) -> bytes:
        return await self._error_reader.read(size) if self._error_reader is not None else b""

    async def wait(self) -> int:
        return await asyncio.shield(self._exit)

    def kill(self) -> None:
        # Once the leader is reaped its pid may be reused: then only the marker counts.
        self.command.ended = self.command.ended or self._popen.returncode is not None
        self._settled = True
        self._killed |= self.command.kill()
        processes.killed(self.command)

    async def wait_killed(self, timeout: float = 1.0) -> None:
        deadline = asyncio.get_running_loop().time() + timeout
        while not processes.dead(self._killed) and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.005)
        processes.tidy()  # its cgroup, now that its processes are gone

    def close(self) -> None:
        for transport in self._transports:
            transport.close()
        self._transports = []
        if not self._exit.done() and self._popen.poll() is not None:
            self.command.ended = True
            self._stop_watching()
            self._exit.set_result(self._popen.returncode)
        if self._exit.done() and not self._settled:
            # Ended by itself: what it left running on purpose (``server &``) lives
            # until its owner's session ends.
            self._settled = True
            processes.finished(self.command)
        # A process still running keeps its exit watcher, which reaps it when it ends.


# ---------------------------------------------------------------- the lookup


async def environment_for(run: ToolRun | None) -> ExecutionEnvironment:
    """The environment for one tool run: the ``execution_environment`` hook's answer
    (the last plugin's wins), else the local machine in the harness's cwd."""
    ctx: Any = getattr(run, "ctx", None)
    plugins = getattr(ctx, "plugins", None)
    if plugins is not None and plugins.has("execution_environment"):
        found = await plugins.call("execution_environment", ctx=ctx)
        if found is not None:
            return found
    return LocalEnvironment(getattr(ctx, "cwd", None), owner=ctx)
