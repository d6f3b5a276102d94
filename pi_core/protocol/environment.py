"""The shape of the execution environment, the one door through which the tools reach files and processes
(:mod:`pi_plugins.tools.environment` holds the concrete base). Errors are the :class:`OSError` family
whatever the environment, so every tool turns them into the same advice for the model."""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pi_core.protocol.records import record

Kind = Literal["file", "directory", "other"]


@record(frozen=True)
class FileInfo:
    """What ``stat`` tells about a path (symbolic links followed)."""

    path: str
    kind: Kind
    size: int


@record(frozen=True)
class DirEntry:
    """``kind``: a symbolic link followed (``None`` when it cannot be, a dangling link)."""

    name: str
    kind: Kind | None
    is_link: bool = False


class Process:
    """A running command; :meth:`read` gives its output in chunks (``b""`` at the end)."""

    pid: int

    async def read(self, size: int = 65536) -> bytes:
        raise NotImplementedError

    async def errors(self) -> bytes:
        """Everything written to stderr, when it was not merged into the output."""
        raise NotImplementedError

    async def read_errors(self, size: int = 65536) -> bytes:
        """stderr in chunks (``b""`` at the end); by default all of :meth:`errors` at once."""
        if getattr(self, "_errors_given", False):
            return b""
        self._errors_given = True
        return await self.errors()

    async def wait(self) -> int:
        """Wait for the command to exit; its exit code (negative: killed by that signal)."""
        raise NotImplementedError

    def kill(self) -> None:
        """Stop the command and every process it started, now. Safe to call twice, and
        from an abort callback (it does not block)."""
        raise NotImplementedError

    def close(self) -> None:
        """Let go of the output pipes (another process may still hold them open)."""

    async def wait_killed(self, timeout: float = 1.0) -> None:
        """After :meth:`kill`: wait (at most ``timeout``) until every process it killed
        has exited, so that none is seen running when the call returns."""


class OutputSink:
    """A file being written in pieces: the full output of a long command."""

    path: str

    def write(self, data: bytes) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class ExecutionEnvironment(Protocol):
    """For typing; subclass :class:`pi_plugins.tools.environment.ExecutionEnvironment`.
    Paths given to the methods are absolute: the tools make them with :meth:`resolve`."""

    cwd: str
    home: str | None

    def resolve(self, path: str) -> str:
        """The absolute path the model means (relative to ``cwd``, ``~``, ``@file``)."""

    async def stat(self, path: str) -> FileInfo: ...

    async def read_bytes(self, path: str, offset: int = 0, size: int | None = None) -> bytes:
        """``size`` bytes from ``offset`` (the rest of the file when ``size`` is None)."""

    async def write_bytes(self, path: str, data: bytes) -> None:
        """Create or replace the file's content (the directory must exist)."""

    async def make_dirs(self, path: str) -> None:
        """Create the directory and its missing parents; an existing one is fine."""

    async def list_dir(self, path: str) -> list[DirEntry]: ...

    async def which(self, program: str) -> str | None:
        """The path of ``program`` if it is installed, else None."""

    async def spawn(self, argv: list[str], *, cwd: str | None = None, env: dict[str, str] | None = None,
                    merge_stderr: bool = True) -> Process:
        """Start ``argv`` (stdin empty) in its own process group, so that
        :meth:`Process.kill` reaches every process it starts."""

    async def open_output_file(self, prefix: str) -> OutputSink:
        """A new temporary file for output too long for the model, readable later with the ``read`` tool."""

    async def run(self, command: str | list[str], *, shell: str | None = None, cwd: str | None = None,
                  signal: Any = None, timeout: float | None = None, merge_stderr: bool = True,
                  on_output: Any = None, prefix: str = "pi-bash", max_buffer: int | None = None) -> Any:
        """Run a command to its end (a string with ``shell -c``); its code and bounded output."""
