"""A UI for tests: answers dialogs from queues and records everything it is asked and shown.

Where a queue runs dry a dialog gets the answer a session without a UI gets (confirm: no;
select, input and editor: nothing), so a test that only looks at notifications needs no
answers; ``dialogs`` shows what was asked either way.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple


class Dialog(NamedTuple):
    kind: str  #: confirm, select, input or editor
    title: str
    #: confirm: its message; select: its options; input: its placeholder; editor: its prefill.
    detail: object


class RecordingUI:
    """``RecordingUI(confirms=[True], selects=["Allow once"], inputs=["why"])``.

    A ``selects`` answer is an option, the start of one, or ``None`` (dismissed).
    """

    has_ui = True

    def __init__(self, *, confirms: Iterable[bool] = (), selects: Iterable[str | None] = (),
                 inputs: Iterable[str | None] = (), editors: Iterable[str | None] = (),
                 has_ui: bool = True) -> None:
        self.has_ui = has_ui
        self.confirms, self.selects = list(confirms), list(selects)
        self.inputs, self.editors = list(inputs), list(editors)
        self.dialogs: list[Dialog] = []
        self.notes: list[tuple[str, str]] = []
        self.status: dict[str, str] = {}
        self.widgets: dict[str, list[str]] = {}
        self.title: str | None = None
        self.editor_text = ""

    # What plugins are shown
    def notify(self, message: str, level: str = "info") -> None:
        self.notes.append((level, message))

    def messages(self, level: str | None = None) -> list[str]:
        """The notifications' texts, all or of one level."""
        return [text for lvl, text in self.notes if level is None or lvl == level]

    def warnings(self) -> list[str]:
        return self.messages("warning")

    def set_status(self, key: str, text: str | None = None) -> None:
        if text is None:
            self.status.pop(key, None)
        else:
            self.status[key] = text

    def set_widget(self, key: str, lines: list[str] | None = None, placement: str | None = None) -> None:
        if lines is None:
            self.widgets.pop(key, None)
        else:
            self.widgets[key] = list(lines)

    def set_title(self, title: str) -> None:
        self.title = title

    def set_editor_text(self, text: str) -> None:
        self.editor_text = text

    def get_editor_text(self) -> str:
        return self.editor_text

    # What plugins ask
    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None) -> bool:
        self.dialogs.append(Dialog("confirm", title, message))
        return bool(self.confirms.pop(0)) if self.confirms else False

    async def select(self, title: str, options: list[str], *, timeout: float | None = None) -> str | None:
        self.dialogs.append(Dialog("select", title, list(options)))
        answer = self.selects.pop(0) if self.selects else None
        if answer is None:
            return None
        if answer in options:
            return answer
        matches = [o for o in options if o.startswith(answer)]
        if not matches:
            raise AssertionError(f"RecordingUI: no option of {title!r} starts with {answer!r}: {options}")
        return matches[0]

    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None) -> str | None:
        self.dialogs.append(Dialog("input", title, placeholder))
        return self.inputs.pop(0) if self.inputs else None

    async def editor(self, title: str, prefill: str = "", *, timeout: float | None = None) -> str | None:
        self.dialogs.append(Dialog("editor", title, prefill))
        return self.editors.pop(0) if self.editors else None
