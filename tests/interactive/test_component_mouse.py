"""Mouse events for plugin components in the fullscreen chat, as pi 1.6 routes them to a
component's handler (docs/tui.md "Handle mouse input"): cells within the component,
press, release and a click, the wheel; a handled event stays with the component. In tmux,
the mouse reported as SGR sequences as a terminal sends them."""

import pytest

pytestmark = pytest.mark.process  # starts real processes (see tests/conftest.py)

CLICKY = '''
from pi_core import Command, hookimpl


class Clicky:
    def __init__(self, tui, theme, keybindings, done):
        self.keys, self.done = keybindings, done
        self.seen = []

    def render(self, width):
        return ["CLICKY top row", "CLICKY seen: " + " ".join(self.seen[-4:]), "CLICKY bottom row"]

    def handle_input(self, data):
        if self.keys.matches(data, "tui.select.cancel"):
            self.done(None)

    def handle_mouse(self, event):
        where = f"{event.type}:{event.button}@{event.x},{event.y}"
        if event.type == "wheel":
            where = f"wheel{event.wheel_delta:+d}@{event.x},{event.y}"
        self.seen.append(where)
        return {"handled": True}


async def clicky(args, ctx):
    await ctx.ui.custom(lambda *parts: Clicky(*parts))
    ctx.ui.notify("clicky closed")


@hookimpl
def register_commands():
    return [Command("clicky", "Count clicks", clicky)]
'''


def _row_of(screen: str, text: str) -> int:
    """The 1-based terminal row showing ``text``."""
    return next(i for i, line in enumerate(screen.split("\n")) if text in line) + 1


def test_a_plugin_component_gets_the_mouse_in_its_own_cells(pi_tui):
    term = pi_tui(plugin=CLICKY)
    term.submit("/clicky")
    screen = term.wait_for("CLICKY bottom row")
    top = _row_of(screen, "CLICKY top row")
    term.send_raw(f"\x1b[<0;5;{top + 2}M\x1b[<0;5;{top + 2}m")  # press and release on column 5 of its 3rd row
    screen = term.wait_for("click:left@4,2")
    assert "press:left@4,2 release:left@4,2 click:left@4,2" in screen
    term.send_raw(f"\x1b[<65;3;{top}M")  # the wheel, down, over its first row
    term.wait_for("wheel+1@2,0")
    term.press("Escape")
    term.wait_drawn("clicky closed")


def test_the_mouse_outside_the_component_still_reaches_the_transcript(pi_tui):
    term = pi_tui(plugin=CLICKY)
    term.submit("/clicky")
    screen = term.wait_for("CLICKY bottom row")
    term.send_raw("\x1b[<0;3;2M\x1b[<0;3;2m")  # on the transcript, above the component
    term.send_raw(f"\x1b[<0;3;{_row_of(screen, 'CLICKY top row')}M")
    screen = term.wait_for("press:left@2,0")
    assert screen.count("press:") == 1  # the transcript's click was not the component's


DRAGGY = '''
from pi_core import Command, hookimpl


class Draggy:
    def __init__(self, tui, theme, keybindings, done):
        self.keys, self.done = keybindings, done
        self.seen = []

    def render(self, width):
        return ["DRAGGY top row", "DRAGGY seen: " + " ".join(self.seen[-5:]), "DRAGGY bottom row"]

    def handle_input(self, data):
        if self.keys.matches(data, "tui.select.cancel"):
            self.done(None)

    def handle_mouse(self, event):
        if event.type == "move":
            return {}
        where = f"{event.type}@{event.x},{event.y}/{event.screen_x},{event.screen_y}"
        if event.type == "click":
            where = f"click{event.click_count}@{event.x},{event.y}"
        self.seen.append(where)
        return {"capture": True} if event.type == "press" else {"handled": True}


async def draggy(args, ctx):
    await ctx.ui.custom(lambda *parts: Draggy(*parts))
    ctx.ui.notify("draggy closed")


@hookimpl
def register_commands():
    return [Command("draggy", "Follow a drag", draggy)]
'''


