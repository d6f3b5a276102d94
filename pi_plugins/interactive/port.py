"""What the slash commands may use of the chat: a small port.

The built-in commands (:mod:`.commands`) and the dialogs they open (:mod:`.settings_dialog`,
:mod:`.scoped_models`, :mod:`.session_picker`, :mod:`.share`) see the chat only through
:class:`ChatPort`, never its private parts, so the chat can change inside without them
changing; :class:`~pi_plugins.interactive.app.InteractiveApp` is the one implementation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from prompt_toolkit.widgets import TextArea

    from pi_plugins.interactive.blocks import Block, View
    from pi_plugins.interactive.dialogs import Dialog
    from pi_plugins.interactive.keybindings import Keybindings
    from pi_plugins.interactive.paint import Painter

_B = TypeVar("_B", bound="Block")  # add() gives back the block it was given


class ChatPort(Protocol):
    #: The harness: model, session, prompts, compaction, checkpoints …
    harness: Any
    #: The settings (``get``, ``remember``, ``set`` for this run).
    settings: Any
    #: ``ctx.ui`` as the chat answers it (``confirm``, ``select``, ``input`` …).
    ui: Any
    #: What paints dialogs and blocks, in the current theme.
    painter: Painter
    #: keybindings.json's keys, by pi's ids.
    keybindings: Keybindings
    #: The plugins' shortcuts (``/hotkeys`` lists them).
    shortcuts: list
    #: Our editor (its ``text``).
    editor: TextArea
    #: How the chat shows thinking and tool output.
    view: View
    #: The prompt run going on, if any.
    run_task: asyncio.Task | None
    #: Esc stopped what :meth:`busy_with` ran.
    busy_aborted: bool
    #: The skills' and templates' problems, as the header lists them (again after ``/reload``).
    resource_problems: list

    @property
    def rows(self) -> int:
        """The terminal's height."""
        ...

    @property
    def width(self) -> int:
        """The terminal's width."""
        ...

    def rendered_lines(self) -> list[str]:
        """The lines drawn under the scrollback now: live blocks, editor, footer."""
        ...

    def add(self, block: _B) -> _B:
        """Add a block to the chat."""
        ...

    def add_text(self, text: str, style: str = "dim") -> None:
        """Add a line of text to the chat (``style``: dim, warning, error, none …)."""
        ...

    def invalidate(self) -> None:
        """Redraw soon."""
        ...

    async def show_dialog(self, dialog: Dialog) -> Any:
        """Show a dialog in the editor's place; its answer (None: cancelled)."""
        ...

    async def busy_with(self, what: str, label: str, coroutine: Coroutine) -> Any:
        """Run a compaction or branch summary that Esc stops, ``label`` in the working line."""
        ...

    def set_working(self, label: str | None) -> None:
        """What the working line says (None: no working line)."""
        ...

    def set_editor_text(self, text: str) -> None:
        ...

    def start_over(self) -> None:
        """The conversation changed under the chat (tree move, new or other session)."""
        ...

    def set_view(self, **changes: Any) -> None:  # View fields: a bool, or the thinking label
        ...

    def theme_names(self) -> list[str]:
        ...

    def set_theme(self, name: str) -> None:
        ...

    async def load_plugin_parts(self) -> None:
        """The plugins' commands, renderers and shortcuts read again (``/reload``)."""
        ...

    def reload_keybindings(self) -> None:
        ...

    def write_to_terminal(self, sequence: str) -> None:
        """A control sequence (OSC 52) straight to the terminal."""
        ...

    def exit(self, code: int = 0) -> None:
        """End the chat."""
        ...
