"""A small Q&A form: ``/qa`` asks three questions in an overlay and hands the answers to
the plugin, which sends them to the model. Run it with ``pi -e docs/examples/qa_form.py``.

The overlay is a component (docs/interactive.md#components): ``render(width)`` returns its
lines, ``handle_input(data)`` takes the keys, ``done(value)`` closes it and becomes what
``await ctx.ui.custom(...)`` returns.
"""

from pi_core import Command, hookimpl

QUESTIONS = ["What is your name?", "What is your quest?", "What is your favourite colour?"]


class QAForm:
    def __init__(self, tui, theme, keybindings, done):
        self.tui, self.theme, self.keys, self.done = tui, theme, keybindings, done
        self.answers: list[str] = []
        self.typed = ""

    def render(self, width: int) -> list[str]:
        number = len(self.answers)
        rule = self.theme.fg("border", "─" * width)
        return [
            rule,
            " " + self.theme.bold(f"Question {number + 1} of {len(QUESTIONS)}"),
            " " + QUESTIONS[number],
            " > " + self.typed + self.theme.inverse(" "),
            " " + self.theme.fg("dim", "enter next · esc cancel"),
            rule,
        ]

    def handle_input(self, data: str) -> None:
        if self.keys.matches(data, "tui.select.cancel"):
            self.done(None)
        elif self.keys.matches(data, "tui.input.submit"):
            self.answers.append(self.typed.strip())
            self.typed = ""
            if len(self.answers) == len(QUESTIONS):
                self.done(self.answers)
        elif data in ("\x7f", "\x08"):
            self.typed = self.typed[:-1]
        elif data.isprintable():
            self.typed += data
        self.tui.request_render()


async def ask(args, ctx):
    answers = await ctx.ui.custom(lambda tui, theme, keys, done: QAForm(tui, theme, keys, done), overlay=True)
    if answers is None:
        ctx.ui.notify("Q&A cancelled", "warning")
        return
    ctx.ui.notify("Answers: " + " | ".join(answers))
    text = "\n".join(f"{q} {a}" for q, a in zip(QUESTIONS, answers))
    ctx.send_user_message(f"My answers:\n{text}", trigger_turn=True)


@hookimpl
def register_commands():
    return [Command("qa", "Answer three questions", ask)]
