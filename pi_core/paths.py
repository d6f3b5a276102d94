"""pi's folders: the agent dir (``~/.pi/agent`` or ``PI_CODING_AGENT_DIR``), a project's
``.pi``, and the cache folder, ``$XDG_CACHE_HOME/pi-harness`` (else ``~/.cache/pi-harness``).

The cache holds what makes the next start quicker (``--help``'s text) and the side files
of sessions (their offset index), kept out of the sessions folder, which holds pi's files
alone. Any of it may be deleted at any time; pi writes it again."""

from __future__ import annotations

import os
from pathlib import Path


def agent_dir() -> Path:
    override = os.environ.get("PI_CODING_AGENT_DIR")
    if override:
        return Path(override).expanduser()
    return Path.home() / ".pi" / "agent"


def project_dir(cwd: str | os.PathLike) -> Path:
    return Path(cwd) / ".pi"


def cache_dir() -> str | None:
    """None when ``XDG_CACHE_HOME`` is not an absolute path."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "pi-harness") if os.path.isabs(root) else None


def session_side_file(session_file: str | os.PathLike, kind: str) -> str | None:
    """Where a side file of ``session_file`` (``kind``: ``idx`` …) lives: under
    ``<cache>/sessions/``, named for the session file's full path, so two sessions of the
    same name in different folders never share one. None without a cache folder."""
    import hashlib

    folder = cache_dir()
    if folder is None:
        return None
    path = os.path.abspath(os.fspath(session_file))
    digest = hashlib.blake2b(os.fsencode(path), digest_size=12).hexdigest()
    stem = os.path.basename(path).removesuffix(".jsonl")[:80]
    return os.path.join(folder, "sessions", f"{stem}-{digest}.{kind}")


def make_private_dirs(directory: str | os.PathLike) -> None:
    """Create ``directory`` and its missing parents, each readable by the owner only
    (0700): sessions and their side files hold code, command output, sometimes secrets."""
    directory = Path(directory)
    missing = []
    while not directory.exists() and directory != directory.parent:
        missing.append(directory)
        directory = directory.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            pass


def write_file(path: str | os.PathLike, data: bytes) -> None:
    """Replace ``path`` (in the cache folder) with ``data`` whole, so that another pi never
    reads a part of it; private as sessions are (0600, new folders 0700). Failing is no
    error: without the file pi is only slower."""
    temp = f"{os.fspath(path)}.{os.getpid()}.tmp"
    try:
        make_private_dirs(os.path.dirname(temp))
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o600)
        with open(fd, "wb") as f:
            f.write(data)
        os.replace(temp, path)
    except OSError:
        try:
            os.unlink(temp)
        except OSError:
            pass
