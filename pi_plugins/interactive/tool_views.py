"""How a tool call and its result look in the chat (pi's renderers, per built-in tool).

A call is one title line (``$ ls -la``, ``edit src/app.py``); its result follows: the
``edit`` diff in full, the tail of ``bash`` output, the head of what ``read``, ``write``,
``grep``, ``find`` and ``ls`` produced; Ctrl+O shows everything. Any other tool shows its
name, its arguments and its text output.
"""

from __future__ import annotations

from typing import Any

from attrs import define
from rich.console import Group, RenderableType
from rich.text import Text

from pi_plugins.interactive.diff import render_diff
from pi_plugins.tools.presentation import argument, short_path

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
    #: The tool itself (for its own ``summarize``); None when it is not loaded.
    tool: Any = None
    #: When it started and ended running (``time.monotonic()``), and how long the
    #: harness says it ran (the result's ``durationMs``), for the timer line.
    started_at: float | None = None
    ended_at: float | None = None
    duration_ms: int | None = None

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


def _path_text(args: Any, *names: str) -> Text:
    value = argument(args, *names)
    if value is None:
        return Text("...", style="tool.output")
    return Text(short_path(str(value)), style="accent")


def call_title(state: ToolState) -> Text:
    """The title line of a call (its arguments may still be streaming): the tool's own
    one-line ``summarize``, its first word in the title style and the rest accented."""
    from pi_plugins.tools.presentation import summary_of

    summary = summary_of(state.name, state.args, {state.name: state.tool} if state.tool else None)
    head, space, rest = summary.partition(" ")
    title = Text(head, style="tool.title")
    if space:
        title.append(" ")
        title.append(rest, style="accent" if state.tool is not None else "muted")
        _link_file(title, state.name, state.args, len(head) + 1, rest)
    return title


#: The tools whose title links its path in pi 1.6 (its ``renderToolPath``); ls's
#: missing path is the working folder. Nothing inside tool output is linked.
LINKED_TOOLS = {"read": "", "edit": "", "write": "", "ls": "."}


def _link_file(title: Text, tool: str, args: Any, start: int, rest: str) -> None:
    """pi 1.6: the file a read, edit, write or ls names is an OSC 8 ``file://`` link
    (where links are on)."""
    from pi_plugins.interactive import file_links

    if file_links.links_from is None or tool not in LINKED_TOOLS:
        return
    path = argument(args, "path", "file_path") or LINKED_TOOLS[tool]
    if not isinstance(path, str) or not path:
        return
    shown = short_path(path)
    if rest.startswith(shown):
        from rich.style import Style

        title.stylize(Style(link=file_links.file_url(path, file_links.links_from)), start, start + len(shown))


#: The rows with pi 1.6's timer line (its ``toolTimerText``): codemode and bash.
TIMED_TOOLS = ("codemode", "bash")


def format_duration(ms: float) -> str:
    """pi 1.6's ``formatToolDuration``: ``4.2s``, ``3m 5s``, ``1h 2m 3s``."""
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f}s"
    whole = int(seconds)
    minutes, rest = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes}m {rest}s"
    return f"{minutes // 60}h {minutes % 60}m {rest}s"


def timer_text(state: ToolState) -> str | None:
    """``Elapsed 4.2s`` while a codemode or bash call runs, ``Took 4.2s`` once it has
    ended (the harness's duration first, else the chat's own clock), as pi 1.6's rows."""
    import time

    if state.name not in TIMED_TOOLS:
        return None
    if state.finished and state.duration_ms is not None:
        return f"Took {format_duration(state.duration_ms)}"
    if state.started_at is None:
        return None
    if state.finished or state.is_error:
        state.ended_at = state.ended_at if state.ended_at is not None else time.monotonic()
    end = state.ended_at if state.ended_at is not None else time.monotonic()
    return f"{'Took' if state.finished else 'Elapsed'} {format_duration((end - state.started_at) * 1000)}"


def _more(count: int, where: str) -> Text:
    return Text(f"... ({count} {where} lines, {EXPAND_KEY} to expand)", style="muted")


def _lines(text: str) -> list[str]:
    lines = text.replace("\t", "   ").rstrip("\n").split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def _head(text: str, expanded: bool, style: str, path: object = None) -> RenderableType | None:
    """The first lines of ``text`` (all, expanded), coloured as the language of ``path``
    when it names a file of one (pi 1.6's read and write views)."""
    from pi_plugins.interactive.code_languages import highlighted

    lines = _lines(text)
    if not lines:
        return None
    more = 0 if expanded or len(lines) <= HEAD_PREVIEW_LINES else len(lines) - HEAD_PREVIEW_LINES
    kept = "\n".join(lines[:len(lines) - more])
    shown = highlighted(kept, path) or Text(kept, style=style)
    return Group(shown, _more(more, "more")) if more else shown


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
        content = argument(state.args, "content")
        if isinstance(content, str) and content:
            return _head(content, expanded, "tool.output", argument(state.args, "path", "file_path"))
    if state.content is None:
        return None
    if name == "bash":
        return _tail(output, expanded, style)
    path = argument(state.args, "path", "file_path") if name == "read" and not state.is_error else None
    return _head(output, expanded, style, path)
