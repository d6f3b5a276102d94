"""What a plugin registers to change how the interactive chat draws (pi 1.6's
``registerMarkdownTransformer``, ``registerEntryRenderer`` and ``registerToolRenderer``).
Records only: the chat (``pi_plugins/interactive/render_hooks.py``) applies them, and
other modes ignore them, as pi's print and RPC modes do."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pi_core.protocol.records import field, record

#: The surfaces a transformer runs on when it names none (pi 1.6's default).
TRANSCRIPT_MARKDOWN = ("user", "assistant", "assistant-thinking")
#: Every surface pi 1.6 knows: the transcript's, plugins' messages and skill blocks,
#: expanded summaries, and the changelog notices.
MARKDOWN_SURFACES = (*TRANSCRIPT_MARKDOWN, "custom", "summary", "changelog")


@record(frozen=True)
class MarkdownTransformer:
    """``transform(markdown, info) -> str`` before the chat renders Markdown; ``info`` has
    ``message_type``, ``is_streaming`` and ``available_width``. Transformers chain in load
    order; one that raises is skipped. Display only: the message itself stays as it was."""

    transform: Callable[[str, Any], str]
    message_types: tuple[str, ...] = field(default=TRANSCRIPT_MARKDOWN, converter=tuple)

    def __attrs_post_init__(self) -> None:
        unknown = set(self.message_types) - set(MARKDOWN_SURFACES)
        if unknown:
            raise ValueError(f"unknown Markdown surfaces {sorted(unknown)}; known: {', '.join(MARKDOWN_SURFACES)}")


@record(frozen=True)
class EntryRenderer:
    """How the chat shows a plugin's custom entries of one kind (``ctx.append_entry``):
    ``render(entry, options)`` returns text (ANSI allowed), a rich renderable, or None for
    nothing. ``options`` has ``expanded``, ``key_text(id)`` and ``key_hint(id, words)``."""

    custom_type: str
    render: Callable[[Any, Any], Any]


@record(frozen=True)
class ToolRenderer:
    """Chooses how calls to any tool are drawn, registered or not (an MCP tool of a resumed
    session): ``resolve(tool_name, next)`` returns an object or dict with ``render_call`` /
    ``render_result`` (as a :class:`pi_core.Tool` has), or ``next()``: what later resolvers,
    then the tool itself, would use. ``next() or mine`` only fills in."""

    resolve: Callable[[str, Callable[[], Any]], Any]
