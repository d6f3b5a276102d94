"""``ctx.ui`` in the interactive mode: plugins' notifications become chat lines, their
questions become dialogs in the editor's place, their status lines and widgets show
around the editor.

The same calls as pi's extension UI (and the RPC mode's): ``notify``, ``confirm``,
``select``, ``input``, ``editor`` (each dialog with an optional ``timeout`` in seconds,
after which it answers as if cancelled), ``set_status``, ``set_widget``, ``set_title``,
``set_editor_text`` and ``get_editor_text``; and pi-tui's component model
(:mod:`pi_plugins.interactive.components`): ``custom``, ``set_footer``, ``set_header``,
``set_editor_component``, the working line, key listeners, autocomplete providers, themes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from pi_plugins.interactive.dialogs import Dialog, InputDialog, Item, ListDialog

if TYPE_CHECKING:
    from pi_plugins.interactive.app import InteractiveApp

_STYLES = {"error": "error", "warning": "warning", "success": "success"}
#: pi-tui's SelectList primary column (label plus its two-cell gap), in cells.
SELECT_COLUMN = 32


class InteractiveUI:
    has_ui = True

    def __init__(self, tui: InteractiveApp) -> None:
        self.tui = tui
        self._signing_in: str | None = None  # "Log in to …" while a sign-in waits (pi 1.6's ``auth``)

    @contextlib.contextmanager
    def signing_in(self, provider_name: str) -> Iterator[None]:
        """While a provider's sign-in waits for the user (a browser, a pasted code), the
        terminal is told pi is ``blocked`` on ``auth``, "Log in to <provider>", as pi 1.6's
        login dialog tells it; the sign-in's own questions keep that report."""
        status = self.tui.events.status
        self._signing_in = title = f"Log in to {provider_name}"
        status.set_blocked(self, "auth", title)
        try:
            yield
        finally:
            self._signing_in = None
            status.set_blocked(self)

    def notify(self, message: str, level: str = "info") -> None:
        prefix = {"error": "Error: ", "warning": "Warning: "}.get(level, "")
        self.tui.add_text(prefix + str(message), _STYLES.get(level, "accent"))

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None) -> bool:
        dialog = lambda: ListDialog(self.tui.painter, title, [Item("Yes", True), Item("No", False)],
                                    subtitle=message or None)
        return bool(await self._ask(dialog, timeout, "permission", title))

    async def select(self, title: str, options: list[str], *, timeout: float | None = None) -> str | None:
        items = [Item(str(option), option) for option in options]
        return await self._ask(lambda: ListDialog(self.tui.painter, title, items, search=len(items) > 10), timeout,
                               "question", title)

    async def select_live(self, content: Callable[[], tuple[str, list[tuple[Any, ...]]]],
                          subscribe: Callable[[Callable[[], None]], Callable[[], None]]) -> Any:
        """A select kept up to date, as pi 1.6's live dialogs (``/mcp``'s): ``content()``
        gives the title and the options, each ``(label, value)`` or ``(label, value,
        description)``, drawn again each time the callback given to ``subscribe`` is called
        (it returns the unsubscribe); the highlight stays on its value. Descriptions start
        in a second column, as pi-tui's SelectList draws them. Returns the chosen value,
        or None."""
        title, options = content()

        def items(options: list[tuple[Any, ...]]) -> list[Item]:
            return [Item(option[0], option[1], *(option[2:3] or ("",))) for option in options]

        dialog = ListDialog(self.tui.painter, title, items(options), search=len(options) > 10,
                            column=SELECT_COLUMN)

        def redraw() -> None:
            new_title, new_options = content()
            current = dialog.current
            dialog.title = new_title
            dialog.set_items(items(new_options), current.value if current is not None else None)
            self.tui.invalidate()

        unsubscribe = subscribe(redraw)
        try:
            return await self._ask(lambda: dialog, None, "question", title)
        finally:
            unsubscribe()

    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None) -> str | None:
        return await self._ask(lambda: InputDialog(self.tui.painter, title, placeholder), timeout, "question", title)

    async def editor(self, title: str, prefill: str = "", *, timeout: float | None = None) -> str | None:
        """Several lines of text (Enter answers; Ctrl+J or Shift+Enter starts a new line)."""
        return await self._ask(lambda: InputDialog(self.tui.painter, title, text=prefill, multiline=True,
                                                   hint="enter submit  ctrl+j new line  esc cancel"), timeout,
                               "question", title)

    async def _ask(self, make_dialog, timeout: float | None, kind: str, title: str) -> Any:
        """Show a dialog and wait for its answer; None when there is no screen (the
        mode has not started or has ended) or the time ran out. Meanwhile the terminal is
        told pi is blocked on it (``kind``: pi 1.6's ``permission`` or ``question``)."""
        if not self.tui.running:
            return None
        dialog: Dialog = make_dialog()
        status = self.tui.events.status
        if self._signing_in is not None:  # a question of the sign-in: still "auth", as 1.6
            kind, title = "auth", self._signing_in
        status.set_blocked(dialog, kind, title)
        try:
            if timeout is None:
                return await self.tui.show_dialog(dialog)
            return await asyncio.wait_for(self.tui.show_dialog(dialog), timeout)
        except TimeoutError:
            return None
        finally:
            status.set_blocked(dialog)

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

    # ------------------------------------------------------------ components (pi-tui's model)

    async def custom(self, factory, overlay: bool = False, overlay_options=None, on_handle=None) -> Any:
        """Show ``factory(tui, theme, keybindings, done)``'s component until ``done(value)``;
        returns the value (None when the chat ends first). ``overlay``: over the chat,
        where ``overlay_options`` (a dict, or a function giving one) place it
        (:mod:`pi_plugins.interactive.overlays`); ``on_handle(handle)`` gets its handle."""
        from pi_plugins.interactive.components import ComponentDialog
        from pi_plugins.interactive.overlays import parse_options

        # as pi: the options are for overlays (ignored otherwise), a function is asked once
        options = None
        if overlay:
            options = parse_options(overlay_options() if callable(overlay_options) else overlay_options)
        if not self.tui.running:
            return None
        dialog = ComponentDialog(self.tui, factory)
        if overlay:
            if overlay_options is None and isinstance(getattr(dialog.component, "width", None), int):
                options = parse_options({"width": dialog.component.width})  # as pi: the component's own width
            return await self.tui.show_overlay(dialog, options, on_handle)
        return await self.tui.show_dialog(dialog)

    def set_footer(self, factory=None) -> None:
        """``factory(tui, theme)``'s component in place of the footer; None restores it."""
        from pi_plugins.interactive.components import Theme, TuiHandle

        self.tui.footer_component = factory(TuiHandle(self.tui), Theme(self.tui)) if factory else None
        self.tui.invalidate()

    def set_header(self, factory=None) -> None:
        """``factory(tui, theme)``'s component in place of the start-up header."""
        from pi_plugins.interactive.components import Theme, TuiHandle

        self.tui.header_component = factory(TuiHandle(self.tui), Theme(self.tui)) if factory else None
        if self.tui.app is not None:
            self.tui.start_over()

    def set_editor_component(self, factory=None) -> None:
        self.tui.set_editor_component(factory)

    def get_editor_component(self) -> Any:
        return self.tui.editor_component

    def set_working_message(self, message: str | None = None) -> None:
        """What the working line says while the agent works (None: the default)."""
        self.tui.working_message = message
        self.tui.invalidate()

    def set_working_visible(self, visible: bool = True) -> None:
        self.tui.working_visible = bool(visible)
        self.tui.invalidate()

    def set_working_indicator(self, indicator: dict | None = None) -> None:
        """``{"frames": [...], "interval_ms": 120}`` drawn as given; ``frames: []`` hides
        the spinner; None restores it."""
        if indicator is None:
            self.tui.working_frames, self.tui.working_interval = None, 0.1
        else:
            self.tui.working_frames = [str(f) for f in indicator.get("frames", [])]
            interval = indicator.get("interval_ms", indicator.get("intervalMs", 100))
            self.tui.working_interval = max(float(interval) / 1000, 0.02)
        self.tui.invalidate()

    def set_hidden_thinking_label(self, label: str | None = None) -> None:
        """What stands for thinking while it is hidden (Ctrl+T); None: "Thinking..."."""
        self.tui.set_view(thinking_label=label or "Thinking...")

    def on_terminal_input(self, handler) -> Any:
        """``handler(data)`` sees every key first; ``{"consume": True}`` swallows it,
        ``{"data": text}`` replaces it. Returns the function that removes the handler."""
        return self.tui.listen_to_input(handler)

    def paste_to_editor(self, text: str) -> None:
        self.tui.editor.buffer.insert_text(str(text))
        self.tui.invalidate()

    def add_autocomplete_provider(self, factory) -> None:
        """``factory(current)`` returns a provider with ``get_suggestions(lines, line, col)``
        (``{"prefix": ..., "items": [{"value", "label", "description"}]}`` or None) that may
        ask ``current`` for the built-in suggestions."""
        completer: Any = self.tui.editor.completer  # ours (EditorCompleter), or a plugin's
        if not hasattr(completer, "providers"):
            completer.providers = []
        completer.providers.append(factory)

    # ------------------------------------------------------------ theme and tools

    @property
    def theme(self) -> Any:
        from pi_plugins.interactive.components import Theme

        return Theme(self.tui)

    def get_all_themes(self) -> list[dict]:
        # pi 1.6's order: "system" first (the generated theme), then by name
        return [{"name": name, "path": None if palette.source == "builtin" else str(palette.source)}
                for name, palette in sorted(self.tui.themes.items(), key=lambda item: (item[0] != "system", item[0]))]

    def get_theme(self, name: str) -> Any:
        return self.tui.themes.get(name)

    def set_theme(self, theme) -> dict:
        """Switch by name (or a theme from ``get_theme``); ``{"success", "error"}``."""
        name = theme if isinstance(theme, str) else getattr(theme, "name", None)
        if name is None or name not in self.tui.themes:
            return {"success": False, "error": f"no theme named {name!r}"}
        self.tui.set_theme(name)
        return {"success": True}

    def get_tools_expanded(self) -> bool:
        return self.tui.view.expand_tools

    def set_tools_expanded(self, expanded: bool) -> None:
        self.tui.set_view(expand_tools=bool(expanded))
