"""pi's cache folder, ``$XDG_CACHE_HOME/pi-harness`` (else ``~/.cache/pi-harness``): files
that make the next start quicker (``--help``'s text) and the side files of sessions (their
offset index), kept out of the sessions folder, which holds pi's files alone. Any of them
may be deleted at any time; pi writes it again."""

from __future__ import annotations

import hashlib
import os


def cache_dir() -> str | None:
    """The folder (None when ``XDG_CACHE_HOME`` is not an absolute path)."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(root):
        return None
    return os.path.join(root, "pi-harness")


def session_side_file(session_file: str | os.PathLike, kind: str) -> str | None:
    """Where a side file of ``session_file`` (``kind``: ``idx`` …) lives: under
    ``<cache>/sessions/``, named for the session file's full path, so two sessions of the
    same name in different folders never share one. None without a cache folder."""
    folder = cache_dir()
    if folder is None:
        return None
    path = os.path.abspath(os.fspath(session_file))
    digest = hashlib.blake2b(os.fsencode(path), digest_size=12).hexdigest()
    stem = os.path.basename(path).removesuffix(".jsonl")[:80]
    return os.path.join(folder, "sessions", f"{stem}-{digest}.{kind}")


def make_private_folder(path: str) -> None:
    """Create ``path`` and its parents, the new ones readable by the owner only (session
    side files hold what sessions hold: code, output, sometimes secrets)."""
    os.makedirs(path, mode=0o700, exist_ok=True)


def write_file(path: str, data: bytes) -> None:
    """Replace ``path`` with ``data`` whole, so that a reader (another pi) never sees a
    part of it. Failing is no error: without the file pi is only slower."""
    temp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(temp, "wb") as f:
            f.write(data)
        os.replace(temp, path)
    except OSError:
        try:
            os.unlink(temp)
        except OSError:
            pass
