"""A real small disk for fault tests: a tmpfs of a few hundred KB that a test fills to the
brim, gives space back on, or remounts read-only.

Mounting needs root (the tests run as root here and in CI). Where it cannot be mounted
the test skips, except under ``CI=true``, where that is a failure
(:func:`pi_core.testing.programs.missing`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import tempfile
from pathlib import Path

from pi_core.testing.programs import missing

PAGE = os.sysconf("SC_PAGE_SIZE")


class SmallDisk:
    """A tmpfs mounted on a temporary folder; :meth:`fill` and :meth:`give_back` move
    its free space, :meth:`read_only` / :meth:`writable` remount it."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.root = Path(tempfile.mkdtemp(prefix="pi-small-disk-"))
        self._filler = self.root / ".filler"
        self._mounted = False

    def mount(self) -> SmallDisk:
        if os.geteuid() != 0:
            missing("a tmpfs mount (the fault tests must run as root)")
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={self.size},mode=0700",
                               "pi-small-disk", str(self.root)], capture_output=True, text=True)
        if done.returncode:
            missing(f"a tmpfs mount ({done.stderr.strip() or 'mount failed'})")
        self._mounted = True
        return self

    def unmount(self) -> None:
        if self._mounted:
            # lazily: a file a failed test left open must not keep the mount
            subprocess.run(["umount", "--lazy", str(self.root)], check=True)
            self._mounted = False
        os.rmdir(self.root)

    def clear(self) -> None:
        """Remove every file: an empty disk for the next case."""
        for path in sorted(self.root.rglob("*"), key=lambda p: len(p.parts), reverse=True):
            path.rmdir() if path.is_dir() and not path.is_symlink() else path.unlink()

    def free(self) -> int:
        stats = os.statvfs(self.root)
        return stats.f_bavail * stats.f_frsize

    def fill(self, leave: int = 0) -> None:
        """Take every free byte but ``leave`` (rounded down to whole pages: tmpfs hands
        out pages) with a filler file."""
        self.give_back()
        taken = self.free() - leave // PAGE * PAGE
        if taken > 0:
            fd = os.open(self._filler, os.O_WRONLY | os.O_CREAT, 0o600)
            try:
                os.posix_fallocate(fd, 0, taken)
            finally:
                os.close(fd)

    def fill_to_the_brim(self) -> None:
        """Not one byte left: what fallocate leaves is written away too."""
        self.fill()
        fd = os.open(self._filler, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            while os.write(fd, b"\0" * PAGE):
                pass
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
        finally:
            os.close(fd)

    def give_back(self) -> None:
        """Free the space the filler took."""
        self._filler.unlink(missing_ok=True)

    def read_only(self) -> None:
        self._remount("ro")

    def writable(self) -> None:
        self._remount("rw")

    def _remount(self, mode: str) -> None:
        subprocess.run(["mount", "-o", f"remount,{mode}", str(self.root)], check=True,
                       capture_output=True)


@contextlib.contextmanager
def mounted(size: int):
    """A :class:`SmallDisk` of ``size`` bytes, mounted for the block (a module's fixture)."""
    disk = SmallDisk(size=size).mount()
    try:
        yield disk
    finally:
        disk.unmount()
