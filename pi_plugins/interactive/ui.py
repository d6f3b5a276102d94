"""``ctx.ui`` in the interactive mode: plugins' notifications become chat lines, their
questions become dialogs in the editor's place, their status lines and widgets show
around the editor.

The same calls as pi's extension UI (and the RPC mode's): ``notify``, ``confirm``,
``select``, ``input``, ``editor`` (each dialog with an optional ``timeout`` in seconds,
after which it answers as if cancelled), ``set_status``, ``set_widget``, ``set_title``,
``set_editor_text`` and ``get_editor_text``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from pi_plugins.interactive.dialogs import Dialog, InputDialog, Item, ListDialog

if TYPE_CHECKING:
    from pi_plugins.interactive.app import InteractiveApp

_STYLES = {"error": "error", "warning": "warning", "success": "success"}


class InteractiveUI:
    has_ui = True

    def __init__(self, tui: "InteractiveApp") -> None:
        self.tui = tui

    def notify(self, message: str, level: str = "info") -> None:
        prefix = {"error": "Error: ", "warning": "Warning: "}.get(level, "")
        self.tui.add_text(prefix + str(message), _STYLES.get(level, "accent"))

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None) -> bool:
        dialog = lambda: ListDialog(self.tui.painter, title, [Item("Yes", True), Item("No", False)],
                                    subtitle=message or None)
        return bool(await self._ask(dialog, timeout))

    async def select(self, title: str, options: list[str], *, timeout: float | None = None) -> str | None:
        items = [Item(str(option), option) for option in options]
        return await self._ask(lambda: ListDialog(self.tui.painter, title, items, search=len(items) > 10), timeout)

    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None) -> str | None:
        return await self._ask(lambda: InputDialog(self.tui.painter, title, placeholder), timeout)

    async def editor(self, title: str, prefill: str = "", *, timeout: float | None = None) -> str | None:
        """Several lines of text (Enter answers; Ctrl+J or Shift+Enter starts a new line)."""
        return await self._ask(lambda: InputDialog(self.tui.painter, title, text=prefill, multiline=True,
                                                   hint="enter submit  ctrl+j new line  esc cancel"), timeout)

    async def _ask(self, make_dialog, timeout: float | None) -> Any:
        """Show a dialog and wait for its answer; None when there is no screen (the
        mode has not started or has ended) or the time ran out."""
        if not self.tui.running:
            return None
        dialog: Dialog = make_dialog()
        if timeout is None:
            return await self.tui.show_dialog(dialog)
        try:
            return await asyncio.wait_for(self.tui.show_dialog(dialog), timeout)
        except asyncio.TimeoutError:
            return None

    def set_status(self, key: str, text: str | None = None) -> None:
        """A line of plugin status under the footer (None removes it)."""
        self.tui.set_status(key, text)

    def set_widget(self, key: str, lines: list[str] | None = None, placement: str | None = None) -> None:
        """Lines a plugin keeps on screen above the editor (``placement`` "belowEditor":
        under it); None removes them."""
        self.tui.set_widget(key, lines, placement or "aboveEditor")

    def set_title(self, title: str) -> None:
        self.tui.set_title(title)

    def set_editor_text(self, text: str) -> None:
        self.tui.set_editor_text(text)

    def get_editor_text(self) -> str:
        return self.tui.editor.text
