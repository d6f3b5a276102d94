"""``ui_prompt_start`` / ``ui_prompt_end`` (pi 1.6) around a plugin's dialog: the UI of
any mode, wrapped so that a host can tell "waiting for the user" from "working".
Dialogs inside a dialog (a plugin that asks twice at once) make one span."""

from __future__ import annotations

import functools
from typing import Any

from pi_core.app import session_events

DIALOGS = ("select", "confirm", "input", "editor", "custom")


class PromptingUI:
    """``ui`` with its dialogs announced to the plugins; everything else is ``ui``'s."""

    def __init__(self, ui: Any, plugins: Any, ctx: Any) -> None:
        self.wrapped, self._plugins, self._ctx, self._open = ui, plugins, ctx, 0

    def __getattr__(self, name: str) -> Any:
        value = getattr(self.wrapped, name)
        if name not in DIALOGS or not callable(value) or not getattr(self.wrapped, "has_ui", False):
            return value

        @functools.wraps(value)
        async def dialog(title: Any = None, *args: Any, **kwargs: Any) -> Any:
            self._open += 1
            if self._open == 1:
                await self._plugins.call("ui_prompt_start", ctx=self._ctx, event=session_events.UiPromptStart(
                    kind=name, title=title if isinstance(title, str) else None))
            try:
                return await value(title, *args, **kwargs)
            finally:
                self._open -= 1
                if not self._open:
                    await self._plugins.call("ui_prompt_end", ctx=self._ctx, event=session_events.UiPromptEnd())

        return dialog
