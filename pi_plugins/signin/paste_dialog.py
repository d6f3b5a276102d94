"""The chat's copy-code sign-in as pi 1.6's one login dialog: the title, the link with
"Ctrl+click to open • ctrl+x to copy", the words, then the paste box ("> ") and
"(escape/ctrl+c to cancel)". Ctrl+X copies the link (clipboard tool and OSC 52, the
chat's ``/copy`` way); Enter gives the pasted line; Escape cancels the sign-in."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Callable
from typing import Any

#: What a terminal wraps a paste in, and control characters a code never holds.
_NOT_TYPED = re.compile(r"\x1b\[20[01]~|[\x00-\x1f\x7f]")


class PasteCodeDialog:
    def __init__(self, tui: Any, theme: Any, keys: Any, done: Callable[[Any], None], title: str, url: str,
                 instructions: str | None, message: str, write: Callable[[str], None] | None) -> None:
        self.tui, self.theme, self.keys, self.done = tui, theme, keys, done
        self.title, self.url, self.instructions, self.message, self.write = title, url, instructions, message, write
        self.copy_hint = f"{self._keys('app.message.copy')} to copy"
        self.text = ""
        self.copying: asyncio.Task | None = None

    def render(self, width: int) -> list[str]:
        fg = self.theme.fg
        click = "Cmd+click to open" if sys.platform == "darwin" else "Ctrl+click to open"
        border = fg("border", "─" * width)
        room = max(width - 2, 1)  # the link wraps, as pi 1.6's text does
        lines = [border, " " + fg("accent", self.theme.bold(self.title)), ""]
        lines += [" " + fg("accent", self.url[i:i + room]) for i in range(0, len(self.url), room)]
        lines.append(" " + fg("dim", click) + " " + fg("dim", "•") + " " + self.copy_hint)
        if self.instructions:
            lines += ["", " " + fg("warning", self.instructions)]
        shown = self.text[-max(width - 3, 1):]
        lines += ["", " " + fg("dim", self.message), "> " + shown,
                  f" ({self._keys('tui.select.cancel')} to cancel)", border]
        return lines

    def _keys(self, action: str) -> str:
        return "/".join(self.keys.get_keys(action))

    def handle_input(self, data: str) -> None:
        if self.keys.matches(data, "tui.select.cancel"):
            self.done(None)
        elif self.keys.matches(data, "app.message.copy"):
            self.copying = asyncio.ensure_future(self._copy())
        elif data in ("\r", "\n"):
            self.done(self.text)
        elif data in ("\x7f", "\x08"):
            self.text = self.text[:-1]
        else:
            self.text += _NOT_TYPED.sub("", data)
        self.tui.request_render()

    async def _copy(self) -> None:
        from pi_plugins.interactive.clipboard import copy_to_clipboard

        tool, sent = await copy_to_clipboard(self.url, self.write)
        self.copy_hint = self.theme.fg("success", "Copied URL to clipboard") if tool or sent else \
            self.theme.fg("error", "No clipboard available")
        self.tui.request_render()


async def ask(ui: Any, title: str, url: str, instructions: str | None, message: str) -> str | None:
    """The pasted line (None when cancelled), asked in the dialog with ``ui.custom``;
    where the UI has no components, the link as a note and the question as an input."""
    custom = getattr(ui, "custom", None)
    if custom is None:
        ui.notify(f"Open this link to sign in: {url}" + (f"\n{instructions}" if instructions else ""))
        return await ui.input(message)
    write = getattr(getattr(ui, "tui", None), "write_to_terminal", None)  # OSC 52

    def factory(tui: Any, theme: Any, keybindings: Any, done: Callable[[Any], None]) -> PasteCodeDialog:
        return PasteCodeDialog(tui, theme, keybindings, done, title, url, instructions, message, write)

    return await custom(factory)
