"""What pi 1.6 prints when the chat is quit (not on a signal): the command that resumes
this session, on its own line after "To resume this session:" so that a triple-click
selects it. Nothing for a session never written (no message yet, ``--no-session``)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from pi_core import session_dir_for


def resume_command(harness: Any) -> str | None:
    """``pi --session ID`` (with ``--session-dir`` when the file is elsewhere), or None."""
    session = harness.session
    file = getattr(session, "file", None)
    if file is None or not session.on_disk or not Path(file).exists():
        return None
    words = ["pi"]
    folder = Path(file).parent
    if folder.resolve() != session_dir_for(harness.ctx.cwd).resolve():
        words += ["--session-dir", shlex.quote(str(folder))]
    words += ["--session", session.id]
    return " ".join(words)


def resume_hint(harness: Any, colour: bool = True) -> str:
    """The lines to print, dim as pi's, or "" when there is nothing to resume."""
    command = resume_command(harness)
    if command is None:
        return ""
    label = "\x1b[2mTo resume this session:\x1b[22m" if colour else "To resume this session:"
    return f"{label}\n{command}\n"


def print_resume_hint(tui: Any) -> None:
    """After the chat has given the terminal back: the hint, where a person reads it."""
    import sys

    output = tui.terminal_output
    if output is None and not sys.stdout.isatty():
        return
    out = output.stdout if output is not None else sys.stdout
    try:
        out.write(resume_hint(tui.harness, colour=tui.painter.color_system is not None))
        out.flush()
    except (OSError, ValueError):  # the terminal is gone
        pass
