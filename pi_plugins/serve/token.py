"""Where ``pi serve``'s token lives, so it never has to be on a command line (``ps``
shows every process's arguments to every user of the machine).

The token is ``PI_SERVE_TOKEN`` when that is set, else the one in ``<agent dir>/serve-token``
(made with 256 random bits, 0600, the first time ``pi serve`` runs). The agent dir, not
the cache folder: the cache may be deleted at any time, and the token must outlive a
restart (an open page reconnects with the token it holds); the agent dir already keeps
``auth.json``'s keys, private to its user. ``pi connect`` finds it in the same two
places, so on the same machine, as the same user, it needs neither.

A token file that another user could read (or that is not its user's) is never used:
``pi serve`` replaces it with a new one, ``pi connect`` ignores it.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

ENV = "PI_SERVE_TOKEN"
FILE_NAME = "serve-token"


def token_file() -> Path:
    from pi_core.paths import agent_dir

    return agent_dir() / FILE_NAME


def _private(path: Path) -> bool:
    """Whether ``path`` is a file of this user that nobody else can read or write."""
    try:
        info = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    return (stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid()
            and not info.st_mode & 0o077)


def saved_token(path: Path | None = None) -> str | None:
    """The token in the token file, if there is a private one."""
    path = path or token_file()
    if not _private(path):
        return None
    try:
        token = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return token or None


def write_token(path: Path, token: str) -> None:
    """``token`` into ``path``, created 0600 (folders 0700) and swapped in whole."""
    from pi_core.paths import make_private_dirs

    make_private_dirs(path.parent)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        with open(fd, "w", encoding="utf-8") as f:
            f.write(token + "\n")
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def server_token(warn=None) -> tuple[str, str]:
    """The token ``pi serve`` uses and where it came from (``PI_SERVE_TOKEN`` or the
    file's path); makes the file when there is none (or none private)."""
    given = os.environ.get(ENV)
    if given:
        return given, ENV
    path = token_file()
    token = saved_token(path)
    if token is None:
        if (path.exists() or path.is_symlink()) and warn is not None:
            warn(f"{path} could be read by other users or is not yours: replaced with a new token")
        token = secrets.token_urlsafe(32)
        write_token(path, token)
    return token, str(path)


def client_token() -> str | None:
    """The token ``pi connect`` uses when the address carries none."""
    return os.environ.get(ENV) or saved_token()
