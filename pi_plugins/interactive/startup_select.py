"""A question asked in the terminal before the chat's screen exists (the project trust
question, and the dialogs of a ``project_trust`` plugin), drawn as pi 1.6 draws its
selector: a border, the title's lines, the answers with an arrow on the chosen one, the
key hints and a border; ↑↓ (or k/j) move, Enter answers, Esc or Ctrl+C answers nothing.
It is erased once answered, as the chat then takes the screen.
"""

from __future__ import annotations

import textwrap

from prompt_toolkit.application import Application
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.layout import Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.styles import Style

HINT = "↑↓ navigate  enter select  escape/ctrl+c cancel"
STYLE = Style.from_dict({"border": "ansiblue", "title": "ansicyan bold", "text": "", "chosen": "ansicyan",
                         "hint": "ansibrightblack"})


def selector_lines(title: str, options: list[str], chosen: int, width: int) -> list[tuple[str, str]]:
    """The selector's lines as (style, text), ``width`` columns wide: pi's layout."""
    def wrapped(text: str, style: str) -> list[tuple[str, str]]:
        rows = textwrap.wrap(text, max(width - 2, 10), break_on_hyphens=False) or [""]
        return [(style, " " + row) for row in rows]

    heading, _, rest = title.partition("\n")
    lines: list[tuple[str, str]] = [("border", "─" * width), ("", "")]
    lines += wrapped(heading, "title")
    for paragraph in rest.split("\n") if rest else []:
        lines += wrapped(paragraph, "text") if paragraph else [("", "")]
    lines.append(("", ""))
    for index, option in enumerate(options):  # a long answer wraps under itself, as pi's
        rows = textwrap.wrap(option, max(width - 3, 10), break_on_hyphens=False) or [""]
        style, arrow = ("chosen", " → ") if index == chosen else ("text", "   ")
        lines += [(style, (arrow if n == 0 else "   ") + row) for n, row in enumerate(rows)]
    lines += [("", ""), ("hint", " " + HINT), ("", ""), ("border", "─" * width)]
    return lines


async def select(title: str, options: list[str]) -> str | None:
    """The answer chosen, or None (Esc, Ctrl+C, or no answers to choose from)."""
    if not options:
        return None
    state = {"chosen": 0}
    keys = KeyBindings()

    def move(step: int) -> None:
        state["chosen"] = max(0, min(len(options) - 1, state["chosen"] + step))

    keys.add("up")(lambda event: move(-1))
    keys.add("k")(lambda event: move(-1))
    keys.add("down")(lambda event: move(1))
    keys.add("j")(lambda event: move(1))
    keys.add("enter")(lambda event: event.app.exit(result=options[state["chosen"]]))
    keys.add("escape", eager=True)(lambda event: event.app.exit(result=None))
    keys.add("c-c")(lambda event: event.app.exit(result=None))

    def text() -> StyleAndTextTuples:
        width = app.output.get_size().columns
        fragments: StyleAndTextTuples = []
        for style, line in selector_lines(title, options, state["chosen"], width):
            fragments += [(f"class:{style}" if style else "", line), ("", "\n")]
        return fragments[:-1]

    app: Application[str | None] = Application(
        layout=Layout(Window(FormattedTextControl(text, focusable=True), dont_extend_height=True)),
        key_bindings=keys, style=STYLE, full_screen=False, erase_when_done=True)
    return await app.run_async()
