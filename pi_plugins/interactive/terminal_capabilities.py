"""What the terminal can draw, as pi 1.6 decides it: the inline-image protocol (kitty's
graphics or iTerm2's) and whether it takes 24-bit colour. The terminal is known from its
environment (pi-tui's list: Rex, kitty, Ghostty, WezTerm, Warp, iTerm2 …); then
``PI_IMAGE_PROTOCOL`` (``kitty``, ``iterm2``, ``none``, ``auto``) and ``PI_TRUE_COLOR``
(``1``, ``0``, ``auto``) override it, and the settings ``terminal.images`` (``"kitty"``,
``"iterm2"``, ``false``, ``"auto"``) and ``terminal.trueColor`` (``true``, ``false``,
``"auto"``) override both.

Different on purpose: inside tmux pi 1.6 draws no images; here the outer terminal's
protocol is still used, wrapped for tmux's passthrough (:mod:`.terminal_images`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pi_plugins.interactive.paint import ColorSystem

#: The chat's settings, once it has started (None: the environment alone decides).
settings: Any = None

_KITTY_PROGRAMS = ("herdr", "rex", "kitty", "ghostty", "wezterm", "warpterminal")


def detected(env: Mapping[str, str]) -> tuple[str | None, bool]:
    """(image protocol or None, truecolor) from the terminal's environment alone."""
    program, term = env.get("TERM_PROGRAM", "").lower(), env.get("TERM", "").lower()
    hinted = env.get("COLORTERM", "").lower() in ("truecolor", "24bit") or term.endswith("-direct")
    if term.startswith("screen") and not env.get("TMUX"):
        return None, hinted
    if program == "herdr":
        return "kitty", hinted
    if program == "orca" and env.get("ORCA_IMAGE_PROTOCOL") == "kitty":
        return "kitty", True
    if (program in _KITTY_PROGRAMS or env.get("KITTY_WINDOW_ID") or "ghostty" in term
            or env.get("GHOSTTY_RESOURCES_DIR") or env.get("WEZTERM_PANE") or env.get("WARP_SESSION_ID")
            or env.get("WARP_TERMINAL_SESSION_UUID")):
        return "kitty", not (env.get("TMUX") or term.startswith("tmux")) or hinted
    if env.get("ITERM_SESSION_ID") or program == "iterm.app":
        return "iterm2", not (env.get("TMUX") or term.startswith("tmux")) or hinted
    if env.get("TMUX") or term.startswith("tmux"):
        return None, hinted
    if (env.get("WT_SESSION") or program in ("alacritty", "vscode", "zed") or term.startswith("alacritty")
            or env.get("ALACRITTY_WINDOW_ID") or env.get("TERMINAL_EMULATOR", "").lower() == "jetbrains-jediterm"
            or sys.platform == "win32"):
        return None, True
    return None, hinted


def image_protocol(env: Mapping[str, str] | None = None, chosen: Any = None) -> str | None:
    """``"kitty"``, ``"iterm2"`` or None (no images), the setting over the variable over detection."""
    env = os.environ if env is None else env
    chosen = _setting("terminal.images") if chosen is None else chosen
    if chosen in ("kitty", "iterm2"):
        return str(chosen)
    if chosen is False:
        return None
    forced = env.get("PI_IMAGE_PROTOCOL", "").lower()
    if forced in ("kitty", "iterm2"):
        return forced
    if forced in ("none", "0"):
        return None
    return detected(env)[0]


def true_color(env: Mapping[str, str] | None = None, chosen: Any = None) -> bool:
    env = os.environ if env is None else env
    chosen = _setting("terminal.trueColor") if chosen is None else chosen
    if isinstance(chosen, bool):
        return chosen
    forced = env.get("PI_TRUE_COLOR")
    if forced in ("1", "0"):
        return forced == "1"
    return detected(env)[1]


def color_system(settings_: Any, env: Mapping[str, str] | None = None) -> ColorSystem | None:
    """What the chat paints in: 24-bit colour or pi's 256 colours; None under ``NO_COLOR``."""
    env = os.environ if env is None else env
    if env.get("NO_COLOR"):
        return None
    chosen = settings_.get("terminal.trueColor") if settings_ is not None else None
    return "truecolor" if true_color(env, chosen) else "256"


def _setting(key: str) -> Any:
    return settings.get(key) if settings is not None else None
