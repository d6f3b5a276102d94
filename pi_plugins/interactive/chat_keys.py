"""Which key does what in the chat, by pi's keybinding ids: keybindings.json
(:mod:`.keybindings`) may move any of them, and plugins' shortcuts join them. The keys
only choose the action; the actions are the editor's (:mod:`.editor_actions`), the
commands' (:mod:`.commands`) and the chat's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.keys import Keys

from pi_plugins.interactive import commands as builtin
from pi_plugins.interactive.external_editor import open_external_editor
from pi_plugins.interactive.keys import UnbindableKey, key_sequences
from pi_plugins.interactive.selection_copy import copy_message
from pi_plugins.interactive.submission import call_handler

if TYPE_CHECKING:
    from pi_plugins.interactive.app import InteractiveApp


class ChatKeys:
    def __init__(self, tui: InteractiveApp) -> None:
        self.tui = tui
        self.bindings: KeyBindings | None = None
        #: Keys keybindings.json names that cannot be bound, for the header.
        self.problems: list[str] = []
        self._set_select_keys()

    def bind(self) -> None:
        """The chat's keys, as keybindings.json and the plugins' shortcuts say now."""
        self.bindings = self._key_bindings()

    def reload(self) -> None:
        """keybindings.json again (``/reload``), and the keys rebound."""
        tui = self.tui
        tui.keybindings.reload()
        self.problems = []
        self._set_select_keys()
        self.bind()
        for problem in tui.keybindings.problems + self.problems:
            tui.add_text(f"Warning: keybindings: {problem}", "warning")

    def _key_bindings(self) -> KeyBindings:
        """The chat's keys, by pi's keybinding ids (keybindings.json may move any of them)."""
        tui, actions = self.tui, self.tui.actions
        kb = KeyBindings()
        editing = Condition(tui.editing)
        bound: set[tuple[str, ...]] = set()

        def bind(action: str, handler) -> None:
            for spec in tui.keybindings.keys(action):
                try:
                    sequences = key_sequences(spec)
                except UnbindableKey as exc:
                    self.problems.append(f"{action}: {exc}")
                    continue
                for keys in sequences:
                    bound.add(keys)
                    kb.add(*keys, filter=editing)(lambda event, h=handler: h(event))

        bind("tui.input.submit", lambda event: actions.enter())
        bind("app.message.followUp", lambda event: actions.follow_up())
        bind("tui.input.newLine", lambda event: tui.editor.buffer.insert_text("\n"))
        kb.add("c-j", filter=editing)(lambda event: tui.editor.buffer.insert_text("\n"))
        bind("app.interrupt", lambda event: actions.escape())
        bind("app.clear", lambda event: actions.ctrl_c())
        kb.add(Keys.SIGINT)(lambda event: actions.ctrl_c())

        def exit_or_delete(event):
            if not tui.editor.text:
                tui.exit()
            else:
                tui.editor.buffer.delete()

        bind("app.exit", exit_or_delete)
        bind("app.tools.expand", lambda event: tui.set_view(expand_tools=not tui.view.expand_tools))
        bind("app.thinking.toggle", lambda event: _toggle_thinking(tui))
        bind("app.model.select", lambda event: tui.spawn(builtin.model(tui, "")))
        bind("app.model.cycleForward", lambda event: tui.spawn(_cycle_model(tui, 1)))
        bind("app.model.cycleBackward", lambda event: tui.spawn(_cycle_model(tui, -1)))
        bind("app.thinking.cycle", lambda event: tui.spawn(_cycle_thinking(tui)))

        def dequeue(event):
            count = actions.restore_queue()
            tui.add_text(f"Restored {count} queued message{'s' if count != 1 else ''} to the editor"
                         if count else "No queued messages to restore", "dim")

        bind("app.message.dequeue", dequeue)
        bind("app.clipboard.pasteImage", lambda event: tui.spawn(actions.paste_image()))
        bind("app.message.copy", lambda event: tui.spawn(copy_message(tui)))
        bind("app.editor.external", lambda event: open_external_editor(tui))
        bind("app.suspend", lambda event: _suspend(tui))
        bind("app.session.new", lambda event: tui.spawn(builtin.new(tui, "")))
        bind("app.session.tree", lambda event: tui.spawn(builtin.tree(tui, "")))
        bind("app.session.fork", lambda event: tui.spawn(builtin.fork(tui, "")))
        bind("app.session.resume", lambda event: tui.spawn(builtin.resume(tui, "")))
        self._bind_editor_actions(kb, editing, bound)

        for shortcut in tui.shortcuts:
            try:
                sequences = key_sequences(shortcut.key)  # every encoding (super+…, ctrl+shift+…)
            except UnbindableKey as exc:
                tui.add_text(f"Shortcut not bound: {exc}", "warning")
                continue
            for keys in sequences:
                kb.add(*keys, filter=editing)(
                    lambda event, s=shortcut: tui.spawn(call_handler(s.handler, tui.harness.ctx)))
        return kb

    def _bind_editor_actions(self, kb: KeyBindings, editing, bound: set) -> None:
        """The editor's own keys are prompt_toolkit's; an action keybindings.json moves is
        bound to its new keys here, and its old keys stop doing it."""
        from prompt_toolkit.key_binding.bindings.named_commands import get_by_name

        from pi_plugins.interactive.keybindings import DEFAULTS

        tui = self.tui
        buffer = lambda: tui.editor.buffer
        actions: dict[str, Callable[[Any], object]] = {
            "tui.editor.cursorUp": lambda event: buffer().auto_up(count=event.arg),
            "tui.editor.cursorDown": lambda event: buffer().auto_down(count=event.arg),
            # pi 1.6: history wherever the cursor is (bound after the app's keys, so they win)
            "tui.editor.historyPrevious": lambda event: buffer().history_backward(count=event.arg),
            "tui.editor.historyNext": lambda event: buffer().history_forward(count=event.arg),
            "tui.editor.pageUp": lambda event: buffer().cursor_up(count=max(tui.rows // 2, 1)),
            "tui.editor.pageDown": lambda event: buffer().cursor_down(count=max(tui.rows // 2, 1)),
        }
        named = {
            "tui.editor.cursorLeft": "backward-char", "tui.editor.cursorRight": "forward-char",
            "tui.editor.cursorWordLeft": "backward-word", "tui.editor.cursorWordRight": "forward-word",
            "tui.editor.cursorLineStart": "beginning-of-line", "tui.editor.cursorLineEnd": "end-of-line",
            "tui.editor.deleteCharBackward": "backward-delete-char", "tui.editor.deleteCharForward": "delete-char",
            "tui.editor.deleteWordBackward": "unix-word-rubout", "tui.editor.deleteWordForward": "kill-word",
            "tui.editor.deleteToLineStart": "unix-line-discard", "tui.editor.deleteToLineEnd": "kill-line",
            "tui.editor.yank": "yank", "tui.editor.yankPop": "yank-pop", "tui.editor.undo": "undo",
        }
        for action, command in named.items():
            actions[action] = get_by_name(command).handler
        freed: set[tuple[str, ...]] = set()
        for action, handler in actions.items():
            if not tui.keybindings.customised(action):
                continue
            for spec in tui.keybindings.keys(action):
                try:
                    for keys in key_sequences(spec):
                        bound.add(keys)
                        kb.add(*keys, filter=editing)(handler)
                except UnbindableKey as exc:
                    self.problems.append(f"{action}: {exc}")
            for spec in DEFAULTS[action]:
                try:
                    freed.update(key_sequences(spec))
                except UnbindableKey:
                    pass
        for keys in freed - bound:
            kb.add(*keys, filter=editing)(lambda event: None)

    def _set_select_keys(self) -> None:
        """The lists' keys (``tui.select.*``) as keybindings.json sets them."""
        from pi_plugins.interactive import dialogs

        for action in dialogs.SELECT_KEYS:
            sequences = []
            for spec in self.tui.keybindings.keys(action):
                try:
                    sequences += key_sequences(spec)
                except UnbindableKey as exc:
                    self.problems.append(f"{action}: {exc}")
            dialogs.SELECT_KEYS[action] = sequences