def test_a_drag_leaving_the_component_is_followed_with_screen_cells(pi_tui):
    """pi 1.6: the component that took the press (here with ``capture``) gets the drag and
    the release wherever they happen, in its own cells (negative above it), with the
    terminal's cells as ``screen_x``/``screen_y``."""
    term = pi_tui(plugin=DRAGGY)
    term.submit("/draggy")
    screen = term.wait_for("DRAGGY bottom row")
    top = _row_of(screen, "DRAGGY top row")  # 1-based, as the terminal counts
    term.send_raw(f"\x1b[<0;5;{top + 1}M")  # press on column 5 of its 2nd row
    term.send_raw(f"\x1b[<32;7;{top - 3}M")  # drag up into the transcript, 3 rows above its top
    term.send_raw(f"\x1b[<0;7;{top - 3}m")  # and release there
    screen = term.wait_for(f"release@6,-3/6,{top - 4}")
    assert f"press@4,1/4,{top} drag@6,-3/6,{top - 4} release@6,-3/6,{top - 4}" in screen
    assert "click" not in screen  # it moved: no click
    term.press("Escape")


def test_clicks_in_a_row_count_as_double_and_triple_clicks(pi_tui):
    term = pi_tui(plugin=DRAGGY)
    term.submit("/draggy")
    screen = term.wait_for("DRAGGY bottom row")
    top = _row_of(screen, "DRAGGY top row")
    click = f"\x1b[<0;3;{top}M\x1b[<0;3;{top}m"
    term.send_raw(click + click + click)  # within pi's 500 ms
    screen = term.wait_for("click3@2,0")
    assert "click1@2,0" in screen or "click2@2,0" in screen  # the row keeps the last five
    assert screen.index("click2@2,0") < screen.index("click3@2,0")
    term.press("Escape")


WIDGETS = '''
from pi_core import Command, hookimpl


class Panel:
    """A widget or footer that logs the mouse in its own cells and, clicked, asks for the keys."""

    def __init__(self, name, tui):
        self.name, self.tui, self.seen, self.typed = name, tui, [], ""

    def render(self, width):
        return [f"{self.name} first", f"{self.name} seen: {' '.join(self.seen[-3:])} typed: {self.typed}"]

    def handle_mouse(self, event):
        self.seen.append(f"{event.type}@{event.x},{event.y}")
        return {"focus": True} if event.type == "click" else {"handled": True}

    def handle_input(self, data):
        self.typed += data


async def panels(args, ctx):
    ctx.ui.set_widget("panel", lambda tui, theme: Panel("WIDGET", tui), "belowEditor")
    ctx.ui.set_footer(lambda tui, theme: Panel("FOOTER", tui))


@hookimpl
def register_commands():
    return [Command("panels", "Show the panels", panels)]
'''


@pytest.mark.parametrize("name", ["WIDGET", "FOOTER"])
def test_widgets_and_custom_footers_get_the_mouse_and_focus_gives_them_the_keys(pi_tui, name):
    """As pi 1.6 routes the mouse to every component in fullscreen: a widget below the
    editor and a plugin's footer get events in their own cells; a ``focus`` answer (here to
    a click) gives the component the keys, and clicking the editor takes them back."""
    term = pi_tui(plugin=WIDGETS)
    term.submit("/panels")
    screen = term.wait_for(f"{name} first")
    row = _row_of(screen, f"{name} seen:")
    term.send_raw(f"\x1b[<0;7;{row}M\x1b[<0;7;{row}m")  # press and release on column 7 of its 2nd row
    term.wait_for(f"{name} seen: press@6,1 release@6,1 click@6,1")
    term.type("hi")
    screen = term.wait_for("typed: hi")
    assert term.editor(screen) == ""  # the keys went to the component, not the editor
    other = "FOOTER" if name == "WIDGET" else "WIDGET"
    assert f"{other} seen:  typed:" in screen  # the other got nothing
    editor_row = _row_of(screen, "─") + 1
    term.send_raw(f"\x1b[<0;3;{editor_row}M\x1b[<0;3;{editor_row}m")  # a click in the editor
    term.type("back")
    screen = term.wait_for(lambda s: term.editor(s).startswith("back"))
    assert "typed: hi" in screen and "typed: hiback" not in screen


