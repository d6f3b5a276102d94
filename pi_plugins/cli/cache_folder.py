"""pi's cache folder, ``$XDG_CACHE_HOME/pi-harness`` (else ``~/.cache/pi-harness``):
files that make the next start quicker (``--help``'s text). Any of them may be deleted at any time; pi writes it again."""

from __future__ import annotations

import os


def cache_dir() -> str | None:
    """The folder (None when ``XDG_CACHE_HOME`` is not an absolute path)."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(root):
        return None
    return os.path.join(root, "pi-harness")


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
