"""The chat's device-code screen, as pi 1.6's login dialog shows it: the page, "Enter
code: CODE" and "(enter to open browser and copy code)", then "Waiting for
authentication...". Enter, once, opens the page in the browser (where there is one) and
copies the code: to the clipboard tool and as OSC 52, the chat's ``/copy`` way; the hint
row then says "Code copied to clipboard" (or "Copy code manually"). Escape (or Ctrl+C)
cancels the sign-in."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any

from pi_plugins.browser import open_browser


class DeviceCodeScreen:
    def __init__(self, tui: Any, theme: Any, keys: Any, done: Callable[[Any], None], title: str, url: str,
                 code: str, write: Callable[[str], None] | None) -> None:
        self.tui, self.theme, self.keys, self.done = tui, theme, keys, done
        self.title, self.url, self.code, self.write = title, url, code, write
        self.action_hint = f"({self._keys('tui.select.confirm')} to open browser and copy code)"
        self.hint = self.action_hint
        self.armed = True  # Enter acts once: one browser, one copy
        self.copying: asyncio.Task | None = None

    def render(self, width: int) -> list[str]:
        fg = self.theme.fg
        click = "Cmd+click to open" if sys.platform == "darwin" else "Ctrl+click to open"
        border = fg("border", "─" * width)
        lines = [border, " " + fg("accent", self.theme.bold(self.title)), "",
                 " " + fg("accent", self.url), " " + fg("dim", click), "",
                 " " + fg("warning", f"Enter code: {self.code}")]
        if self.hint:
            lines.append(" " + (self.hint if self.hint == self.action_hint else fg("dim", self.hint)))
        lines += ["", " " + fg("dim", "Waiting for authentication..."),
                  f" ({self._keys('tui.select.cancel')} to cancel)", border]
        return lines

    def _keys(self, action: str) -> str:
        """The keys of ``action`` as pi 1.6's hints name them (``escape/ctrl+c``)."""
        return "/".join(self.keys.get_keys(action))

    def handle_input(self, data: str) -> None:
        if self.keys.matches(data, "tui.select.cancel"):
            self.done("cancel")
        elif self.armed and self.keys.matches(data, "tui.select.confirm"):
            self.armed = False
            self.hint = "Copying code..."
            self.copying = asyncio.ensure_future(self._copy())  # the browser does not wait for it
            open_browser(self.url)
            self.tui.request_render()

    async def _copy(self) -> None:
        from pi_plugins.interactive.clipboard import copy_to_clipboard

        tool, sent = await copy_to_clipboard(self.code, self.write)
        self.hint = "Code copied to clipboard" if tool or sent else "Copy code manually"
        self.tui.request_render()


def show(ui: Any, title: str, url: str, code: str, on_cancel: Callable[[], None]) -> Callable[[], None] | None:
    """Show the screen with ``ui.custom`` (the chat's); returns what closes it, or None
    where the UI has no components (the caller says the code in a line instead)."""
    custom = getattr(ui, "custom", None)
    if custom is None:
        return None
    app = getattr(ui, "tui", None)  # the chat's terminal, for OSC 52
    write = getattr(app, "write_to_terminal", None)
    screens: list[DeviceCodeScreen] = []

    def factory(tui: Any, theme: Any, keybindings: Any, done: Callable[[Any], None]) -> DeviceCodeScreen:
        screens.append(DeviceCodeScreen(tui, theme, keybindings, done, title, url, code, write))
        return screens[-1]

    shown = asyncio.ensure_future(custom(factory))
    shown.add_done_callback(lambda task: on_cancel() if not task.cancelled() and task.result() == "cancel" else None)

    def close() -> None:
        for screen in screens:
            screen.done(None)
        if not screens:
            shown.cancel()
    return close
