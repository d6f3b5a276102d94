"""``ctx.ui`` in the interactive mode: plugins' notifications become chat lines, their
questions become dialogs in the editor's place."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_core.context import NullUI
from pi_plugins.interactive.dialogs import InputDialog, Item, ListDialog

if TYPE_CHECKING:
    from pi_plugins.interactive.app import InteractiveApp

_STYLES = {"error": "error", "warning": "warning", "success": "success"}


class InteractiveUI:
    has_ui = True

    def __init__(self, tui: "InteractiveApp") -> None:
        self.tui = tui
        self._fallback = NullUI()

    def notify(self, message: str, level: str = "info") -> None:
        prefix = {"error": "Error: ", "warning": "Warning: "}.get(level, "")
        self.tui.add_text(prefix + str(message), _STYLES.get(level, "accent"))

    async def confirm(self, title: str, message: str = "") -> bool:
        if not self.tui.running:
            return await self._fallback.confirm(title, message)
        answer = await self.tui.show_dialog(ListDialog(
            self.tui.painter, title, [Item("Yes", True), Item("No", False)], subtitle=message or None))
        return bool(answer)

    async def select(self, title: str, options: list[str]) -> str | None:
        if not self.tui.running:
            return await self._fallback.select(title, options)
        items = [Item(str(option), option) for option in options]
        return await self.tui.show_dialog(ListDialog(self.tui.painter, title, items,
                                                     search=len(items) > 10))

    async def input(self, title: str, placeholder: str = "") -> str | None:
        if not self.tui.running:
            return await self._fallback.input(title, placeholder)
        return await self.tui.show_dialog(InputDialog(self.tui.painter, title, placeholder))

    def set_status(self, key: str, text: str | None) -> None:
        """A line of plugin status in the footer (None removes it)."""
        self.tui.set_status(key, text)