def test_a_focus_answer_gives_a_custom_component_the_keys(pi_tui):
    """``ctx.ui.custom``'s component answering ``focus`` to a press takes the keys."""
    term = pi_tui(plugin=WIDGETS.replace('ctx.ui.set_footer(lambda tui, theme: Panel("FOOTER", tui))', "")
                  .replace('ctx.ui.set_widget("panel", lambda tui, theme: Panel("WIDGET", tui), "belowEditor")',
                           'await ctx.ui.custom(lambda tui, theme, keys, done: Panel("CUSTOM", tui))'))
    term.submit("/panels")
    screen = term.wait_for("CUSTOM first")
    row = _row_of(screen, "CUSTOM first")
    term.send_raw(f"\x1b[<0;3;{row}M\x1b[<0;3;{row}m")
    term.wait_for("CUSTOM seen: press@2,0 release@2,0 click@2,0")
    term.type("xy")
    term.wait_for("typed: xy")


def test_a_widget_above_the_editor_gets_the_mouse_in_its_own_cells(pi_tui):
    """In fullscreen a widget above the editor is drawn at the end of the scrolling
    transcript; the mouse on its rows reaches it in its own cells, as pi 1.6 routes it."""
    term = pi_tui(plugin=WIDGETS.replace('ctx.ui.set_footer(lambda tui, theme: Panel("FOOTER", tui))', "")
                  .replace('"belowEditor"', '"aboveEditor"'))
    term.submit("/panels")
    screen = term.wait_for("WIDGET first")
    row = _row_of(screen, "WIDGET seen:")
    assert row < _row_of(screen, "─")  # above the editor's border
    term.send_raw(f"\x1b[<0;7;{row}M\x1b[<0;7;{row}m")  # press and release on column 7 of its 2nd row
    screen = term.wait_for("WIDGET seen: press@6,1 release@6,1 click@6,1")
    term.send_raw(f"\x1b[<0;4;{row - 1}M\x1b[<0;4;{row - 1}m")  # its first row
    term.wait_for("release@3,0 click@3,0")


def test_a_focus_answer_gives_a_widget_above_the_editor_the_keys(pi_tui):
    """As pi-tui's ``setFocus`` for any component answering ``focus``: a widget above the
    editor (drawn in the fullscreen transcript) clicked takes the keys, and a click in the
    editor takes them back."""
    term = pi_tui(plugin=WIDGETS.replace('ctx.ui.set_footer(lambda tui, theme: Panel("FOOTER", tui))', "")
                  .replace('"belowEditor"', '"aboveEditor"'))
    term.submit("/panels")
    screen = term.wait_for("WIDGET first")
    row = _row_of(screen, "WIDGET seen:")
    term.send_raw(f"\x1b[<0;7;{row}M\x1b[<0;7;{row}m")
    term.wait_for("WIDGET seen: press@6,1 release@6,1 click@6,1")
    term.type("hi")
    screen = term.wait_for("typed: hi")
    assert term.editor(screen) == ""  # the keys went to the widget, not the editor
    editor_row = _row_of(screen, "─") + 1
    term.send_raw(f"\x1b[<0;3;{editor_row}M\x1b[<0;3;{editor_row}m")  # a click in the editor
    term.type("back")
    screen = term.wait_for(lambda s: term.editor(s).startswith("back"))
    assert "typed: hi" in screen and "typed: hiback" not in screen
