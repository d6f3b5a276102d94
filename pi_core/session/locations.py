"""Where session files live and how they are named, exactly as pi names them.

``<agent dir>/sessions/--<cwd encoded>--/<header timestamp>_<session id>.jsonl``: the cwd loses its leading
separator and has ``/``, ``\\`` and ``:`` turned into ``-``; the timestamp has ``:`` and ``.`` turned into
``-``. Same names as pi, so ``pi -r`` and ``/resume`` on either side see the other's sessions.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pi_core.paths import agent_dir
from pi_core.protocol.entries import SessionHeader

SESSION_SUFFIX = ".jsonl"


def encode_cwd(cwd: str | os.PathLike) -> str:
    """``/home/me/app`` → ``--home-me-app--``."""
    text = re.sub(r"^[/\\]", "", os.fspath(cwd))
    return "--" + re.sub(r"[/\\:]", "-", text) + "--"


def sessions_root() -> Path:
    """``<agent dir>/sessions``, the folder that holds one folder per project."""
    return agent_dir() / "sessions"


def session_dir_for(cwd: str | os.PathLike, root: str | os.PathLike | None = None) -> Path:
    """The folder of one project's sessions (not created here)."""
    return Path(root if root is not None else sessions_root()) / encode_cwd(cwd)


def session_file_name(header: SessionHeader) -> str:
    stamp = header.timestamp.replace(":", "-").replace(".", "-")
    return f"{stamp}_{header.id}{SESSION_SUFFIX}"
