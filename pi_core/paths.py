"""Where pi keeps its files: the agent dir (``~/.pi/agent`` or ``PI_CODING_AGENT_DIR``)."""

from __future__ import annotations

import os
from pathlib import Path


def agent_dir() -> Path:
    override = os.environ.get("PI_CODING_AGENT_DIR")
    if override:
        return Path(override).expanduser()
    return Path.home() / ".pi" / "agent"


def project_dir(cwd: str | os.PathLike) -> Path:
    """The project's own pi folder, ``<cwd>/.pi``."""
    return Path(cwd) / ".pi"
