"""The component calls of ``ctx.ui`` where no terminal draws (the rpc, acp, print and
json modes), as pi 0.73.1's RPC mode treats them, so a plugin written for the chat runs
everywhere: ``custom()`` returns None; footers, headers, editors, the working line,
autocomplete and key listeners are no-ops; ``get_tools_expanded()`` is False; the theme
gives text back unstyled (nothing to style for), there are no themes to list or switch
to; ``paste_to_editor`` is ``set_editor_text``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pi_core.context import NullUI


class PlainTheme:
    """``ctx.ui.theme`` without a terminal: each call returns its text unchanged."""

    name = "dark"

    def fg(self, color: str, text: str) -> str:
        return text

    def bg(self, color: str, text: str) -> str:
        return text

    def bold(self, text: str) -> str:
        return text

    italic = underline = inverse = strikethrough = bold


def _nothing() -> None:
    pass


class HeadlessComponents:
    """Mixed into a mode's UI; ``theme_error`` is what ``set_theme`` answers (pi's words)."""

    theme_error = "UI not available"
    set_editor_text: Callable[[str], None]  # the mode's UI this is mixed into has it

    async def custom(self, factory: Any, overlay: bool = False, **options: Any) -> Any:
        return None

    def set_footer(self, factory: Any = None) -> None:
        pass

    def set_header(self, factory: Any = None) -> None:
        pass

    def set_editor_component(self, factory: Any = None) -> None:
        pass

    def get_editor_component(self) -> Any:
        return None

    def set_working_message(self, message: str | None = None) -> None:
        pass

    def set_working_visible(self, visible: bool = True) -> None:
        pass

    def set_working_indicator(self, indicator: dict | None = None) -> None:
        pass

    def set_hidden_thinking_label(self, label: str | None = None) -> None:
        pass

    def add_autocomplete_provider(self, factory: Any) -> None:
        pass

    def on_terminal_input(self, handler: Any) -> Any:
        """No keys arrive here; returns the (idle) remover all the same."""
        return _nothing

    def paste_to_editor(self, text: str) -> None:
        self.set_editor_text(text)

    @property
    def theme(self) -> PlainTheme:
        return PlainTheme()

    def get_all_themes(self) -> list[dict]:
        return []

    def get_theme(self, name: str) -> Any:
        return None

    def set_theme(self, theme: Any) -> dict:
        return {"success": False, "error": self.theme_error}

    def get_tools_expanded(self) -> bool:
        return False

    def set_tools_expanded(self, expanded: bool) -> None:
        pass


class PrintUI(HeadlessComponents, NullUI):
    """``ctx.ui`` in the print and json modes: no UI (``has_ui`` False; dialogs answer
    no or nothing, notifications are logged) and pi's no-op component calls."""
