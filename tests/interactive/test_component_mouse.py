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
