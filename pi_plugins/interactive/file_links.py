"""pi 1.6's OSC 8 file links: a tool's title names its file as a ``file://`` link the
terminal opens on a click, where the terminal shows hyperlinks. ``PI_HYPERLINKS``
(``1``, ``0``, ``auto``) or the setting ``terminal.hyperlinks`` (true, false, "auto")
decide; "auto" trusts the terminals pi 1.6 knows to draw them (kitty, Ghostty, WezTerm,
iTerm2, VS Code, Windows Terminal, Alacritty, Rex …), not screen, and inside tmux only
where tmux says its client passes them on (``hyperlinks`` among the attached client's
``client_termfeatures``), as pi 1.6 asks it.

The painted lines keep the link for the scrollback; the live area hands it to the
terminal as a zero-width escape (prompt_toolkit would show OSC 8 as text).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

_OSC8 = re.compile(r"\x1b\]8;[^\x07\x1b]*(?:\x07|\x1b\\)")
_LINKING_PROGRAMS = {"iterm.app", "wezterm", "vscode", "ghostty", "rex", "warpterminal", "hyper"}
_LINKING_TERMS = ("xterm-kitty", "xterm-ghostty", "alacritty", "wezterm")

#: The folder relative paths start from, while links are on (None: off). Set by the chat.
links_from: str | None = None


def hyperlinks_wanted(settings: Any, env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    forced = env.get("PI_HYPERLINKS", "auto").strip().lower()
    if forced in ("1", "true"):
        return True
    if forced in ("0", "false"):
        return False
    setting = settings.get("terminal.hyperlinks", "auto") if settings is not None else "auto"
    if isinstance(setting, bool):
        return setting
    term = env.get("TERM", "").lower()
    if env.get("TMUX") or term.startswith("tmux"):
        return tmux_forwards_hyperlinks(env)
    if env.get("STY") or term.startswith("screen"):  # screen drops them: text only
        return False
    program = env.get("TERM_PROGRAM", "").lower()
    return (program in _LINKING_PROGRAMS or term.startswith(_LINKING_TERMS) or "KITTY_WINDOW_ID" in env
            or "WT_SESSION" in env or "ALACRITTY_WINDOW_ID" in env)


def tmux_forwards_hyperlinks(env: Mapping[str, str]) -> bool:
    """Whether tmux re-emits OSC 8 to its client's terminal (it strips them otherwise):
    ``tmux display-message -p '#{client_termfeatures}'`` lists ``hyperlinks``. No answer
    within 250 ms, or any error, is a no (pi 1.6's ``probeTmuxHyperlinks``)."""
    try:
        answer = subprocess.run(["tmux", "display-message", "-p", "#{client_termfeatures}"], env=dict(env),
                                capture_output=True, text=True, timeout=0.25, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return False
    return answer.returncode == 0 and "hyperlinks" in [f.strip() for f in answer.stdout.split(",")]


def file_url(path: str, cwd: str) -> str:
    absolute = Path(os.path.expanduser(path))
    if not absolute.is_absolute():
        absolute = Path(cwd) / absolute
    return absolute.resolve(strict=False).as_uri()


def zero_width_links(line: str) -> str:
    """OSC 8 sequences wrapped as prompt_toolkit's zero-width escapes (``\\001…\\002``)."""
    return _OSC8.sub(lambda match: f"\001{match.group(0)}\002", line) if "\x1b]8;" in line else line
