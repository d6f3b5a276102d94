"""The sandboxed execution environment: commands under bubblewrap, files kept to the
workspace.

Every command (the bash tool, ``!cmd``, ``ctx.exec``, grep's ripgrep) runs as::

    bwrap --die-with-parent --new-session --unshare-pid --unshare-ipc --unshare-uts
          [--unshare-net] --ro-bind / / --dev /dev --proc /proc --bind SESSION_TMP /tmp
          --bind WORKSPACE WORKSPACE [--bind EXTRA EXTRA …] --chdir CWD -- COMMAND

so the whole filesystem is read-only but for the workspace (and the extra writable paths
the settings name), pi's ``auth.json`` reads as empty (an empty file bound over it), the
environment holds no keys (as every command's: :mod:`pi_plugins.keys.rules`, ``toolEnvironment``
included), ``/tmp`` is private, and without ``network: true`` the
command has a network namespace of its own (a loopback with nothing listening: no
connection anywhere, not even to this machine's local ports). Its processes live in a
pid namespace of their own, which dies with the sandbox.

The sandbox's ``/tmp`` is one per session: a private folder of the host (mode 0700,
made at the session's first command) bound as ``/tmp``, so what one command leaves there
the next one finds, as in a shell; it is removed when the session ends
(``session_shutdown``: ``/new``, ``/resume``, a fork, the end of pi). An environment made
without a session (``SandboxEnvironment(workspace)`` by hand) gives each command a fresh
tmpfs instead.

The file tools (read, write, edit, ls, find, grep's Python search) refuse any path that
resolves outside the workspace, symbolic links included: the real path is checked, not
the name.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Sequence
from typing import Any

from pi_core import DirEntry, FileInfo, OutputSink, Process

# The built-in tools' environment for this machine, which the sandbox narrows.
from pi_plugins.tools.environment import LocalEnvironment


class SandboxError(OSError):
    """The sandbox cannot run a command (bubblewrap is missing). Never a silent fallback."""

    def __init__(self, message: str):
        super().__init__(errno.ENOENT, message)
        self.advice = message

    def __str__(self) -> str:
        return self.advice


class OutsideWorkspace(PermissionError):
    """A file tool asked for a path outside the workspace."""

    def __init__(self, path: str, real: str, workspace: str):
        via = f" (it resolves to {real})" if real != path else ""
        self.advice = (f"{path} is outside the workspace {workspace}{via}; the sandbox (pi-sandbox) "
                       "lets the tools touch files in the workspace only. Use a path inside it.")
        super().__init__(errno.EACCES, self.advice, path)


MISSING_BWRAP = (
    "pi-sandbox: cannot run commands, bubblewrap (bwrap) is not installed. Install it "
    "(Debian/Ubuntu: apt-get install bubblewrap), or turn the sandbox off for this project "
    'in .pi/settings.json: {"sandbox": {"enabled": false}}. Commands never run unsandboxed.'
)


# ---------------------------------------------------------------- one /tmp per session

#: The host folder that is each session's /tmp, by (owner ctx, session id).
_SESSION_TMPS: dict[tuple[int, Any], str] = {}


def _session_key(owner: Any) -> tuple[int, Any]:
    return id(owner), getattr(owner, "session_id", None)


def session_tmp(owner: Any) -> str:
    """The session's /tmp on the host, made on first use."""
    key = _session_key(owner)
    folder = _SESSION_TMPS.get(key)
    if folder is None or not os.path.isdir(folder):
        folder = _SESSION_TMPS[key] = tempfile.mkdtemp(prefix="pi-sandbox-tmp-")  # mode 0700
    return folder


def release_session_tmp(owner: Any) -> None:
    """The session ended: its /tmp goes, whatever the commands left in it (folders
    they made read-only included)."""
    folder = _SESSION_TMPS.pop(_session_key(owner), None)
    if folder is None:
        return

    def writable_then_retry(function, path, _exc):
        try:
            os.chmod(os.path.dirname(path), stat.S_IRWXU)
            if os.path.isdir(path) and not os.path.islink(path):
                os.chmod(path, stat.S_IRWXU)
            function(path)
        except OSError:
            pass

    shutil.rmtree(folder, onerror=writable_then_retry)


_EMPTY: list[str] = []


