"""Colours of the interactive mode, one dark palette (the tones pi's dark theme uses).

Everything on screen is painted by rich with these named styles, so a renderer, the
footer and a dialog say ``"muted"`` or ``"diff.added"`` rather than a colour.
"""

from __future__ import annotations

ACCENT = "#8abeb7"
BORDER = "#5f87ff"
MUTED = "#808080"
DIM = "#666666"
DARK = "#505050"
GREEN = "#b5bd68"
RED = "#cc6666"
YELLOW = "#ffff00"

STYLES = {
    "accent": ACCENT,
    "border": BORDER,
    "border.accent": "#00d7ff",
    "border.muted": DARK,
    "success": GREEN,
    "error": RED,
    "warning": YELLOW,
    "muted": MUTED,
    "dim": DIM,
    "thinking": f"italic {MUTED}",
    "selected": "on #3a3a4a",
    "user.box": "on #343541",
    "custom.box": "on #2d2838",
    "custom.label": "bold #9575cd",
    "summary.label": "bold #00d7ff",
    "tool.pending": "on #282832",
    "tool.success": "on #283228",
    "tool.error": "on #3c2828",
    "tool.title": "bold",
    "tool.output": MUTED,
    "diff.added": GREEN,
    "diff.removed": RED,
    "diff.context": MUTED,
    "diff.changed": "reverse",
    "label": YELLOW,
    # rich's Markdown reads these names
    "markdown.paragraph": "none",
    "markdown.text": "none",
    "markdown.code": ACCENT,
    "markdown.code_block": GREEN,
    "markdown.block_quote": f"italic {MUTED}",
    "markdown.item.bullet": ACCENT,
    "markdown.item.number": ACCENT,
    "markdown.hr": MUTED,
    "markdown.h1": "bold underline #f0c674",
    "markdown.h2": "bold #f0c674",
    "markdown.h3": "bold #f0c674",
    "markdown.h4": "bold #f0c674",
    "markdown.h5": "bold #f0c674",
    "markdown.h6": "bold #f0c674",
    "markdown.link": "#81a2be",
    "markdown.link_url": DIM,
    "markdown.table.border": MUTED,
    "markdown.table.header": "bold",
    "markdown.fence": MUTED,
}

#: The editor's border shows the thinking level at a glance, as in pi.
THINKING_BORDER = {
    "off": DARK,
    "minimal": "#6e6e6e",
    "low": "#5f87af",
    "medium": "#81a2be",
    "high": "#b294bb",
    "xhigh": "#d183e8",
}
BASH_BORDER = GREEN
#: The name of the theme applied last (``system`` and ``dark`` may share their colours).
APPLIED_NAME = "dark"

#: prompt_toolkit styles for the parts it draws itself (the editor and its menu).
PROMPT_STYLE = {
    "editor": "",
    "editor.placeholder": f"{DIM} italic",
    "completion-menu": "bg:#262626 #bcbcbc",
    "completion-menu.completion": "bg:#262626 #bcbcbc",
    "completion-menu.completion.current": f"bg:#3a3a4a {ACCENT} bold",
    "completion-menu.meta.completion": f"bg:#262626 {MUTED}",
    "completion-menu.meta.completion.current": f"bg:#3a3a4a {MUTED}",
    "dialog-prompt": ACCENT,
}
