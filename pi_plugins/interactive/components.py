"""Plugins draw in the chat with components, as pi-tui's: an object with
``render(width) -> list[str]`` (lines of at most ``width`` columns, ANSI styles allowed)
and, to take keys, ``handle_input(data)`` (``data``: what the terminal sent, e.g.
``"\\x1b[A"`` for Up; compare with :func:`matches_key` or ``keybindings.matches``).

``await ctx.ui.custom(factory, overlay=False)`` calls ``factory(tui, theme, keybindings,
done)`` and shows the component it returns in the editor's place (``overlay=True``: over
the chat, where ``overlay_options`` say, :mod:`pi_plugins.interactive.overlays`; the
newest has the keys); ``done(value)`` closes it and ``custom()`` returns the value.
``tui.request_render()`` redraws after a change.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import Window
from rich.text import Text

from pi_plugins.interactive.controls import LinesControl
from pi_plugins.interactive.dialogs import Dialog

if TYPE_CHECKING:
    from pi_plugins.interactive.app import InteractiveApp

#: What terminals send for named keys (``matches_key``).
_SENT = {
    "enter": ["\r"], "return": ["\r"], "tab": ["\t"], "escape": ["\x1b"], "esc": ["\x1b"], "space": [" "],
    "backspace": ["\x7f", "\x08"], "delete": ["\x1b[3~"], "insert": ["\x1b[2~"],
    "up": ["\x1b[A", "\x1bOA"], "down": ["\x1b[B", "\x1bOB"], "right": ["\x1b[C", "\x1bOC"],
    "left": ["\x1b[D", "\x1bOD"], "home": ["\x1b[H", "\x1bOH", "\x1b[1~"], "end": ["\x1b[F", "\x1bOF", "\x1b[4~"],
    "pageup": ["\x1b[5~"], "pagedown": ["\x1b[6~"], "shift+tab": ["\x1b[Z"],
}


def key_data(spec: str) -> list[str]:
    """What a terminal sends for ``spec`` (``"ctrl+c"``, ``"up"``, ``"alt+x"``, ``"a"``)."""
    parts = [p for p in spec.lower().replace(" ", "").split("+") if p] or [spec]
    key, modifiers = parts[-1], set(parts[:-1])
    if modifiers == {"shift"} and key == "tab":
        return list(_SENT["shift+tab"])
    if key in _SENT:
        base = list(_SENT[key])
    elif len(key) == 1:
        base = [key.upper() if "shift" in modifiers else key]
    else:
        return []
    if "ctrl" in modifiers and len(key) == 1 and key.isalpha():
        base = [chr(ord(key) - 96)]
    elif "ctrl" in modifiers and key in ("up", "down", "right", "left"):
        base = [f"\x1b[1;5{_SENT[key][0][-1]}"]
    return ["\x1b" + b for b in base] if "alt" in modifiers else base


def matches_key(data: str, spec: str) -> bool:
    return data in key_data(spec)


class Theme:
    """The chat's theme for plugins: ``fg("accent", text)``, ``bg(...)``, ``bold(text)``…
    return ANSI text. Colour names are pi's (``accent``, ``muted``, ``dim``, ``success``,
    ``error``, ``warning``, ``border``, ``toolTitle``…) or any rich colour."""

    def __init__(self, tui: InteractiveApp) -> None:
        self._tui = tui

    @property
    def name(self) -> str:
        return self._tui.settings.get("theme") or "dark"

    def _paint(self, text: str, style: str) -> str:
        from pi_plugins.interactive.theme import STYLES

        painter = self._tui.painter
        console = painter.console(max(len(text), 1) + 10)
        try:
            styled = Text(text, style=STYLES.get(style) or console.get_style(style))
        except Exception:
            styled = Text(text)
        with console.capture() as capture:
            console.print(styled, end="", soft_wrap=True)
        return capture.get()

    def fg(self, color: str, text: str) -> str:
        return self._paint(text, _style_name(color))

    def bg(self, color: str, text: str) -> str:
        from pi_plugins.interactive.theme import STYLES

        style = STYLES.get(_style_name(color))
        colour = getattr(style, "bgcolor", None) or getattr(style, "color", None) if style is not None else None
        return self._paint(text, f"on {colour.name}" if colour is not None else f"on {color}")

    def bold(self, text: str) -> str:
        return self._paint(text, "bold")

    def italic(self, text: str) -> str:
        return self._paint(text, "italic")

    def underline(self, text: str) -> str:
        return self._paint(text, "underline")

    def inverse(self, text: str) -> str:
        return self._paint(text, "reverse")


def _style_name(color: str) -> str:
    """pi's camelCase colour tokens as the chat's style names (``toolTitle`` → ``tool.title``)."""
    from pi_plugins.interactive.theme import STYLES

    if color in STYLES:
        return color
    dotted = "".join("." + c.lower() if c.isupper() else c for c in color)
    return dotted if dotted in STYLES else color


class KeybindingsView:
    """``keybindings`` for components: ``matches(data, "tui.select.up")`` by the ids of
    keybindings.json, and ``get_keys(id)``."""

    def __init__(self, keybindings) -> None:
        self._keybindings = keybindings

    def get_keys(self, action: str) -> list[str]:
        return list(self._keybindings.keys(action))

    def matches(self, data: str, action: str) -> bool:
        return any(matches_key(data, spec) for spec in self._keybindings.keys(action))


class TuiHandle:
    """``tui`` for components: redraw, the terminal's size, and the editor."""

    def __init__(self, app: InteractiveApp) -> None:
        self._app = app

    def request_render(self) -> None:
        self._app.invalidate()

    @property
    def columns(self) -> int:
        return self._app.width

    @property
    def rows(self) -> int:
        return self._app.rows

    def submit(self, text: str) -> None:
        """Send ``text`` as if typed in the editor and Enter pressed (for custom editors)."""
        if text.strip():
            self._app.submit(text)


