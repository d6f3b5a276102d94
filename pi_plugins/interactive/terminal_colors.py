"""Whether the terminal is light or dark, found as pi 1.6 finds it: the terminal is asked
for its default foreground and background (OSC 10 and 11, then a device-attributes
request every terminal answers, so a terminal that keeps quiet about its colours costs no
wait) for at most 100 ms at start; a reported background decides by its contrast with
the foreground (pi's ``terminalAppearance``); without one, ``COLORFGBG`` by its colour
index (0-6 and 8 dark, 7 and 9-15 light); else dark. This picks the ``system`` theme's
appearance (the default theme) and the theme of a ``LIGHT/DARK`` pair.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any

from pi_plugins.interactive import program_status

#: OSC 10/11 (default colours), OSC 4 for the 16 ANSI colours (the ``system`` theme's
#: hues, :mod:`.system_theme`), then device attributes, which every terminal answers.
QUERY = b"\x1b]10;?\x07\x1b]11;?\x07" + b"".join(b"\x1b]4;%d;?\x07" % n for n in range(16)) + b"\x1b[c"
TIMEOUT_SECONDS = 0.1  # pi 1.6's TERMINAL_QUERY_TIMEOUT_MS
_COLOR_REPLY = re.compile(rb"\x1b\](10|11);rgb:([0-9a-fA-F]{1,4})/([0-9a-fA-F]{1,4})/([0-9a-fA-F]{1,4})(?:\x07|\x1b\\)")
_PALETTE_REPLY = re.compile(rb"\x1b\]4;(\d+);rgb:([0-9a-fA-F]{1,4})/([0-9a-fA-F]{1,4})/([0-9a-fA-F]{1,4})(?:\x07|\x1b\\)")
_ATTRIBUTES_REPLY = re.compile(rb"\x1b\[\?[\d;]*c")

RGB = tuple[float, float, float]
#: What the terminal reported at start ("foreground", "background"), once asked.
reported: dict[str, RGB] = {}
#: The 16 ANSI colours it reported (OSC 4), all or none.
reported_palette: list[RGB] = []
#: Its last light/dark report (DEC mode 2031, :mod:`.appearance_reports`); counts only
#: where it reported no background.
reported_scheme: str | None = None
#: Whether it answered the program status query (OSC 7501, :mod:`.program_status`).
program_status_answered = False


def _channel(digits: bytes) -> float:
    return int(digits, 16) / (16 ** len(digits) - 1) * 255


def parse_palette(data: bytes) -> list[RGB]:
    """The 16 ANSI colours in the OSC 4 replies, in order; [] unless all 16 came."""
    found = {int(n): (_channel(r), _channel(g), _channel(b)) for n, r, g, b in _PALETTE_REPLY.findall(data)}
    return [found[n] for n in range(16)] if all(n in found for n in range(16)) else []


def parse_replies(data: bytes) -> dict[str, RGB]:
    """The colours in the terminal's OSC 10/11 replies (``rgb:RRRR/GGGG/BBBB``, 1-4 hex digits a channel)."""
    found: dict[str, RGB] = {}
    for number, *channels in _COLOR_REPLY.findall(data):
        rgb = tuple(int(c, 16) / (16 ** len(c) - 1) * 255 for c in channels)
        found["foreground" if number == b"10" else "background"] = (rgb[0], rgb[1], rgb[2])
    return found


def ask_terminal(fd: int | None = None, timeout: float = TIMEOUT_SECONDS) -> dict[str, RGB]:
    """Ask the terminal on ``fd`` (default: the controlling terminal's stdin) for its
    colours and remember them in :data:`reported`; {} where it is not a terminal or
    answers nothing in time."""
    import select
    import sys
    import termios
    import tty

    fd = sys.stdin.fileno() if fd is None else fd
    try:
        if not (os.isatty(fd) and sys.stdout.isatty()):
            return {}
        saved = termios.tcgetattr(fd)
    except (OSError, ValueError, termios.error):
        return {}
    from pi_plugins.interactive import keyboard_protocol

    data = b""
    query = keyboard_protocol.PUSH + keyboard_protocol.QUERY + QUERY  # pi 1.6 asks these first
    if program_status.override() is None:  # answered before the device attributes, if at all
        query = query.replace(b"\x1b[c", program_status.QUERY + b"\x1b[c")
    try:
        tty.setcbreak(fd, termios.TCSANOW)
        os.write(fd, query)
        deadline = time.monotonic() + timeout
        while not _ATTRIBUTES_REPLY.search(data):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                break
            data += os.read(fd, 1024)
    except OSError:
        pass
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, saved)
    keyboard_protocol.remember_reply(data)
    reported.clear()
    reported.update(parse_replies(data))
    reported_palette[:] = parse_palette(data)
    global program_status_answered
    program_status_answered = bool(program_status.REPLY.search(data))
    return dict(reported)


def _luminance(rgb: RGB) -> float:
    def linear(channel: float) -> float:
        value = channel / 255
        return value / 12.92 if value <= 0.04045 else ((value + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(first: RGB, second: RGB) -> float:
    a, b = _luminance(first), _luminance(second)
    return (max(a, b) + 0.05) / (min(a, b) + 0.05)


def _oklab_lightness(rgb: RGB) -> float:
    from coloraide import Color

    return float(Color("srgb", [c / 255 for c in rgb]).convert("oklab")["lightness"])


def appearance_of(background: RGB, foreground: RGB | None = None) -> str:
    """pi's ``terminalAppearance``: the way the foreground leans when text can be read
    that way (4.5:1), else dark when white text stands out more than black."""
    white, black = _contrast((255, 255, 255), background), _contrast((0, 0, 0), background)
    if foreground is not None:
        lightness_fg, lightness_bg = _oklab_lightness(foreground), _oklab_lightness(background)
        if abs(lightness_fg - lightness_bg) > 0.05:
            leaning = "dark" if lightness_fg > lightness_bg else "light"
            if (white if leaning == "dark" else black) >= 4.5:
                return leaning
    return "dark" if white >= black else "light"


def colorfgbg(env: Any = None) -> str | None:
    """pi's reading of ``COLORFGBG`` ("fg;bg" or "fg;xpm;bg"): the background's index, or None."""
    value = (os.environ if env is None else env).get("COLORFGBG") or ""
    background = value.split(";")[-1].strip()
    if not re.fullmatch(r"\d{1,2}", background) or int(background) > 15:
        return None
    return "dark" if int(background) <= 6 or int(background) == 8 else "light"


def terminal_appearance(env: Any = None, colors: dict[str, RGB] | None = None) -> str:
    """"light" or "dark": the reported background, else its light/dark report, else
    ``COLORFGBG``, else dark (pi 1.6's ``detectTerminalTheme``)."""
    colors = reported if colors is None else colors
    if "background" in colors:
        return appearance_of(colors["background"], colors.get("foreground"))
    return reported_scheme or colorfgbg(env) or "dark"
