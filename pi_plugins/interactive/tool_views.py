"""How a tool call and its result look in the chat (pi's renderers, per built-in tool).

A call is one title line (``$ ls -la``, ``edit src/app.py``); its result follows: the
``edit`` diff in full, the tail of ``bash`` output, the head of what ``read``, ``write``,
``grep``, ``find`` and ``ls`` produced; Ctrl+O shows everything. Any other tool shows its
name, its arguments and its text output.
"""

from __future__ import annotations

import json
import os
from typing import Any

from attrs import define
from rich.console import Group, RenderableType
from rich.text import Text

from pi_plugins.interactive.diff import render_diff

BASH_PREVIEW_LINES = 5
HEAD_PREVIEW_LINES = 10
EXPAND_KEY = "ctrl+o"


@define
class ToolState:
    """One tool call as the chat knows it, from the first streamed argument to its result."""

    call_id: str
    name: str
    args: Any = None
    started: bool = False
    finished: bool = False
    content: list | None = None
    details: Any = None
    is_error: bool = False

    @property
    def output(self) -> str:
        return content_text(self.content or [])


def content_text(content: list) -> str:
    parts = []
    for block in content:
        kind = getattr(block, "type", None) or (block.get("type") if isinstance(block, dict) else None)
        if kind == "text":
            parts.append(block.text if hasattr(block, "text") else block.get("text", ""))
        elif kind == "image":
            mime = getattr(block, "mime_type", None) or (block.get("mimeType") if isinstance(block, dict) else "")
            parts.append(f"[image: {mime}]")
    return "\n".join(parts)


def short_path(path: str) -> str:
    home = os.path.expanduser("~")
    if home and home != "/" and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home):]
    return path


def _arg(args: Any, *names: str) -> Any:
    if not isinstance(args, dict):
        return None
    for name in names:
        if args.get(name) is not None:
            return args[name]
    return None


def _path_text(args: Any, *names: str) -> Text:
    value = _arg(args, *names)
    if value is None:
        return Text("...", style="tool.output")
    return Text(short_path(str(value)), style="accent")


def call_title(state: ToolState) -> Text:
    """The title line of a call (its arguments may still be streaming)."""
    args, name = state.args, state.name
    title = Text()
    if name == "bash":
        command = _arg(args, "command")
        title.append(f"$ {command if command is not None else '...'}", style="tool.title")
        timeout = _arg(args, "timeout")
        if timeout:
            title.append(f" (timeout {timeout}s)", style="muted")
        return title
    if name in ("read", "write", "edit", "ls"):
        title.append(name, style="tool.title")
        title.append(" ")
        title.append_text(_path_text(args, "path", "file_path") if name != "ls" or _arg(args, "path")
                          else Text(".", style="accent"))
        if name == "read":
            offset, limit = _arg(args, "offset"), _arg(args, "limit")
            if offset is not None or limit is not None:
                start = int(offset or 1)
                end = f"-{start + int(limit) - 1}" if limit is not None else ""
                title.append(f":{start}{end}", style="warning")
        return title
    if name in ("grep", "find"):
        pattern = _arg(args, "pattern") or ""
        title.append(name, style="tool.title")
        title.append(" ")
        title.append(f"/{pattern}/" if name == "grep" else str(pattern), style="accent")
        title.append(" in ", style="muted")
        title.append(short_path(str(_arg(args, "path") or ".")), style="accent")
        glob = _arg(args, "glob")
        if glob:
            title.append(f" ({glob})", style="muted")
        return title
    title.append(name, style="tool.title")
    if args:
        shown = json.dumps(args, ensure_ascii=False)
        title.append(" " + (shown if len(shown) <= 200 else shown[:197] + "..."), style="muted")
    return title


def _more(count: int, where: str) -> Text:
    return Text(f"... ({count} {where} lines, {EXPAND_KEY} to expand)", style="muted")


def _lines(text: str) -> list[str]:
    lines = text.replace("\t", "   ").rstrip("\n").split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def _head(text: str, expanded: bool, style: str) -> RenderableType | None:
    lines = _lines(text)
    if not lines:
        return None
    if expanded or len(lines) <= HEAD_PREVIEW_LINES:
        return Text("\n".join(lines), style=style)
    shown = Text("\n".join(lines[:HEAD_PREVIEW_LINES]), style=style)
    return Group(shown, _more(len(lines) - HEAD_PREVIEW_LINES, "more"))


def _tail(text: str, expanded: bool, style: str) -> RenderableType | None:
    lines = _lines(text.strip("\n"))
    if not lines:
        return None
    if expanded or len(lines) <= BASH_PREVIEW_LINES:
        return Text("\n".join(lines), style=style)
    return Group(_more(len(lines) - BASH_PREVIEW_LINES, "earlier"),
                 Text("\n".join(lines[-BASH_PREVIEW_LINES:]), style=style))


def result_body(state: ToolState, expanded: bool) -> RenderableType | None:
    """What shows under the title: the result (or the partial result while it runs)."""
    name, output = state.name, state.output
    style = "error" if state.is_error else "tool.output"
    if name == "edit" and not state.is_error:
        diff = state.details.get("diff") if isinstance(state.details, dict) else None
        if isinstance(diff, str) and diff:
            return render_diff(diff)
    if name == "write" and not state.is_error:
        content = _arg(state.args, "content")
        if isinstance(content, str) and content:
            body = _head(content, expanded, "tool.output")
            return body
    if state.content is None:
        return None
    if name == "bash":
        return _tail(output, expanded, style)
    return _head(output, expanded, style)
