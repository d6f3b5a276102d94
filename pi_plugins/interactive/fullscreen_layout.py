"""pi 1.6's fullscreen chat (``tuiMode: "fullscreen"``, ``--tui-mode fullscreen``): the
chat on prompt_toolkit's full-screen application, in the terminal's alternate screen.

The transcript (:mod:`.transcript_view`) fills the rows above the sticky editor, footer
and widgets, which are the regular mode's (:meth:`.layout.ChatLayout.bottom_area`);
overlays and the search box float over it. The ``tui.altScreen.*`` keys scroll it and
take precedence over the editor's keys of the same name, except while a list has the
keys (completions, a dialog, an overlay). On exit the alternate screen goes and
``fullscreenExitOutput`` says what is printed where the chat was.
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, TextIO

from prompt_toolkit.application import Application
from prompt_toolkit.filters import Condition, has_completions
from prompt_toolkit.key_binding import DynamicKeyBindings, KeyBindings, merge_key_bindings
from prompt_toolkit.layout import FloatContainer, HSplit, Window

from pi_plugins.interactive.keys import UnbindableKey, key_sequences

if TYPE_CHECKING:
    from pi_plugins.interactive.app import InteractiveApp
    from pi_plugins.interactive.layout import ChatLayout
    from pi_plugins.interactive.transcript_view import TranscriptView

log = logging.getLogger("pi.interactive")
TUI_MODES = ("fullscreen", "regular")
DEFAULT_MODE = "fullscreen"
#: What /hotkeys adds in fullscreen mode.
FULLSCREEN_HOTKEYS = [
    ("tui.altScreen.pageUp", "scroll the transcript up a page"),
    ("tui.altScreen.pageDown", "scroll the transcript down a page"),
    ("tui.altScreen.previousPrompt", "to the previous of your messages"),
    ("tui.altScreen.nextPrompt", "to the next of your messages"),
    ("tui.altScreen.top", "to the transcript's start"),
    ("tui.altScreen.bottom", "to the end, following new output"),
    ("tui.altScreen.search", "search the transcript (enter / shift+enter: next / previous)"),
]


def tui_mode(pi_app) -> str:
    """``--tui-mode``, else the ``tuiMode`` setting, else pi 1.6's default (fullscreen)."""
    chosen = getattr(pi_app.args, "tui_mode", None)
    if chosen in TUI_MODES:
        return chosen
    setting = pi_app.harness.ctx.settings.get("tuiMode", DEFAULT_MODE)
    return setting if setting in TUI_MODES else DEFAULT_MODE


def make_fullscreen_application(layout: ChatLayout) -> Application:
    tui = layout.tui
    view: TranscriptView = tui.scrollback  # type: ignore[assignment]  # fullscreen's stand-in
    transcript = FloatContainer(Window(view.control()), floats=[view.search.float()])
    root = FloatContainer(HSplit([transcript, layout.bottom_area()]), floats=tui.overlays.floats)
    from pi_plugins.interactive.component_mouse import mouse_bindings

    keys = merge_key_bindings([DynamicKeyBindings(lambda: tui.keys.bindings), alt_screen_keys(tui, view),
                               mouse_bindings()])  # components hold their gestures, see screen cells
    return layout.application(root, full_screen=True, mouse_support=True, key_bindings=keys)


def alt_screen_keys(tui: InteractiveApp, view: TranscriptView) -> KeyBindings:
    """The ``tui.altScreen.*`` actions, by keybindings.json."""
    kb = KeyBindings()
    # a list with the keys (completions, a dialog, an overlay) keeps its own paging keys
    scrolling = Condition(lambda: tui.editing() and not view.search.open) & ~has_completions
    actions = {
        "tui.altScreen.pageUp": (lambda: view.page(-1), scrolling),
        "tui.altScreen.pageDown": (lambda: view.page(1), scrolling),
        "tui.altScreen.halfPageUp": (lambda: view.page(-1, 0.5), scrolling),
        "tui.altScreen.halfPageDown": (lambda: view.page(1, 0.5), scrolling),
        "tui.altScreen.lineUp": (lambda: view.scroll_by(-1), scrolling),
        "tui.altScreen.lineDown": (lambda: view.scroll_by(1), scrolling),
        "tui.altScreen.previousPrompt": (lambda: view.jump_prompt(-1), scrolling),
        "tui.altScreen.nextPrompt": (lambda: view.jump_prompt(1), scrolling),
        "tui.altScreen.top": (view.to_top, scrolling),
        "tui.altScreen.bottom": (view.to_bottom, scrolling),
        "tui.altScreen.search": (view.search.start, Condition(lambda: True)),
    }
    for action, (handler, active) in actions.items():
        for spec in tui.keybindings.keys(action):
            try:
                sequences = key_sequences(spec)
            except UnbindableKey as exc:
                tui.keys.problems.append(f"{action}: {exc}")
                continue
            for sequence in sequences:
                kb.add(*sequence, filter=active)(lambda event, h=handler: h())
    return kb


# ---------------------------------------------------------------- on exit


def exit_output(tui: InteractiveApp) -> None:
    """What stays in the terminal once the alternate screen is gone: the transcript as
    the view showed it, then the editor and footer under it, as pi 1.6 leaves its chat
    (``fullscreenExitOutput: "transcript"``, the default), or nothing (``"resume-hint"``);
    the resume hint after it is the chat's own on a quit, in either mode
    (:mod:`pi_plugins.interactive.resume_hint`). The transcript's pieces painted while
    the chat ran are reused (:meth:`.TranscriptView.exit_lines`)."""
    if tui.settings.get("fullscreenExitOutput", "transcript") == "resume-hint":
        return
    from pi_plugins.interactive.exit_printing import LineWriter

    view: TranscriptView = tui.scrollback  # type: ignore[assignment]  # fullscreen's stand-in
    try:
        bottom = bottom_lines(tui, tui.width)
    except Exception:  # a plugin's footer or widget that fails must not cost the transcript
        log.debug("the editor and footer could not be painted on exit", exc_info=True)
        bottom = [""]
    runs = view.exit_line_runs()  # other cores start painting before the writer's thread does
    with LineWriter(_out(tui)) as writer:  # printed while the rest is painted
        for lines in runs:
            writer.put(lines)
        writer.put(bottom)


def bottom_lines(tui: InteractiveApp, width: int) -> list[str]:
    """The editor between its borders, the widgets below it and the footer, as lines (what
    :meth:`.layout.ChatLayout.bottom_area` draws, without a dialog or completions)."""
    from rich.text import Text

    pad = " " * tui.layout.setting_number("editorPaddingX", 0, 0, 3)
    colour = tui.live.border_style().removeprefix("fg:")
    try:
        border = tui.painter.lines(Text("─" * width, style=colour), width)
    except Exception:  # a colour rich does not read: the border uncoloured
        border = ["─" * width]
    editor = [pad + line for line in tui.editor.text.split("\n")]
    return ["", *border, *editor, *border, *tui.live.widget_lines(width, "belowEditor"),
            *tui.live.footer_lines(width)]


def print_lines(tui: InteractiveApp, lines: list[str]) -> None:
    """Lines into the terminal's normal screen, once the chat has left the alternate one."""
    if not lines:
        return
    out = _out(tui)
    try:
        out.write("\n".join(lines) + "\n")
        out.flush()
    except (OSError, ValueError):  # the terminal is gone (a hang-up): nothing to print to
        pass


def _out(tui: InteractiveApp) -> TextIO:
    output = tui.terminal_output
    return output.stdout if output is not None else sys.stdout
