"""pi 1.6 follows the terminal's light/dark switch while it runs: with the ``system`` theme or
a ``LIGHT/DARK`` pair it turns on DEC mode 2031 (``CSI ? 2031 h``), so the terminal reports
each switch as ``CSI ? 997 ; 1 n`` (dark) or ``; 2 n`` (light); on a report it asks for the
terminal's colours again (OSC 10/11/4, then device attributes) and repaints in the theme
they give. The report and the replies arrive in the chat's input: they are taken out of it
here, before prompt_toolkit reads the rest as keys.
"""

from __future__ import annotations

import re
from typing import Any

ENABLE, DISABLE = "\x1b[?2031h", "\x1b[?2031l"
_SCHEME = re.compile(r"\x1b\[\?997;([12])n")
_ATTRIBUTES = re.compile(r"\x1b\[\?[\d;]*c")
REPLY_WAIT_SECONDS = 1.0  # a terminal that never answers the colour query: the keys go on


def follows_terminal(settings: Any) -> bool:
    """The theme setting is one that follows the terminal: none or ``system`` (the
    default), or a ``LIGHT/DARK`` pair."""
    theme = settings.get("theme")
    return not theme or theme == "system" or (isinstance(theme, str) and "/" in theme)


class AppearanceReports:
    def __init__(self, tui: Any) -> None:
        self.tui = tui
        self.enabled = False
        self._replies: str | None = None  # the colour replies collected while a query is out
        self._timer: Any = None
        self._feed: Any = None

    def start(self) -> None:
        """Ask for the reports (when the theme follows the terminal) and watch the input."""
        if not follows_terminal(self.tui.settings):
            return
        terminal_input = getattr(self.tui.app, "input", None)
        terminal_input = getattr(terminal_input, "inner", terminal_input)  # under plugins' input listeners
        parser = getattr(terminal_input, "vt100_parser", None)
        if parser is None:
            return
        if not getattr(parser, "_appearance_reports", False):
            self._feed = parser.feed
            parser.feed = self.feed
            parser._appearance_reports = True
        self.tui.write_to_terminal(ENABLE)
        self.enabled = True

    def stop(self) -> None:
        if self.enabled:
            self.tui.write_to_terminal(DISABLE)
            self.enabled = False

    def feed(self, data: str) -> None:
        """The input as read: reports and replies out, the rest to prompt_toolkit."""
        if self._replies is not None:
            self._replies += data
            found = _ATTRIBUTES.search(self._replies)
            if found is None:
                return
            replies, rest = self._replies[:found.end()], self._replies[found.end():]
            self._replies = None
            if self._timer is not None:
                self._timer.cancel()
            self._colours_arrived(replies)
            data = rest
        scheme = None
        for match in _SCHEME.finditer(data):
            scheme = "light" if match.group(1) == "2" else "dark"
        if scheme is not None:
            data = _SCHEME.sub("", data)
        if data:
            self._feed(data)
        if scheme is not None:
            self._switched(scheme)

    def _switched(self, scheme: str) -> None:
        """The terminal switched: its colours changed too, so they are asked for again."""
        from pi_plugins.interactive import terminal_colors

        terminal_colors.reported_scheme = scheme
        self._replies = ""
        self.tui.write_to_terminal(terminal_colors.QUERY.decode())
        import asyncio

        self._timer = asyncio.get_running_loop().call_later(REPLY_WAIT_SECONDS, self._no_answer)

    def _no_answer(self) -> None:
        pending, self._replies = self._replies, None
        self._colours_arrived(pending or "")

    def _colours_arrived(self, replies: str) -> None:
        from pi_plugins.interactive import terminal_colors

        raw = replies.encode(errors="replace")
        found = terminal_colors.parse_replies(raw)
        if found:
            terminal_colors.reported.clear()
            terminal_colors.reported.update(found)
            palette = terminal_colors.parse_palette(raw)
            if palette:
                terminal_colors.reported_palette[:] = palette
        self._reapply()

    def _reapply(self) -> None:
        """The theme the setting gives now (the system theme built again, or the pair's other
        half), the whole chat repainted."""
        from pi_plugins.interactive.themes import choose

        tui = self.tui
        chosen, _ = choose(tui.themes, tui.settings)  # the pair's half for the new appearance
        tui.set_theme(chosen.name)  # the themes loaded again: the system theme from the new colours
