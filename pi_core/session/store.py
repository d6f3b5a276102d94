"""The session file on disk: one writer at a time, one line per write, nothing lost.

- Each append is one ``write`` (looped only if the kernel takes part of it) on a
  descriptor opened ``O_APPEND``: a process killed the next instant loses nothing it was
  told was written.
- The writer holds an exclusive ``flock`` while the file is open; a second writer gets
  :class:`SessionLockedError` (readers need no lock: the file only grows).
- No byte is ever truncated, moved or rewritten, and no side file made: an incomplete
  last line (a crash mid-write) stays, and the next write starts with a newline.
- A failed write (full disk, I/O error, read-only file system) raises
  :class:`SessionWriteError` counting the lines that reached the file whole; nothing is
  retried here. The next write first looks at the file's end: if it ends in the very
  bytes of the line that was cut and that line comes first again, only its rest is
  written (as an unbroken write would have made the file); any other unfinished end
  gets a newline first, so the fragment is a line of its own that the reader skips.
- Migration writes a new file and renames it over the old one.
- Files are created 0600 in folders created 0700 (pi: 0644 in 0755): sessions hold code,
  command output and sometimes secrets.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable
from pathlib import Path

from pi_core.paths import make_private_dirs
from pi_core.session.reader import SessionError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks, a single writer is assumed
    fcntl = None  # type: ignore[assignment]  # the module or None: the lock tests for None


#: What a disk does to a writer (full, failing, read-only, over quota): a session write
#: meeting one of these is reported as :class:`SessionWriteError`.
DISK_FAULTS = frozenset({errno.ENOSPC, errno.EIO, errno.EROFS, errno.EDQUOT})
_FLAGS = os.O_RDWR | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)


class SessionLockedError(SessionError):
    """Another process has the session open for writing."""


class SessionWriteError(SessionError):
    """Lines could not be written: ``saved`` of them reached the file whole; the session
    adds ``unsaved``, its entries not on disk."""

    def __init__(self, message: str, *, saved: int = 0, errno: int | None = None) -> None:
        super().__init__(message)
        self.saved = saved
        self.errno = errno
        self.unsaved: list = []


class SessionFile:
    """The locked, append-only handle on one session file."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd
        self._trusted = True  # False: look at the file's end before the next write
        self._cut = b""  # the start of a line this writer left unfinished at the end
        self._cut_end: int | None = None  # the file's size just after that fragment

    @classmethod
    def open(cls, path: str | os.PathLike, *, create: bool = False) -> SessionFile:
        """Open ``path`` and take its lock (``create``: make it, empty, if missing)."""
        path = Path(path)
        try:
            if create:
                make_private_dirs(path.parent)
            fd = os.open(path, _FLAGS | (os.O_CREAT if create else 0), 0o600)
        except OSError as exc:
            if exc.errno not in DISK_FAULTS:
                raise
            raise SessionWriteError(f"{path}: the session could not be saved "
                                    f"({exc.strerror})", errno=exc.errno) from exc
        try:
            _lock(fd, path)
        except BaseException:
            os.close(fd)
            raise
        return cls(path, fd)

    def size(self) -> int:
        return os.fstat(self._checked_fd()).st_size

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the lock
            self._fd = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: the kernel releases it anyway
            pass

    def write_lines(self, lines: Iterable[bytes | str]) -> None:
        """Write whole lines (each ending in a newline) in one write call."""
        fd = self._checked_fd()
        encoded = [line.encode("utf-8") if isinstance(line, str) else line for line in lines]
        data = b"".join(encoded)
        skip, prefix = (0, b"") if self._trusted else self._look_at_the_end(fd, encoded)
        out = memoryview(prefix + data[skip:] if prefix or skip else data)
        done = 0
        try:
            while done < len(out):
                done += os.write(fd, out[done:])
        except OSError as exc:  # any error: what reached the file is noted either way
            raise self._failed(fd, exc, encoded, skip + max(0, done - len(prefix))) from exc
        self._trusted, self._cut, self._cut_end = True, b"", None

    def _look_at_the_end(self, fd: int, lines: list[bytes]) -> tuple[int, bytes]:
        """(bytes of ``lines[0]`` already in the file, what to write before the rest)."""
        try:
            size = os.fstat(fd).st_size
            cut = self._cut
            if (cut and lines and lines[0].startswith(cut) and size == self._cut_end
                    and os.pread(fd, len(cut), size - len(cut)) == cut):
                return len(cut), b""
            ends_clean = size == 0 or os.pread(fd, 1, size - 1) == b"\n"
        except OSError:  # the end cannot be read: a newline is always safe (blank lines
            ends_clean = False  # are skipped)
        return 0, b"" if ends_clean else b"\n"

    def _failed(self, fd: int, exc: OSError, lines: list[bytes], covered: int) -> SessionWriteError:
        """Note what a failed write left (``covered``: bytes of ``lines`` now in the file)."""
        saved = 0
        for line in lines:
            if covered < len(line):
                break
            covered -= len(line)
            saved += 1
        self._cut = lines[saved][:covered] if saved < len(lines) else b""
        self._trusted = False
        try:
            self._cut_end = os.fstat(fd).st_size
        except OSError:
            self._cut_end = None
        reason = exc.strerror or type(exc).__name__
        return SessionWriteError(f"{self.path}: the session could not be saved ({reason})",
                                 saved=saved, errno=exc.errno)

    def expect_missing_newline(self) -> None:
        """The file does not end in a newline: the next write looks and adds one first."""
        self._trusted = False

    def unlinked(self) -> bool:
        """True when the file was deleted (or replaced) since it was opened."""
        return os.fstat(self._checked_fd()).st_nlink == 0

    def replace_with(self, lines: Iterable[bytes]) -> None:
        """Replace the whole file: a temporary file beside it, on disk and locked, is
        renamed over the old one."""
        temp = _free_name(self.path.with_name(self.path.name + ".new"))
        fd = os.open(temp, _FLAGS | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            _lock(fd, temp)
            _write_all(fd, b"".join(lines))
            os.fsync(fd)
            os.replace(temp, self.path)
        except BaseException:
            os.close(fd)
            temp.unlink(missing_ok=True)
            raise
        old, self._fd = self._fd, fd
        if old is not None:
            os.close(old)
        _fsync_dir(self.path.parent)
        self._trusted, self._cut, self._cut_end = True, b"", None

    def _checked_fd(self) -> int:
        if self._fd is None:
            raise SessionError(f"{self.path}: the session file is closed")
        return self._fd


def _lock(fd: int, path: Path) -> None:
    if fcntl is None:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise SessionLockedError(
                f"{path} is open for writing in another pi process; close that session "
                "first, or open this one read-only or fork it"
            ) from None
        raise


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _free_name(path: Path) -> Path:
    candidate, n = path, 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}.{n}")
    return candidate


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
