"""The plugins' say in how the chat draws: Markdown transformers, entry renderers and tool
renderers (pi 1.6's ``registerMarkdownTransformer``, ``registerEntryRenderer``,
``registerToolRenderer``), and ``key_text`` / ``key_hint`` for their render contexts.

The chat loads them with its other plugin parts (:func:`load`, again on ``/reload``); the
blocks ask here while they paint. One chat runs per process, so they are kept here, as
:mod:`mermaid` keeps its mode."""

from __future__ import annotations

import logging
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from rich.console import RenderableType
from rich.text import Text

log = logging.getLogger(__name__)

transformers: list = []  # MarkdownTransformer, in load order
entry_renderers: dict[str, Callable[[Any, Any], Any]] = {}
tool_resolvers: list[Callable[[str, Callable[[], Any]], Any]] = []
#: The chat's keybindings (keybindings.json) and theme, for ``key_text`` / ``key_hint``.
keybindings: Any = None
theme: Any = None


async def load(app: Any) -> None:
    """Ask the plugins again (the chat's start and ``/reload``)."""
    global keybindings, theme
    plugins, ctx = app.harness.plugins, app.harness.ctx
    from pi_core import MarkdownTransformer

    found = await plugins.call("register_markdown_transformers", ctx=ctx)
    # a bare function is a transformer of the default surfaces; anything else is left out
    transformers[:] = [t if isinstance(t, MarkdownTransformer) else MarkdownTransformer(t)
                       for t in found if isinstance(t, MarkdownTransformer) or callable(t)]
    entry_renderers.clear()
    entry_renderers.update({r.custom_type: r.render for r in await plugins.call("register_entry_renderers", ctx=ctx)
                            if callable(getattr(r, "render", None))})
    tool_resolvers[:] = [getattr(r, "resolve", r) for r in await plugins.call("register_tool_renderers", ctx=ctx)
                         if callable(getattr(r, "resolve", r))]
    keybindings = app.keybindings
    from pi_plugins.interactive.components import Theme

    theme = Theme(app)


def key_text(action: str) -> str:
    """pi 1.6's ``keyText(id)``: the configured keys of a keybinding id (``ctrl+o``,
    several joined by ``/``), or ``""`` when it has none."""
    keys = keybindings.keys(action) if keybindings is not None else ()
    return "/".join(keys)


def key_hint(action: str, description: str) -> str:
    """pi 1.6's ``keyHint(id, description)``: the keys dimmed, then the words muted."""
    keys = key_text(action)
    if theme is None:
        return f"{keys} {description}"
    return theme.fg("dim", keys) + theme.fg("muted", f" {description}")


def transformed(markdown: str, message_type: str, streaming: bool = False, width: int | None = None) -> str:
    """``markdown`` through every transformer that runs on ``message_type``; one that raises
    or returns no string is skipped, what came before kept (pi 1.6)."""
    if not transformers:
        return markdown
    info = SimpleNamespace(message_type=message_type, is_streaming=streaming, available_width=width,
                           message_id=None, timestamp=None)
    for transformer in transformers:
        if message_type not in transformer.message_types:
            continue
        try:
            result = transformer.transform(markdown, info)
        except Exception:
            log.debug("a Markdown transformer failed", exc_info=True)
            continue
        if isinstance(result, str):
            markdown = result
    return markdown


def tool_drawing(name: str, tool: Any, slot: str) -> Callable[..., Any] | None:
    """The ``render_call`` / ``render_result`` for a call of ``name``: the tool renderers'
    choice in load order, each able to defer with ``next()``, then the tool's own."""

    def choose(index: int) -> Any:
        if index == len(tool_resolvers):
            return tool
        try:
            return tool_resolvers[index](name, lambda: choose(index + 1))
        except Exception:
            log.debug("a tool renderer failed", exc_info=True)
            return choose(index + 1)

    chosen = choose(0) if tool_resolvers else tool
    if isinstance(chosen, dict):
        return chosen.get(slot)
    return getattr(chosen, slot, None)


def tool_drawn(state: Any, slot: str, render_state: dict, tool_theme: Any, *args: Any) -> RenderableType | None:
    """A call's ``render_call`` / ``render_result`` (``slot``) drawing, as lines of ANSI
    text, or None for the chat's own drawing. Its context has pi 1.6's ``args``, ``state``
    (shared by both slots of the row), ``is_error``, ``tool_call_id``, ``key_text`` and
    ``key_hint``; a drawing that raises shows as one error line."""
    draw = tool_drawing(state.name, state.tool, slot)
    if draw is None:
        return None
    context = {"args": state.args, "state": render_state, "is_error": state.is_error,
               "tool_call_id": state.call_id, "key_text": key_text, "key_hint": key_hint}
    try:
        lines = draw(*args, tool_theme, context)
    except Exception as exc:
        return Text(f"[{slot} failed: {type(exc).__name__}: {exc}]", style="error")
    if lines is None:
        return None
    if isinstance(lines, str):
        lines = lines.split("\n")
    return Text("\n").join(Text.from_ansi(str(line)) for line in lines)


def entry_renderable(entry: Any, expanded: bool, pad: int = 1) -> RenderableType | None:
    """A custom entry as its plugin draws it (None: it has no renderer, or drew nothing)."""
    render = entry_renderers.get(getattr(entry, "custom_type", None) or "")
    if render is None:
        return None
    options = SimpleNamespace(expanded=expanded, output_pad=pad, key_text=key_text, key_hint=key_hint)
    try:
        shown = render(entry, options)
    except Exception as exc:  # a broken renderer must not take the chat down
        shown = Text(f"[{entry.custom_type}] renderer failed: {exc}", style="error")
    if shown is None:
        return None
    if isinstance(shown, str):
        shown = Text.from_ansi(shown)
    from rich.padding import Padding

    return Padding(shown, (1, pad), style="custom.box", expand=True)


def with_entries(messages: list, path: list, make_blocks: Callable[[list], list]) -> list:
    """The chat's blocks for ``messages`` (``make_blocks``) with the custom entries of the
    session's ``path`` that have a renderer, each after the message before it on the path
    (a resumed session, ``/tree``, a compaction rebuild the chat this way). An assistant
    message keeps its tool results: an entry after it comes after them."""
    if not entry_renderers:
        return make_blocks(messages)
    from pi_plugins.interactive.event_blocks import EntryBlock

    index = {id(message): i for i, message in enumerate(messages)}
    after: dict[int, list] = {}
    anchor = -1
    for entry in path:
        message = getattr(entry, "message", None)
        if message is not None and id(message) in index:
            anchor = index[id(message)]
            while anchor + 1 < len(messages) and getattr(messages[anchor + 1], "role", None) == "toolResult":
                anchor += 1
        elif getattr(entry, "type", None) == "custom" and getattr(entry, "custom_type", None) in entry_renderers:
            after.setdefault(anchor, []).append(entry)
    blocks: list = [EntryBlock(entry) for entry in after.pop(-1, [])]
    start = 0
    for cut in sorted(after):
        blocks += make_blocks(messages[start:cut + 1]) + [EntryBlock(entry) for entry in after[cut]]
        start = cut + 1
    return blocks + make_blocks(messages[start:])