def component_lines(component: Any, width: int) -> list[str]:
    """A component's lines, each cut to ``width``; a failing component shows its error."""
    try:
        lines = [str(line) for line in component.render(width)]
    except Exception as exc:
        return [f" [component failed: {type(exc).__name__}: {exc}]"]
    return [line if "\x1b" in line or len(line) <= width else line[:width] for line in lines]


def component_window(component: Any, on_key: Callable[[str], None] | None = None,
                     lines: Callable[[int], list[str]] | None = None,
                     on_mouse: Callable[[Any, int, int], Any] | None = None) -> Window:
    """A prompt_toolkit window showing ``component`` (or ``lines(width)``: what was drawn
    of it); with ``on_key`` it takes the keys, with ``on_mouse`` the mouse
    (:class:`.component_mouse.MouseRouter`)."""
    kb = None
    if on_key is not None:
        kb = KeyBindings()

        @kb.add(Keys.Any)
        def _(event):
            on_key("".join(press.data for press in event.key_sequence))

    draw = lines or (lambda width: component_lines(component, width))
    return Window(LinesControl(draw, focusable=on_key is not None,
                               key_bindings=kb, on_mouse=on_mouse), dont_extend_height=True)


def handle_key(component: Any, data: str) -> None:
    handler = getattr(component, "handle_input", None)
    if handler is not None:
        handler(data)


class ComponentDialog(Dialog):
    """A plugin's component in the editor's place (or as an overlay) until ``done``."""

    def __init__(self, tui: InteractiveApp, factory: Callable) -> None:
        super().__init__()
        self.component = factory(TuiHandle(tui), Theme(tui), KeybindingsView(tui.keybindings), self.close)
        if asyncio.iscoroutine(self.component):
            raise TypeError("ctx.ui.custom(): the factory must return a component, not a coroutine")
        self._tui = tui
        from pi_plugins.interactive.component_mouse import MouseRouter

        #: the mouse over the component (fullscreen only: regular mode leaves it to the terminal)
        self.mouse = MouseRouter(self.component, self._mouse_failed, tui.invalidate, on_focus=self._focus)
        self.focus_target = self.container = component_window(self.component, self._key, on_mouse=self.mouse)

    def _focus(self) -> None:
        """A ``focus`` answer to the mouse: the component takes the keys."""
        app = self._tui.app
        if app is not None:
            try:
                app.layout.focus(self.focus_target)
            except ValueError:  # not on screen (closed meanwhile)
                pass

    def _mouse_failed(self, exc: Exception) -> None:
        self._tui.add_text(f"Error: a plugin's component failed on a mouse event: {exc}", "error")

    def _key(self, data: str) -> None:
        try:
            handle_key(self.component, data)
        except Exception as exc:
            self._tui.add_text(f"Error: a plugin's component failed on a key: {exc}", "error")
        self._tui.invalidate()

    def close(self, value: Any = None) -> None:
        self.done(value)
        self._tui.invalidate()


class ListeningInput(Input):
    """The terminal's input with ``ctx.ui.on_terminal_input`` listeners in front: each
    sees every key's data first and may consume it (return ``{"consume": True}``) or
    replace it (``{"data": "..."}``)."""

    def __init__(self, inner: Input, listeners: list[Callable]) -> None:
        self.inner, self.listeners = inner, listeners

    def _filter(self, keys: list) -> list:
        if not self.listeners:
            return keys
        from prompt_toolkit.input.vt100_parser import Vt100Parser

        kept = []
        for press in keys:
            data, consumed = press.data, False
            for listener in list(self.listeners):
                try:
                    answer = listener(data)
                except Exception:
                    continue
                if isinstance(answer, dict) and answer.get("consume"):
                    consumed = True
                    break
                if isinstance(answer, dict) and isinstance(answer.get("data"), str):
                    data = answer["data"]
            if consumed:
                continue
            if data == press.data:
                kept.append(press)
            else:
                parser = Vt100Parser(kept.append)
                parser.feed(data)
                parser.flush()
        return kept

    def fileno(self) -> int:
        return self.inner.fileno()

    def typeahead_hash(self) -> str:
        return self.inner.typeahead_hash()

    def read_keys(self) -> list:
        return self._filter(self.inner.read_keys())

    def flush_keys(self) -> list:
        return self._filter(self.inner.flush_keys())

    def flush(self) -> None:
        self.inner.flush()

    @property
    def closed(self) -> bool:
        return self.inner.closed

    def raw_mode(self):
        return self.inner.raw_mode()

    def cooked_mode(self):
        return self.inner.cooked_mode()

    def attach(self, input_ready_callback):
        return self.inner.attach(input_ready_callback)

    def detach(self):
        return self.inner.detach()

    def close(self) -> None:
        self.inner.close()