# ---------------------------------------------------------------- what some keys do


def _toggle_thinking(tui: InteractiveApp) -> None:
    """Ctrl+T: thinking shown or hidden, kept as ``hideThinkingBlock`` as pi does."""
    hidden = not tui.view.hide_thinking
    tui.settings.remember("hideThinkingBlock", hidden)
    tui.set_view(hide_thinking=hidden)
    tui.add_text(f"Thinking blocks: {'hidden' if hidden else 'visible'}", "dim")


async def _cycle_model(tui: InteractiveApp, step: int = 1) -> None:
    result = await tui.harness.cycle_model(step)
    if result is None:
        tui.add_text("Only one model is available", "dim")
        return
    model, level, _ = result
    suffix = f" • {level}" if model.reasoning else ""
    tui.add_text(f"Model: {model.provider}/{model.id}{suffix}", "dim")


async def _cycle_thinking(tui: InteractiveApp) -> None:
    level = await tui.harness.cycle_thinking_level()
    if level is None:
        tui.add_text("This model does not support thinking levels", "dim")
    else:
        tui.add_text(f"Thinking level: {level}", "dim")


def _suspend(tui) -> None:
    """Ctrl+Z: the process group stops (prompt_toolkit's ``suspend_to_background``), with
    the keyboard protocols off meanwhile, so the shell gets legacy keys (pi 1.6 stops its
    terminal the same way)."""
    import os
    import signal

    from prompt_toolkit.application import run_in_terminal

    def stop_here() -> None:
        with tui.keyboard.suspended():
            os.kill(0, signal.SIGTSTP)

    run_in_terminal(stop_here)
