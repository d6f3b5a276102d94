"""The chat's screen as prompt_toolkit lays it out, inline (not full screen): the backdrop
behind overlays, the live area, and under it the editor (or a dialog, or a plugin's
editor), the completions menu, the widgets below the editor and the footer; overlays float
over it all. Also which of them has the keys (:meth:`ChatLayout.refocus`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prompt_toolkit.application import Application
from prompt_toolkit.filters import Condition, has_completions
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input.ansi_escape_sequences import ANSI_SEQUENCES
from prompt_toolkit.key_binding import DynamicKeyBindings
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import (
    ConditionalContainer,
    DynamicContainer,
    FloatContainer,
    HSplit,
    Layout,
    VSplit,
    Window,
)
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.layout.menus import CompletionsMenu
from prompt_toolkit.output.color_depth import ColorDepth
from prompt_toolkit.styles import Style
from prompt_toolkit.widgets import TextArea

from pi_plugins.interactive import commands as builtin
from pi_plugins.interactive.completion import EditorCompleter
from pi_plugins.interactive.component_rows import ComponentRows
from pi_plugins.interactive.controls import DrawnCursor, LinesControl
from pi_plugins.interactive.theme import PROMPT_STYLE

if TYPE_CHECKING:
    from pi_plugins.interactive.app import InteractiveApp
    from pi_plugins.interactive.dialogs import Dialog

ESCAPE_WAIT = 0.05  # how long a lone Esc byte waits to become Alt+something
KEY_WAIT = 0.15  # how long Esc waits for a key completing a binding (Alt+Enter)
_COLOR_DEPTHS = {"truecolor": ColorDepth.TRUE_COLOR, "256": ColorDepth.DEPTH_8_BIT,
                 "standard": ColorDepth.DEPTH_4_BIT, "windows": ColorDepth.DEPTH_4_BIT,
                 None: ColorDepth.MONOCHROME}

# Shift+Enter as terminals with modified-key reporting send it (xterm, kitty, tmux's
# extended keys): a new line, like Ctrl+J.
for _sequence in ("\x1b[13;2u", "\x1b[27;2;13~"):
    ANSI_SEQUENCES.setdefault(_sequence, Keys.ControlJ)
# prompt_toolkit (3.0.x) has Ctrl+Shift+Up and Down the wrong way round (xterm's CSI 1;6A
# is Up); the fullscreen transcript's prompt jumps need them right
ANSI_SEQUENCES.update({"\x1b[1;6A": Keys.ControlShiftUp, "\x1b[1;6B": Keys.ControlShiftDown,
                       "\x1b[1;8A": (Keys.Escape, Keys.ControlShiftUp),
                       "\x1b[1;8B": (Keys.Escape, Keys.ControlShiftDown)})


class ChatLayout:
    def __init__(self, tui: InteractiveApp) -> None:
        self.tui = tui
        self._bottom: HSplit | None = None
        self._menu: tuple[int, CompletionsMenu] | None = None

    def make_editor(self) -> TextArea:
        """Our editor: multi-line, with completions of commands and ``@`` files."""
        tui = self.tui

        def commands():
            found = [(name, description) for name, description, _ in builtin.BUILTINS]
            taken = {name for name, _ in found}
            found += [(c.name, c.description) for c in tui.plugin_commands.values() if c.name not in taken]
            return found

        hardware = Condition(lambda: bool(tui.settings.get("showHardwareCursor", False)))
        area = TextArea(multiline=True, wrap_lines=True, scrollbar=False, focus_on_click=False,
                        completer=EditorCompleter(commands, tui.files), complete_while_typing=True,
                        history=InMemoryHistory(), height=Dimension(min=1, max=12), dont_extend_height=True,
                        style="class:editor", input_processors=[DrawnCursor(~hardware)])
        # as pi: the terminal's cursor hidden, the editor draws its own (showHardwareCursor)
        area.window.always_hide_cursor = ~hardware

        def files_listed() -> None:  # the @ menu again, from the list that just landed
            before = area.buffer.document.text_before_cursor
            if before and not before[-1].isspace() and before.split()[-1].startswith("@"):
                area.buffer.start_completion(select_first=False)

        tui.files.on_listed = files_listed
        return area

    def make_application(self) -> Application:
        tui = self.tui
        tui.keys.bind()
        if tui.fullscreen:  # pi 1.6's tuiMode "fullscreen": its own module lays it out
            from pi_plugins.interactive.fullscreen_layout import make_fullscreen_application

            return make_fullscreen_application(self)
        chat = HSplit([Window(LinesControl(tui.scrollback.backdrop_lines), dont_extend_height=True),
                       Window(LinesControl(tui.live.lines), dont_extend_height=True), self.bottom_area()])
        root = FloatContainer(chat, floats=tui.overlays.floats)
        return self.application(root, full_screen=False, mouse_support=False)

    def bottom_area(self) -> HSplit:
        """The editor (or a dialog, or a plugin's editor), completions, the widgets below
        the editor and the footer: the same in both modes."""
        tui = self.tui
        padding = lambda: Dimension.exact(self.setting_number("editorPaddingX", 0, 0, 3))
        border = tui.live.border_style
        default_editor = HSplit([
            Window(height=1),
            Window(height=1, char="─", style=border),
            VSplit([Window(width=padding), tui.editor, Window(width=padding)]),
            Window(height=1, char="─", style=border),
        ])
        editor_area = DynamicContainer(lambda: tui.editor_component_window or default_editor)
        has_dialog = Condition(lambda: tui.dialogs.current is not None)
        self._bottom = HSplit([
            DynamicContainer(lambda: tui.dialogs.current.container if tui.dialogs.current else editor_area),
            ConditionalContainer(DynamicContainer(self._completions_menu), filter=has_completions & ~has_dialog),
            ComponentRows(tui, lambda width: tui.live.widget_parts(width, "belowEditor")).window,
            ComponentRows(tui, tui.live.footer_parts).window,  # plugin components get the mouse
        ])
        return self._bottom

    def application(self, root, *, full_screen: bool, mouse_support: bool, key_bindings=None) -> Application:
        """prompt_toolkit's application around ``root``, with the chat's keys, style and timings."""
        tui = self.tui
        try:
            layout = Layout(root, focused_element=tui.editor)
        except ValueError:  # a dialog stands where the editor is (the TUI mode switched under /settings)
            layout = Layout(root)
        app = Application(
            layout=layout,
            input=tui.terminal_input,
            output=tui.terminal_output,
            key_bindings=key_bindings or DynamicKeyBindings(lambda: tui.keys.bindings),
            style=Style.from_dict(PROMPT_STYLE),
            full_screen=full_screen,
            mouse_support=mouse_support,
            erase_when_done=True,
            color_depth=_COLOR_DEPTHS.get(tui.painter.color_system, ColorDepth.DEPTH_8_BIT),
            min_redraw_interval=0.03,
            max_render_postpone_time=0.1,
            before_render=tui.scrollback.before_render,
            after_render=tui.scrollback.after_render,
        )
        app.ttimeoutlen = ESCAPE_WAIT
        app.timeoutlen = KEY_WAIT
        return app

    def bottom_height(self) -> int:
        """Rows under the live chat: the editor (or dialog), completions, the footer."""
        if self._bottom is None:
            return 8
        return self._bottom.preferred_height(self.tui.width, self.tui.rows).preferred

    def setting_number(self, key: str, default: int, lowest: int, highest: int) -> int:
        value = self.tui.settings.get(key, default)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return default
        return int(min(max(value, lowest), highest))

    def _completions_menu(self) -> CompletionsMenu:
        """As many rows as ``autocompleteMaxVisible`` (3-20, default 5) allows."""
        rows = self.setting_number("autocompleteMaxVisible", 5, 3, 20)
        if self._menu is None or self._menu[0] != rows:
            self._menu = (rows, CompletionsMenu(max_height=rows, scroll_offset=1))
        return self._menu[1]

    def refocus(self, dialog: Dialog | None = None) -> None:
        """Focus: the newest overlay, else the dialog, else a plugin's editor, else ours."""
        tui = self.tui
        app = tui.app
        if app is None:
            return
        dialog = tui.dialogs.current
        if tui.overlays.focused_overlay is not None:
            target = tui.overlays.focused_overlay.dialog.focus_target
        elif dialog is not None:
            target = dialog.focus_target
        elif tui.editor_component_window is not None:
            target = tui.editor_component_window
        else:
            target = tui.editor
        try:
            app.layout.focus(target)
        except ValueError:
            pass
        tui.invalidate()