def empty_file() -> str:
    """An empty regular file of the host, to bind over what must read as empty (a
    device node such as /dev/null is refused where the filesystem is mounted nodev)."""
    if not _EMPTY or not os.path.isfile(_EMPTY[0]):
        fd, path = tempfile.mkstemp(prefix="pi-sandbox-empty-")
        os.close(fd)
        os.chmod(path, 0o444)
        _EMPTY[:] = [path]
        import atexit

        def remove() -> None:
            if os.path.exists(path):
                os.unlink(path)

        atexit.register(remove)
    return _EMPTY[0]


class SandboxEnvironment(LocalEnvironment):
    """:class:`LocalEnvironment` with every command in bubblewrap and every file path
    checked against the workspace."""

    #: The full-output files of long commands (pi writes them, outside the workspace):
    #: the model may read them. Kept across environments, as one is made per tool run.
    output_files: set[str] = set()

    def __init__(self, workspace: str, *, network: bool = False, writable: Sequence[str] = (),
                 bwrap: str | None = None, owner: Any = None):
        super().__init__(workspace, owner=owner)
        self.workspace = os.path.realpath(self.cwd)
        self.network = network
        self.writable = [os.path.realpath(os.path.join(self.workspace, os.path.expanduser(p)))
                         for p in writable]
        self.bwrap = bwrap if bwrap is not None else shutil.which("bwrap")

    def __repr__(self) -> str:
        return f"SandboxEnvironment(workspace={self.workspace!r}, network={self.network})"

    # ------------------------------------------------------------ files

    def _inside(self, real: str) -> bool:
        for root in (self.workspace, *self.writable):
            if real == root or real.startswith(root.rstrip("/") + "/"):
                return True
        return real in self.output_files

    def check(self, path: str) -> str:
        """``path`` if it resolves inside the workspace (symbolic links followed), else
        :class:`OutsideWorkspace`."""
        real = os.path.realpath(path)
        if not self._inside(real):
            raise OutsideWorkspace(path, real, self.workspace)
        return path

    async def stat(self, path: str) -> FileInfo:
        return await super().stat(self.check(path))

    async def read_bytes(self, path: str, offset: int = 0, size: int | None = None) -> bytes:
        return await super().read_bytes(self.check(path), offset, size)

    async def write_bytes(self, path: str, data: bytes) -> None:
        await super().write_bytes(self.check(path), data)

    async def make_dirs(self, path: str) -> None:
        await super().make_dirs(self.check(path))

    async def list_dir(self, path: str) -> list[DirEntry]:
        return await super().list_dir(self.check(path))

    async def open_output_file(self, prefix: str) -> OutputSink:
        sink = await super().open_output_file(prefix)
        self.output_files.add(os.path.realpath(sink.path))
        return sink

    # ------------------------------------------------------------ commands

    def wrap(self, argv: list[str], cwd: str) -> list[str]:
        """The bubblewrap command line that runs ``argv`` in the sandbox."""
        if not self.bwrap:
            raise SandboxError(MISSING_BWRAP)
        line = [self.bwrap, "--die-with-parent", "--new-session",
                "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
        if not self.network:
            line.append("--unshare-net")
        line += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        if self.owner is not None:  # the session's own /tmp, kept across its commands
            line += ["--bind", session_tmp(self.owner), "/tmp"]
        else:
            line += ["--tmpfs", "/tmp"]
        for root in (self.workspace, *self.writable):
            if os.path.exists(root):
                line += ["--bind", root, root]
        auth = self.auth_file()
        if auth is not None:  # where pi keeps keys reads as empty inside
            line += ["--ro-bind", empty_file(), auth]
        return [*line, "--chdir", cwd, "--", *argv]

    def auth_file(self) -> str | None:
        """pi's ``auth.json`` (of the owner's agent dir), when there is one."""
        from pi_core import agent_dir

        folder = getattr(self.owner, "agent_dir", None) or agent_dir()
        path = os.path.realpath(os.path.join(str(folder), "auth.json"))
        return path if os.path.isfile(path) else None

    async def spawn(self, argv: list[str], *, cwd: str | None = None,
                    env: dict[str, str] | None = None, merge_stderr: bool = True) -> Process:
        cwd = os.path.realpath(cwd or self.cwd)
        return await super().spawn(self.wrap(argv, cwd), cwd=cwd, env=env, merge_stderr=merge_stderr)
