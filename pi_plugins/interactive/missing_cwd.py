"""``/resume`` of a session whose stored working directory is gone, as pi 1.6's chat
asks (its ``handleResumeSession``): continue it in the chat's folder (the file keeps its
own, so it asks again next time), fork it into a new session here with the original
kept, or cancel; the choices in 1.6's words."""

from __future__ import annotations

import json
import os
from typing import Any


def _stored_cwd(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as file:
            header = json.loads(file.readline())
    except (OSError, ValueError):
        return None  # the switch itself says what is wrong with the file
    return header.get("cwd") if isinstance(header, dict) else None


async def resume_where_gone(tui: Any, path: str) -> str | None:
    """None when the session's folder exists (resume it as usual); else, once switched,
    the status line to show, or "" when nothing was switched (cancelled, or vetoed)."""
    stored = _stored_cwd(path)
    if not stored or os.path.isdir(stored):
        return None
    harness = tui.harness
    cwd = harness.ctx.cwd
    options = [f"Continue in {cwd} (asks again next time)", f"Fork into {cwd} (new session ID, original kept)",
               "Cancel"]
    choice = await tui.ui.select(f"Session cwd does not exist: {stored}", options)
    if choice == options[0]:
        if not await harness.switch_session(path):
            tui.add_text("Switch cancelled by a plugin", "dim")
            return ""
        return f"Resumed session in {cwd}"
    if choice == options[1]:
        from pi_core.session.locations import session_dir_for
        from pi_plugins.cli.sessions import fork_from

        fork = fork_from(path, cwd, harness.session.sessions_dir or session_dir_for(cwd))
        fork_path, fork_id = str(fork.file), fork.header.id
        fork.close()
        if not await harness.switch_session(fork_path):
            os.remove(fork_path)  # a plugin said no: no copy left behind (1.6)
            tui.add_text("Switch cancelled by a plugin", "dim")
            return ""
        return f"Forked into new session {fork_id} in {cwd}"
    tui.add_text("Resume cancelled", "dim")
    return ""
