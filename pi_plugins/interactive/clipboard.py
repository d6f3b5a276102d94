"""The system clipboard: text out (``/copy``) and an image in (Ctrl+V).

Text goes to the platform's tool (``pbcopy``; ``wl-copy`` on Wayland; ``xclip`` or
``xsel`` on X11; ``termux-clipboard-set``) and also as OSC 52, which a terminal honours
over ssh and through tmux. Images come from ``wl-paste`` or ``xclip``.

These tools do not go through the execution environment: ``wl-copy`` and ``xclip`` stay
behind on purpose to keep owning the selection, which the environment's rule that no
process outlives its command would break.
"""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
import sys
from collections.abc import Callable

#: Terminals drop longer OSC 52 payloads (pi's limit too).
MAX_OSC52 = 100_000
TIMEOUT = 5.0
IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")


def osc52(text: str) -> str | None:
    """The OSC 52 sequence that puts ``text`` on the terminal's clipboard, or None when
    it is too long for terminals to take."""
    encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
    if len(encoded) > MAX_OSC52:
        return None
    return f"\x1b]52;c;{encoded}\x07"


def _copy_commands(env=os.environ) -> list[list[str]]:
    if sys.platform == "darwin":
        return [["pbcopy"]]
    commands = []
    if env.get("TERMUX_VERSION"):
        commands.append(["termux-clipboard-set"])
    if env.get("WAYLAND_DISPLAY"):
        commands.append(["wl-copy"])
    if env.get("DISPLAY"):
        commands += [["xclip", "-selection", "clipboard"], ["xsel", "--clipboard", "--input"]]
    return commands


async def copy_with_tools(text: str) -> str | None:
    """Give ``text`` to the first clipboard tool that takes it; its name, or None."""
    for command in _copy_commands():
        if shutil.which(command[0]) is None:
            continue
        try:
            process = await asyncio.create_subprocess_exec(
                *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL, start_new_session=True)
            stdin = process.stdin
            assert stdin is not None  # asked for a pipe
            stdin.write(text.encode("utf-8"))
            await stdin.drain()
            stdin.close()
            if command[0] == "wl-copy":  # it serves the selection until another copy
                return command[0]
            if await asyncio.wait_for(process.wait(), TIMEOUT) == 0:
                return command[0]
        except (TimeoutError, OSError, BrokenPipeError, ConnectionResetError):
            continue
    return None


async def copy_to_clipboard(text: str, write: Callable[[str], None] | None) -> tuple[str | None, bool]:
    """The chat's ``/copy`` way: ``text`` to a clipboard tool and, through ``write``, to
    the terminal as OSC 52; (the tool that took it or None, whether OSC 52 was sent)."""
    tool = await copy_with_tools(text)
    sequence = osc52(text)
    if sequence is not None and write is not None:
        write(sequence)
    return tool, sequence is not None and write is not None


async def _read(command: list[str]) -> bytes | None:
    try:
        process = await asyncio.create_subprocess_exec(
            *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            stdin=asyncio.subprocess.DEVNULL)
        out, _ = await asyncio.wait_for(process.communicate(), TIMEOUT)
    except (TimeoutError, OSError):
        return None
    return out if process.returncode == 0 else None


async def paste_image(env=os.environ) -> tuple[bytes, str] | None:
    """The clipboard's image as (bytes, MIME type), or None when it holds none."""
    if env.get("WAYLAND_DISPLAY") and shutil.which("wl-paste"):
        listed = await _read(["wl-paste", "--list-types"])
        types = listed.decode("utf-8", "replace").split() if listed else []
        for mime in IMAGE_TYPES:
            if mime in types:
                data = await _read(["wl-paste", "--type", mime])
                if data:
                    return data, mime
    if env.get("DISPLAY") and shutil.which("xclip"):
        listed = await _read(["xclip", "-selection", "clipboard", "-t", "TARGETS", "-o"])
        types = listed.decode("utf-8", "replace").split() if listed else []
        for mime in IMAGE_TYPES:
            if mime in types:
                data = await _read(["xclip", "-selection", "clipboard", "-t", mime, "-o"])
                if data:
                    return data, mime
    return None
