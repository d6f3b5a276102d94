"""What is drawn below the scrollback, frame by frame: the blocks still streaming or
waiting, the queued messages, plugins' widgets, the working line with its spinner, and
the footer. Everything here is painted to lines (:mod:`.paint`) and handed to
prompt_toolkit's windows (:mod:`.layout`).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from rich.padding import Padding
from rich.text import Text

from pi_plugins.interactive import theme as palette
from pi_plugins.interactive.blocks import user_text
from pi_plugins.interactive.footer import footer
from pi_plugins.interactive.theme import THINKING_BORDER

if TYPE_CHECKING:
    from pi_plugins.interactive.app import InteractiveApp

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class LiveArea:
    def __init__(self, tui: InteractiveApp) -> None:
        self.tui = tui
        self._footer_cache: tuple[Any, list[str]] | None = None
        #: (component, first row, rows) of the widgets above the editor in the last
        #: :meth:`content_lines` (the fullscreen transcript routes the mouse by them).
        self.component_rows: list[tuple[Any, int, int]] = []

    def lines(self, width: int) -> list[str]:
        """The live chat, as many lines as fit above the editor."""
        # one row to spare: an application exactly as tall as the terminal makes it scroll
        # while redrawing, and the old frame would stay in the scrollback
        room = max(self.tui.rows - self.tui.layout.bottom_height() - 1, 3)
        return self.content_lines(width)[-room:]

    def content_lines(self, width: int, skip_head: bool = False) -> list[str]:
        """The live chat: unfinished blocks, the queue, widgets above the editor and the
        working line (all of them: the fullscreen transcript scrolls); ``skip_head``: not
        the first block (the fullscreen transcript paints a streaming answer itself)."""
        tui = self.tui
        lines: list[str] = []
        for block in tui.transcript.live[1 if skip_head else 0:]:
            lines += tui.paint(block, width, live=not block.final)
        lines += self._queue_lines(width)
        above = self.widget_parts(width, "aboveEditor")
        rows: list[tuple[Any, int, int]] = []
        if any(part for _, part in above):
            lines.append("")
            for component, part in above:
                if component is not None and part:
                    rows.append((component, len(lines), len(part)))
                lines += part
        self.component_rows = rows  # where each widget's component is in these lines: its mouse
        if tui.working and tui.working_visible:
            frames = tui.working_frames if tui.working_frames is not None else SPINNER
            frame = frames[int(time.monotonic() / tui.working_interval) % len(frames)] if frames else ""
            message = tui.working_message if tui.working_message and tui.harness.agent.is_running else tui.working
            text = (Text(" ") + Text.from_ansi(frame) + Text(" ") if frame else Text(" ")) + Text(message, style="muted")
            lines += [""] + tui.painter.lines(text, width)
        return lines

    def _queue_lines(self, width: int) -> list[str]:
        agent = self.tui.harness.agent
        steering = [user_text(m) for m in agent.steering.messages]
        follow = [user_text(m) for m in agent.follow_up_queue.messages]
        if not steering and not follow:
            return []
        parts = [Text("")]
        parts += [Text(f" Steering: {' '.join(t.split())}", style="dim", no_wrap=True, overflow="ellipsis")
                  for t in steering]
        parts += [Text(f" Follow-up: {' '.join(t.split())}", style="dim", no_wrap=True, overflow="ellipsis")
                  for t in follow]
        parts.append(Text(" ↳ alt+up to edit all queued messages", style="dim"))
        return [line for part in parts for line in self.tui.painter.lines(part, width)]

    def widget_lines(self, width: int, placement: str) -> list[str]:
        """Plugins' widgets (``ctx.ui.set_widget``) above or below the editor."""
        return [line for _, lines in self.widget_parts(width, placement) for line in lines]

    def widget_parts(self, width: int, placement: str) -> list[tuple[Any, list[str]]]:
        """Each widget's lines, with the component that drew them (None for plain lines):
        the mouse goes to the component under it (:mod:`.component_rows`)."""
        from pi_plugins.interactive.components import component_lines

        parts: list[tuple[Any, list[str]]] = []
        for shown, where in self.tui.widgets.values():
            if where == placement and not isinstance(shown, list):
                parts.append((shown, component_lines(shown, width)))
            elif where == placement:
                text = Text("\n").join(Text.from_ansi(line, no_wrap=True, overflow="ellipsis") for line in shown)
                parts.append((None, self.tui.painter.lines(Padding(text, (0, 1)), width)))
        return parts

    def footer_parts(self, width: int) -> list[tuple[Any, list[str]]]:
        """The footer, with the plugin's component that draws it (if one does)."""
        return [(self.tui.footer_component, self.footer_lines(width))]

    def footer_lines(self, width: int) -> list[str]:
        """The footer (a plugin's, or ours: painted again only when what it shows changed)."""
        tui = self.tui
        if tui.footer_component is not None:
            from pi_plugins.interactive.components import component_lines

            return component_lines(tui.footer_component, width)
        harness = tui.harness
        key = (width, len(harness.session), harness.session.leaf_id, harness.model.key,
               harness.thinking_level, harness.session.name, tuple(sorted(tui.statuses.items())),
               tui.branch, len(harness.agent.messages))
        if self._footer_cache is None or self._footer_cache[0] != key:
            providers = len({m.provider for m in harness.available_models()})
            lines = tui.painter.lines(footer(harness, width, tui.branch, tui.statuses, providers), width)
            self._footer_cache = (key, lines)
        return self._footer_cache[1]

    def repaint_footer(self) -> None:
        """Paint the footer afresh next time (the theme changed)."""
        self._footer_cache = None

    def border_style(self) -> str:
        """The editor's borders: the bash colour for ``!``, else the thinking level's."""
        tui = self.tui
        if tui.editor.text.lstrip().startswith("!"):
            return f"fg:{palette.BASH_BORDER}"
        return f"fg:{THINKING_BORDER.get(tui.harness.thinking_level, THINKING_BORDER['off'])}"
