"""The chat's external editor (``app.editor.external``, Ctrl+G): the editor's text in a
file, opened with pi 1.6's ``externalEditor`` setting, else ``$VISUAL``, else
``$EDITOR``, else what prompt_toolkit finds (its list of common editors). The text comes
back when the editor exits; an editor that fails or cannot start leaves the text as it was."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from collections.abc import Mapping
from typing import Any


def editor_command(settings: Any, env: Mapping[str, str] | None = None) -> list[str] | None:
    """The command to open a file with (its arguments; the file goes last), or None to
    let prompt_toolkit pick one."""
    env = os.environ if env is None else env
    for value in (settings.get("externalEditor") if settings is not None else None,
                  env.get("VISUAL"), env.get("EDITOR")):
        if isinstance(value, str) and value.strip():
            return shlex.split(value)
    return None


def edit_text(text: str, command: list[str]) -> str | None:
    """``text`` after ``command FILE`` edited it; None when the editor failed (a
    non-zero exit, or it could not start), so the caller keeps what it had."""
    handle, path = tempfile.mkstemp(suffix=".md", prefix="pi-editor-")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        try:
            if subprocess.call([*command, path]) != 0:
                return None
        except OSError:
            return None
        with open(path, encoding="utf-8") as edited:
            result = edited.read()
        return result[:-1] if result.endswith("\n") and not text.endswith("\n") else result
    finally:
        os.unlink(path)


def open_external_editor(tui: Any) -> Any:
    """The key's action: the setting's (or the environment's) editor, in the terminal."""
    buffer = tui.editor.buffer
    command = editor_command(getattr(tui, "settings", None))
    if command is None:
        return buffer.open_in_editor(validate_and_handle=False)
    from prompt_toolkit.application import run_in_terminal

    async def run() -> None:
        keyboard = getattr(tui, "keyboard", None)

        def edit() -> str | None:
            if keyboard is None:
                return edit_text(buffer.text, command)
            with keyboard.suspended():  # the editor reads legacy keys, as pi 1.6 leaves them
                return edit_text(buffer.text, command)

        edited = await run_in_terminal(edit, in_executor=True)
        if edited is not None:
            buffer.text = edited
            buffer.cursor_position = len(edited)

    return tui.spawn(run())
