"""``/debug``: pi 1.6's ``pi-debug.log`` in the agent dir, for troubleshooting drawing
and conversation state.

The file has the time, the terminal's size, every line of the chat as drawn now with its
visible width (the line JSON-quoted, styles and all), then the conversation's messages as
JSONL; it is written afresh each time. The chat says where it went.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from prompt_toolkit.formatted_text import ANSI, fragment_list_width, to_formatted_text

from pi_core import to_json
from pi_core.protocol.entries import iso_now

if TYPE_CHECKING:
    from pi_plugins.interactive.port import ChatPort

FILE_NAME = "pi-debug.log"


def visible_width(line: str) -> int:
    return fragment_list_width(to_formatted_text(ANSI(line)))


def debug_text(lines: list[str], messages: list, width: int, height: int) -> str:
    return "\n".join([
        f"Debug output at {iso_now()}",
        f"Terminal: {width}x{height}",
        f"Total lines: {len(lines)}",
        "",
        "=== All rendered lines with visible widths ===",
        *(f"[{i}] (w={visible_width(line)}) {json.dumps(line, ensure_ascii=False)}" for i, line in enumerate(lines)),
        "",
        "=== Agent messages (JSONL) ===",
        *(json.dumps(to_json(message), ensure_ascii=False, separators=(",", ":")) for message in messages),
        "",
    ])


async def debug(tui: ChatPort, args: str) -> None:
    path = Path(tui.harness.ctx.agent_dir) / FILE_NAME
    text = debug_text(tui.rendered_lines(), list(tui.harness.messages), tui.width, tui.rows)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        tui.add_text(f"Could not write the debug log: {exc}", "error")
        return
    tui.add_text(f"✓ Debug log written\n{path}", "none")
