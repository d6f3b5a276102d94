"""``<agent dir>/keybindings.json``: the keys of every action, by pi's keybinding ids.

pi's file works here unchanged: each id (``app.model.cycleForward``) maps to one key or a
list of keys, a listed id replaces its defaults, and the ids pi used before it namespaced
them (``cursorUp``, ``expandTools``) are read as their new names. A file that cannot be
read is reported and the defaults stay.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path

#: pi 0.73.1's defaults (docs/keybindings.md), id -> keys.
DEFAULTS: dict[str, tuple[str, ...]] = {
    "tui.editor.cursorUp": ("up",),
    "tui.editor.cursorDown": ("down",),
    "tui.editor.historyPrevious": (),  # pi 1.6: unbound unless keybindings.json binds them
    "tui.editor.historyNext": (),
    "tui.editor.cursorLeft": ("left", "ctrl+b"),
    "tui.editor.cursorRight": ("right", "ctrl+f"),
    "tui.editor.cursorWordLeft": ("alt+left", "ctrl+left", "alt+b"),
    "tui.editor.cursorWordRight": ("alt+right", "ctrl+right", "alt+f"),
    "tui.editor.cursorLineStart": ("home", "ctrl+a"),
    "tui.editor.cursorLineEnd": ("end", "ctrl+e"),
    "tui.editor.jumpForward": ("ctrl+]",),
    "tui.editor.jumpBackward": ("ctrl+alt+]",),
    "tui.editor.pageUp": ("pageUp",),
    "tui.editor.pageDown": ("pageDown",),
    "tui.editor.deleteCharBackward": ("backspace",),
    "tui.editor.deleteCharForward": ("delete", "ctrl+d"),
    "tui.editor.deleteWordBackward": ("ctrl+w", "alt+backspace"),
    "tui.editor.deleteWordForward": ("alt+d", "alt+delete"),
    "tui.editor.deleteToLineStart": ("ctrl+u",),
    "tui.editor.deleteToLineEnd": ("ctrl+k",),
    "tui.input.newLine": ("shift+enter",),
    "tui.input.submit": ("enter",),
    "tui.input.tab": ("tab",),
    "tui.editor.yank": ("ctrl+y",),
    "tui.editor.yankPop": ("alt+y",),
    "tui.editor.undo": ("ctrl+-",),
    "tui.input.copy": ("ctrl+c",),
    "tui.select.up": ("up",),
    "tui.select.down": ("down",),
    "tui.select.pageUp": ("pageUp",),
    "tui.select.pageDown": ("pageDown",),
    "tui.select.confirm": ("enter",),
    "tui.select.cancel": ("escape", "ctrl+c"),
    "app.interrupt": ("escape",),
    "app.clear": ("ctrl+c",),
    "app.exit": ("ctrl+d",),
    "app.suspend": ("ctrl+z",),
    "app.editor.external": ("ctrl+g",),
    "app.clipboard.pasteImage": ("ctrl+v",),
    "app.session.new": (),
    "app.session.tree": (),
    "app.session.fork": (),
    "app.session.resume": (),
    "app.session.togglePath": ("ctrl+p",),
    "app.session.toggleSort": ("ctrl+s",),
    "app.session.toggleNamedFilter": ("ctrl+n",),
    "app.session.rename": ("ctrl+r",),
    "app.session.delete": ("ctrl+d",),
    "app.session.deleteNoninvasive": ("ctrl+backspace",),
    "app.model.select": ("ctrl+l",),
    "app.model.cycleForward": ("ctrl+p",),
    "app.model.cycleBackward": ("shift+ctrl+p",),
    "app.thinking.cycle": ("shift+tab",),
    "app.thinking.toggle": ("ctrl+t",),
    "app.thinking.save": ("ctrl+s",),  # pi 1.6: in /thinking
    "app.tools.expand": ("ctrl+o",),
    "app.message.followUp": ("alt+enter",),
    "app.message.dequeue": ("alt+up",),
    "app.tree.foldOrUp": ("ctrl+left", "alt+left"),
    "app.tree.unfoldOrDown": ("ctrl+right", "alt+right"),
    "app.tree.editLabel": ("shift+l",),
    "app.tree.toggleLabelTimestamp": ("shift+t",),
    "app.tree.filter.default": ("ctrl+d",),
    "app.tree.filter.noTools": ("ctrl+t",),
    "app.tree.filter.userOnly": ("ctrl+u",),
    "app.tree.filter.labeledOnly": ("ctrl+l",),
    "app.tree.filter.all": ("ctrl+a",),
    "app.tree.filter.cycleForward": ("ctrl+o",),
    "app.tree.filter.cycleBackward": ("shift+ctrl+o",),
    "app.models.save": ("ctrl+s",),
    "app.models.enableAll": ("ctrl+a",),
    "app.models.clearAll": ("ctrl+x",),
    "app.models.toggleProvider": ("ctrl+p",),
    "app.models.reorderUp": ("alt+up",),
    "app.models.reorderDown": ("alt+down",),
    # pi 1.6: the fullscreen transcript's keys, and Ctrl+X copying
    "tui.altScreen.pageUp": ("pageUp",),
    "tui.altScreen.pageDown": ("pageDown",),
    "tui.altScreen.halfPageUp": (),
    "tui.altScreen.halfPageDown": (),
    "tui.altScreen.lineUp": (),
    "tui.altScreen.lineDown": (),
    "tui.altScreen.previousPrompt": ("ctrl+shift+up",),
    "tui.altScreen.nextPrompt": ("ctrl+shift+down",),
    "tui.altScreen.search": ("ctrl+shift+f",),
    "tui.altScreen.searchNext": ("enter", "ctrl+g"),
    "tui.altScreen.searchPrevious": ("shift+enter", "ctrl+shift+g"),
    "tui.altScreen.searchClose": ("escape",),
    "tui.altScreen.top": ("ctrl+home",),
    "tui.altScreen.bottom": ("ctrl+end",),
    "app.message.copy": ("ctrl+x",),
}

#: pi 1.6's defaults where Windows and WSL differ (docs/keybindings.md; Windows Terminal
#: takes Alt+Enter for fullscreen, Ctrl+Shift+F and the like for itself).
WINDOWS_DEFAULTS: dict[str, tuple[str, ...]] = {
    "app.model.cycleBackward": ("alt+p",),
    "app.message.followUp": ("ctrl+q",),
    "app.message.dequeue": ("alt+q",),
    "app.clipboard.pasteImage": ("alt+v", "ctrl+v"),
    "tui.editor.undo": ("ctrl+z",) if sys.platform == "win32" else ("alt+z",),
    "tui.altScreen.previousPrompt": ("ctrl+up",),
    "tui.altScreen.nextPrompt": ("ctrl+down",),
    "tui.altScreen.search": ("ctrl+f",),
    **({"app.suspend": ()} if sys.platform == "win32" else {}),  # no job control there
}


def windows_keybindings(env: Mapping[str, str] | None = None, platform: str = sys.platform) -> bool:
    """pi 1.6's ``useWindowsKeybindings``: on Windows, and on Linux under WSL
    (``WSL_DISTRO_NAME`` or ``WSL_INTEROP``), where the terminal is most likely Windows Terminal."""
    env = os.environ if env is None else env
    return platform == "win32" or (platform == "linux" and bool(env.get("WSL_DISTRO_NAME") or env.get("WSL_INTEROP")))


def platform_defaults(env: Mapping[str, str] | None = None) -> dict[str, tuple[str, ...]]:
    """The defaults that replace :data:`DEFAULTS` here (Windows and WSL's; none elsewhere)."""
    return dict(WINDOWS_DEFAULTS) if windows_keybindings(env) else {}


#: The ids of pi's configs from before the namespaced ones.
LEGACY_IDS = {
    "cursorUp": "tui.editor.cursorUp", "cursorDown": "tui.editor.cursorDown",
    "cursorLeft": "tui.editor.cursorLeft", "cursorRight": "tui.editor.cursorRight",
    "cursorWordLeft": "tui.editor.cursorWordLeft", "cursorWordRight": "tui.editor.cursorWordRight",
    "cursorLineStart": "tui.editor.cursorLineStart", "cursorLineEnd": "tui.editor.cursorLineEnd",
    "jumpForward": "tui.editor.jumpForward", "jumpBackward": "tui.editor.jumpBackward",
    "pageUp": "tui.editor.pageUp", "pageDown": "tui.editor.pageDown",
    "deleteCharBackward": "tui.editor.deleteCharBackward", "deleteCharForward": "tui.editor.deleteCharForward",
    "deleteWordBackward": "tui.editor.deleteWordBackward", "deleteWordForward": "tui.editor.deleteWordForward",
    "deleteToLineStart": "tui.editor.deleteToLineStart", "deleteToLineEnd": "tui.editor.deleteToLineEnd",
    "yank": "tui.editor.yank", "yankPop": "tui.editor.yankPop", "undo": "tui.editor.undo",
    "newLine": "tui.input.newLine", "submit": "tui.input.submit", "tab": "tui.input.tab",
    "copy": "tui.input.copy", "selectUp": "tui.select.up", "selectDown": "tui.select.down",
    "selectPageUp": "tui.select.pageUp", "selectPageDown": "tui.select.pageDown",
    "selectConfirm": "tui.select.confirm", "selectCancel": "tui.select.cancel",
    "interrupt": "app.interrupt", "clear": "app.clear", "exit": "app.exit", "suspend": "app.suspend",
    "cycleThinkingLevel": "app.thinking.cycle", "cycleModelForward": "app.model.cycleForward",
    "cycleModelBackward": "app.model.cycleBackward", "selectModel": "app.model.select",
    "expandTools": "app.tools.expand", "toggleThinking": "app.thinking.toggle",
    "toggleSessionNamedFilter": "app.session.toggleNamedFilter", "externalEditor": "app.editor.external",
    "followUp": "app.message.followUp", "dequeue": "app.message.dequeue", "pasteImage": "app.clipboard.pasteImage",
    "newSession": "app.session.new", "tree": "app.session.tree", "fork": "app.session.fork",
    "resume": "app.session.resume", "treeFoldOrUp": "app.tree.foldOrUp", "treeUnfoldOrDown": "app.tree.unfoldOrDown",
    "treeEditLabel": "app.tree.editLabel", "treeToggleLabelTimestamp": "app.tree.toggleLabelTimestamp",
    "toggleSessionPath": "app.session.togglePath", "toggleSessionSort": "app.session.toggleSort",
    "renameSession": "app.session.rename", "deleteSession": "app.session.delete",
    "deleteSessionNoninvasive": "app.session.deleteNoninvasive",
}


class Keybindings:
    """The keys of each action: the user's where keybindings.json names the action,
    else pi's defaults. ``problems`` says what in the file was not understood."""

    def __init__(self, user: dict[str, tuple[str, ...]] | None = None, problems: list[str] | None = None,
                 path: Path | None = None) -> None:
        self.user = dict(user or {})
        self.problems = list(problems or [])
        self.path = path

    @classmethod
    def load(cls, agent_dir: str | Path, env: Mapping[str, str] | None = None) -> Keybindings:
        """The file's keys over the platform's defaults (Windows and WSL differ, as in pi 1.6),
        bound as if the file had named those."""
        path = Path(agent_dir) / "keybindings.json"
        user, problems = read_keybindings(path)
        found = cls({**platform_defaults(env), **user}, problems, path)
        found.env = env
        return found

    env: Mapping[str, str] | None = None

    def reload(self) -> None:
        if self.path is not None:
            user, self.problems = read_keybindings(self.path)
            self.user = {**platform_defaults(self.env), **user}

    def keys(self, action: str) -> tuple[str, ...]:
        if action in self.user:
            return self.user[action]
        return DEFAULTS.get(action, ())

    def customised(self, action: str) -> bool:
        return action in self.user and self.user[action] != DEFAULTS.get(action, ())

    def hint(self, action: str, first: bool = False) -> str:
        """The keys of an action as a person reads them (``ctrl+p``), for hints and /hotkeys;
        ``first``: only the first of them."""
        keys = self.keys(action)
        return (keys[0] if first else "/".join(keys)) if keys else "(unbound)"


def read_keybindings(path: Path) -> tuple[dict[str, tuple[str, ...]], list[str]]:
    """keybindings.json's bindings by namespaced id, and what was wrong with it."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, []
    except (OSError, ValueError) as exc:
        return {}, [f"{path}: {exc}; the default keys stay"]
    if not isinstance(raw, dict):
        return {}, [f"{path}: expected a JSON object; the default keys stay"]
    bindings: dict[str, tuple[str, ...]] = {}
    problems: list[str] = []
    for key, value in raw.items():
        action: str = LEGACY_IDS[key] if key in LEGACY_IDS else key
        if action != key and action in raw:
            continue  # the namespaced id given too wins, as in pi
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            problems.append(f"{path}: {key}: expected a key or a list of keys")
            continue
        bindings[action] = tuple(value)
    return bindings, problems
