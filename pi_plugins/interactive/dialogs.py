"""Dialogs that take the editor's place until the user answers: a list to choose from
(optionally searched by typing), yes/no, and a line of text. Plugins reach them through
``ctx.ui``; the slash commands use them for models, sessions, the tree and forks."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from attrs import define, field
from prompt_toolkit.application import get_app
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.layout import ConditionalContainer, HSplit, Window
from prompt_toolkit.layout.controls import BufferControl
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.layout.processors import BeforeInput
from rich.console import Group
from rich.padding import Padding
from rich.text import Text

from pi_plugins.interactive.controls import LinesControl
from pi_plugins.interactive.paint import Painter

#: The list keys by pi's ids (keybindings.json's ``tui.select.*``; the chat sets them).
SELECT_KEYS: dict[str, list[tuple[str, ...]]] = {
    "tui.select.up": [("up",)], "tui.select.down": [("down",)], "tui.select.pageUp": [("pageup",)],
    "tui.select.pageDown": [("pagedown",)], "tui.select.confirm": [("enter",)],
    "tui.select.cancel": [("escape",), ("c-c",)],
}


@define
class Item:
    label: Text | str
    value: Any
    description: str = ""
    search_text: str = ""

    def haystack(self) -> str:
        plain = self.label.plain if isinstance(self.label, Text) else self.label
        return f"{plain} {self.description} {self.search_text}".lower()


class Dialog:
    """A question on screen; ``future`` holds the answer (None when cancelled)."""

    container: Any
    focus_target: Any

    def __init__(self) -> None:
        self.future: asyncio.Future = asyncio.get_running_loop().create_future()

    def done(self, value: Any) -> None:
        if not self.future.done():
            self.future.set_result(value)


def _border(width: int) -> Text:
    return Text("─" * width, style="border")


class ListDialog(Dialog):
    """Choose one item with the arrow keys and Enter; Esc or Ctrl+C cancels. With
    ``search``, typing narrows the list to items holding every typed word (or what
    ``matcher`` keeps)."""

    def __init__(self, painter: Painter, title: str, items: list[Item], *, subtitle: str | None = None,
                 search: bool = False, query: str = "", selected: int = 0, max_visible: int = 10,
                 hint: str | None = None, keys: dict[str, Callable[[ListDialog], None]] | None = None,
                 detail: Callable[[Item], str | None] | None = None,
                 matcher: Callable[[str, list[Item]], list[Item]] | None = None,
                 column: int | None = None) -> None:
        super().__init__()
        #: With ``column``, labels are padded into a column that wide and descriptions
        #: start after it, as pi-tui's SelectList lays out ``label``/``description``.
        self.column = column
        #: ``matcher(query, items)``: the items to list for what is typed, in order.
        self.matcher = matcher
        self.painter = painter
        self.title, self.subtitle = title, subtitle
        self.all_items = list(items)
        self.max_visible = max_visible
        self.detail = detail
        self.hint = hint or "↑↓ navigate  enter select  esc cancel"
        self.selected = selected
        self.items = list(items)
        self.search = Buffer(multiline=False, document=None, on_text_changed=lambda _: self.refilter())
        kb = KeyBindings()
        actions = {"tui.select.up": lambda e: self.move(-1), "tui.select.down": lambda e: self.move(1),
                   "tui.select.pageUp": lambda e: self.move(-self.visible, wrap=False),
                   "tui.select.pageDown": lambda e: self.move(self.visible, wrap=False),
                   "tui.select.confirm": lambda e: self.choose(), "tui.select.cancel": lambda e: self.done(None)}
        for action_id, handler in actions.items():
            for sequence in SELECT_KEYS[action_id]:
                kb.add(*sequence)(handler)
        for key, action in (keys or {}).items():
            kb.add(*key.split(" "))(lambda e, action=action: action(self))
        if search:
            self.search.text = query
            self.focus_target = Window(BufferControl(self.search, key_bindings=kb,
                                                     input_processors=[BeforeInput(" > ", style="class:dialog-prompt")]),
                                       height=1)
            list_window = Window(LinesControl(self._list_lines), dont_extend_height=True)
        else:
            list_window = Window(LinesControl(self._list_lines, focusable=True, key_bindings=kb),
                                 dont_extend_height=True)
            self.focus_target = list_window
        self.refilter(keep=selected)
        self.container = HSplit([
            Window(LinesControl(self._head_lines), dont_extend_height=True),
            ConditionalContainer(self.focus_target, filter=Condition(lambda: search)),
            list_window,
            Window(LinesControl(self._foot_lines), dont_extend_height=True),
        ])

    # ------------------------------------------------------------ behaviour

    def refilter(self, keep: int | None = None) -> None:
        words = self.search.text.lower().split()
        current = self.current
        if self.matcher is not None:
            self.items = self.matcher(self.search.text, self.all_items)
        else:
            self.items = [i for i in self.all_items if all(w in i.haystack() for w in words)]
        if keep is not None:
            self.selected = max(0, min(keep, len(self.items) - 1))
        elif current is not None and current in self.items:
            self.selected = self.items.index(current)
        else:
            self.selected = 0

    def set_items(self, items: list[Item], select_value: Any = None) -> None:
        self.all_items = list(items)
        self.refilter()
        if select_value is not None:
            self.select_value(select_value)

    def select_value(self, value: Any) -> None:
        for index, item in enumerate(self.items):
            if item.value == value:
                self.selected = index
                return

    @property
    def current(self) -> Item | None:
        items = getattr(self, "items", [])
        return items[self.selected] if 0 <= self.selected < len(items) else None

    def move(self, step: int, wrap: bool = True) -> None:
        if not self.items:
            return
        target = self.selected + step
        if wrap and abs(step) == 1:
            target %= len(self.items)
        self.selected = max(0, min(target, len(self.items) - 1))

    def choose(self) -> None:
        if self.current is not None:
            self.done(self.current.value)

    # ------------------------------------------------------------ painting

    def _head_lines(self, width: int) -> list[str]:
        parts = [_border(width), Text(""), Text(self.title, style="bold accent")]
        if self.subtitle:
            parts.append(Text(self.subtitle, style="muted"))
        return self.painter.lines(_indented(parts), width)

    @property
    def visible(self) -> int:
        """How many items fit: ``max_visible``, fewer in a short terminal."""
        try:
            rows = get_app().output.get_size().rows
        except Exception:
            return self.max_visible
        return max(3, min(self.max_visible, rows - 17))

    def _list_lines(self, width: int) -> list[str]:
        rows: list[Text] = [Text("")]
        shown = self.visible
        if not self.items:
            rows.append(Text("  No matches", style="muted"))
        else:
            start = max(0, min(self.selected - shown // 2, len(self.items) - shown))
            for index in range(start, min(start + shown, len(self.items))):
                item = self.items[index]
                label = item.label if isinstance(item.label, Text) else Text(item.label)
                chosen = index == self.selected
                row = Text("→ " if chosen else "  ", style="accent")
                if self.column is not None and item.description and width > 40:
                    label = _in_column(label, min(self.column, width - 6))
                row.append_text(label.copy() if not chosen else _emphasised(label))
                if item.description:
                    row.append(item.description if self.column is not None else "  " + item.description,
                               style="muted")
                row.truncate(max(width - 2, 1), overflow="ellipsis")
                rows.append(row)
            if len(self.items) > shown:
                rows.append(Text(f"  ({self.selected + 1}/{len(self.items)})", style="muted"))
            detail = self.detail(self.current) if self.detail and self.current else None
            if detail:
                rows += [Text(""), Text(detail, style="muted")]
        return self.painter.lines(_indented(rows), width)

    def _foot_lines(self, width: int) -> list[str]:
        return self.painter.lines(_indented([Text(""), Text(self.hint, style="dim"), Text(""), _border(width)]),
                                  width)


def _in_column(label: Text, column: int) -> Text:
    """The label cut to leave a two-cell gap and padded to ``column`` cells (pi-tui's
    primary column)."""
    shown = label.copy()
    shown.truncate(max(1, column - 2))
    shown.pad_right(max(1, column - shown.cell_len))
    return shown


def _emphasised(label: Text) -> Text:
    shown = label.copy()
    shown.stylize("bold accent") if not shown.spans else shown.stylize("bold")
    return shown


def _indented(parts: list[Text]) -> Group:
    """One column in from the left, as the chat is; border lines stay full width."""
    return Group(*[p if p.plain.startswith("─") else Padding(p, (0, 0, 0, 1)) for p in parts])


class InputDialog(Dialog):
    """Text to type (Enter answers, Esc cancels); ``multiline`` takes new lines with
    Ctrl+J (or Shift+Enter)."""

    def __init__(self, painter: Painter, title: str, placeholder: str = "", text: str = "",
                 hint: str = "enter submit  esc cancel", multiline: bool = False) -> None:
        super().__init__()
        self.painter, self.title, self.placeholder, self.hint = painter, title, placeholder, hint
        self.buffer = Buffer(multiline=multiline)
        self.buffer.text = text
        self.buffer.cursor_position = len(text)
        kb = KeyBindings()
        kb.add("enter")(lambda e: self.done(self.buffer.text))
        kb.add("c-j")(lambda e: self.buffer.insert_text("\n"))
        kb.add("escape")(lambda e: self.done(None))
        kb.add("c-c")(lambda e: self.done(None))
        self.focus_target = Window(BufferControl(self.buffer, key_bindings=kb,
                                                 input_processors=[BeforeInput(" > ", style="class:dialog-prompt")]),
                                   height=Dimension(min=1, max=10) if multiline else 1,
                                   dont_extend_height=True, wrap_lines=True)
        self.container = HSplit([
            Window(LinesControl(self._head_lines), dont_extend_height=True),
            self.focus_target,
            Window(LinesControl(self._foot_lines), dont_extend_height=True),
        ])

    def _head_lines(self, width: int) -> list[str]:
        parts = [_border(width), Text(""), Text(self.title, style="bold accent")]
        if self.placeholder:
            parts.append(Text(self.placeholder, style="muted"))
        parts.append(Text(""))
        return self.painter.lines(_indented(parts), width)

    def _foot_lines(self, width: int) -> list[str]:
        return self.painter.lines(_indented([Text(""), Text(self.hint, style="dim"), _border(width)]), width)


@define
class DialogHost:
    """Shows one dialog at a time in the editor's place; later ones wait their turn."""

    on_change: Callable[[Any], None]
    current: Dialog | None = None
    _lock: asyncio.Lock = field(factory=asyncio.Lock)

    async def show(self, dialog: Dialog) -> Any:
        async with self._lock:
            self.current = dialog
            self.on_change(dialog)
            try:
                return await dialog.future
            finally:
                self.current = None
                self.on_change(None)

    def cancel_all(self) -> None:
        if self.current is not None:
            self.current.done(None)
