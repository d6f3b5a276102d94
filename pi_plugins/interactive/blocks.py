"""The pieces of the chat: a user message, an assistant message, a tool call, the user's
shell command, a plugin's message, a summary, a status line.

A block paints itself at a width (as ANSI lines, see :mod:`paint`), starting with the
blank line that separates it from the one above; painting is cached until the block
changes or the view does (tool output expanded, thinking hidden). A block is ``final``
once nothing about it will change; final blocks at the head of the chat go to the
terminal's scrollback.
"""

from __future__ import annotations

from typing import Any, Callable

from attrs import frozen
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.text import Text

from pi_core.messages import (
    AssistantMessage,
    BashExecutionMessage,
    CompactionSummaryMessage,
    CustomMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    UserMessage,
)
from pi_plugins.interactive.markdown import PiMarkdown
from pi_plugins.interactive.paint import Painter
from pi_plugins.interactive.tool_views import BASH_PREVIEW_LINES, ToolState, call_title, result_body

#: Beyond this many characters a streaming text is painted from a late paragraph on:
#: only its end is on screen, and painting all of it on every delta would cost
#: quadratic time over a long answer.
STREAM_TAIL_CHARS = 6000


@frozen
class View:
    """Display switches that change how blocks look (Ctrl+O and Ctrl+T)."""

    expand_tools: bool = False
    hide_thinking: bool = False


class Block:
    final: bool = True

    def __init__(self) -> None:
        self.version = 0
        self._cache: tuple | None = None

    def changed(self) -> None:
        self.version += 1

    def renderable(self, view: View, live: bool = False) -> RenderableType | None:
        raise NotImplementedError

    def lines(self, painter: Painter, width: int, view: View, live: bool = False) -> list[str]:
        key = (self.version, width, view, live)
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        renderable = self.renderable(view, live)
        lines = [""] + painter.lines(renderable, width) if renderable is not None else []
        self._cache = (key, lines)
        return lines


def _markdown(text: str, style: str = "none", live: bool = False) -> RenderableType:
    return Padding(PiMarkdown(stream_tail(text) if live else text, style=style), (0, 1))


def stream_tail(text: str, budget: int = STREAM_TAIL_CHARS) -> str:
    """The end of a Markdown text, cut at a paragraph break at least ``budget``
    characters from its end, with a code fence re-opened if the cut falls inside one."""
    if len(text) <= budget:
        return text
    lines = text.split("\n")
    start_of_tail = len(text) - budget
    position, fence, cut, cut_fence = 0, None, None, None
    for index, line in enumerate(lines):
        if position >= start_of_tail and cut is None and (fence is not None or not line.strip()):
            cut, cut_fence = index, fence
        stripped = line.lstrip()
        if stripped.startswith("```") or stripped.startswith("~~~"):
            fence = None if fence is not None else stripped
        position += len(line) + 1
    if cut is None:
        return text
    tail = "\n".join(lines[cut:])
    return f"{cut_fence}\n{tail}" if cut_fence is not None else tail


class TextBlock(Block):
    """A line or two of status, information, a warning or an error."""

    def __init__(self, text: str, style: str = "dim") -> None:
        super().__init__()
        self.text, self.style = text, style

    def renderable(self, view: View, live: bool = False) -> RenderableType:
        return Padding(Text(self.text, style=self.style), (0, 1))


class HeaderBlock(Block):
    def __init__(self, title: str, hints: list[tuple[str, str]], notes: list[str] = ()) -> None:
        super().__init__()
        self.title, self.hints, self.notes = title, hints, list(notes)

    def renderable(self, view: View, live: bool = False) -> RenderableType:
        hint = Text()
        for index, (key, what) in enumerate(self.hints):
            if index:
                hint.append(" · ", style="muted")
            hint.append(key, style="dim")
            hint.append(f" {what}", style="muted")
        parts = [Text(self.title, style="bold accent"), hint]
        parts += [Text(note, style="warning") for note in self.notes]
        return Padding(Group(*parts), (0, 1))


class UserBlock(Block):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def renderable(self, view: View, live: bool = False) -> RenderableType:
        return Padding(PiMarkdown(self.text.strip()), (1, 1), style="user.box", expand=True)


class AssistantBlock(Block):
    """An assistant message, streaming until ``final``. Its tool calls are blocks of
    their own; this one shows text, thinking (dimmed, or one line when hidden) and how
    the message ended if it ended badly."""

    def __init__(self, message: AssistantMessage, final: bool = False) -> None:
        super().__init__()
        self.message = message
        self.final = final

    def renderable(self, view: View, live: bool = False) -> RenderableType | None:
        message = self.message
        parts: list[RenderableType] = []
        visible = [c for c in message.content
                   if (isinstance(c, TextContent) and c.text.strip())
                   or (isinstance(c, ThinkingContent) and c.thinking.strip())]
        for index, content in enumerate(visible):
            if index:
                parts.append(Text(""))
            if isinstance(content, ThinkingContent):
                if view.hide_thinking:
                    parts.append(Padding(Text("Thinking...", style="thinking"), (0, 1)))
                else:
                    parts.append(_markdown(content.thinking.strip(), "thinking", live))
            else:
                parts.append(_markdown(content.text.strip(), live=live))
        if not any(isinstance(c, ToolCall) for c in message.content):
            ending = None
            if message.stop_reason == "aborted":
                ending = (message.error_message if message.error_message
                          and message.error_message != "Request was aborted" else "Operation aborted")
            elif message.stop_reason == "error":
                ending = f"Error: {message.error_message or 'Unknown error'}"
            if ending:
                if parts:
                    parts.append(Text(""))
                parts.append(Padding(Text(ending, style="error"), (0, 1)))
        return Group(*parts) if parts else None


class ToolBlock(Block):
    """A tool call: its title while the arguments stream, then its (partial) result."""

    def __init__(self, state: ToolState) -> None:
        super().__init__()
        self.state = state

    @property
    def final(self) -> bool:  # type: ignore[override]
        return self.state.finished

    def renderable(self, view: View, live: bool = False) -> RenderableType:
        state = self.state
        box = ("tool.error" if state.is_error else "tool.success") if state.finished else "tool.pending"
        body = result_body(state, view.expand_tools)
        inner = Group(call_title(state), Text(""), body) if body is not None else call_title(state)
        return Padding(inner, (1, 1), style=box, expand=True)


class BashBlock(Block):
    """The user's own ``!cmd`` (``!!cmd`` is marked as kept out of the context)."""

    def __init__(self, command: str, excluded: bool = False) -> None:
        super().__init__()
        self.command, self.excluded = command, excluded
        self.message: BashExecutionMessage | None = None
        self.final = False

    def finish(self, message: BashExecutionMessage | None) -> None:
        self.message, self.final = message, True
        self.changed()

    def renderable(self, view: View, live: bool = False) -> RenderableType:
        title = Text(f"$ {self.command}", style="bold success")
        if self.excluded:
            title.append("  (not sent to the model)", style="muted")
        parts: list[RenderableType] = [title]
        message = self.message
        if message is None:
            if not self.final:
                parts.append(Text("Running... (esc to cancel)", style="muted"))
            else:
                parts.append(Text("Cancelled", style="warning"))
            return Padding(Group(*parts), (0, 1))
        output = message.output.rstrip("\n")
        if output:
            lines = output.split("\n")
            parts.append(Text(""))
            if not view.expand_tools and len(lines) > BASH_PREVIEW_LINES * 4:
                hidden = len(lines) - BASH_PREVIEW_LINES * 4
                parts.append(Text(f"... ({hidden} earlier lines, ctrl+o to expand)", style="muted"))
                lines = lines[-BASH_PREVIEW_LINES * 4:]
            parts.append(Text("\n".join(lines), style="tool.output"))
        status = None
        if message.cancelled:
            status = Text("(cancelled)", style="warning")
        elif message.exit_code not in (0, None):
            status = Text(f"(exit {message.exit_code})", style="error")
        if message.truncated and message.full_output_path:
            parts.append(Text(f"Output truncated; full output: {message.full_output_path}", style="warning"))
        if status is not None:
            parts.append(status)
        return Padding(Group(*parts), (0, 1))


#: A plugin's renderer: ``render(message, expanded) -> str | rich renderable | None``.
Renderer = Callable[[CustomMessage, bool], Any]


class CustomBlock(Block):
    """A plugin's message: its own renderer when it registered one, else its type as a
    label and its content as Markdown."""

    def __init__(self, message: CustomMessage, renderer: Renderer | None = None) -> None:
        super().__init__()
        self.message, self.renderer = message, renderer

    def renderable(self, view: View, live: bool = False) -> RenderableType:
        message = self.message
        if self.renderer is not None:
            try:
                shown = self.renderer(message, view.expand_tools)
            except Exception as exc:  # a broken renderer must not take the chat down
                shown = Text(f"[{message.custom_type}] renderer failed: {exc}", style="error")
            if shown is not None:
                if isinstance(shown, str):
                    shown = Text.from_ansi(shown)
                return Padding(shown, (1, 1), style="custom.box", expand=True)
        content = message.content if isinstance(message.content, str) else "\n".join(
            c.text for c in message.content if isinstance(c, TextContent))
        label = Text(f"[{message.custom_type}]", style="custom.label")
        return Padding(Group(label, Text(""), PiMarkdown(content)), (1, 1), style="custom.box", expand=True)


class SummaryBlock(Block):
    """A compaction or branch summary: a label, and the summary itself when expanded."""

    def __init__(self, label: str, note: str, summary: str) -> None:
        super().__init__()
        self.label, self.note, self.summary = label, note, summary

    def renderable(self, view: View, live: bool = False) -> RenderableType:
        parts: list[RenderableType] = [Text(self.label, style="summary.label")]
        if view.expand_tools:
            parts += [Text(""), PiMarkdown(self.summary)]
        else:
            parts.append(Text(f"{self.note} (ctrl+o to expand)", style="muted"))
        return Padding(Group(*parts), (1, 1), style="custom.box", expand=True)


def user_text(message: UserMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif getattr(block, "type", None) == "image":
            parts.append("[image]")
    return "\n".join(parts)


def blocks_for_messages(messages: list, renderers: dict[str, Renderer] | None = None) -> list[Block]:
    """The chat for a conversation that already happened (a resumed session, the branch
    after /tree, the context after a compaction)."""
    renderers = renderers or {}
    results = {m.tool_call_id: m for m in messages if getattr(m, "role", None) == "toolResult"}
    blocks: list[Block] = []
    for message in messages:
        role = getattr(message, "role", None)
        if role == "user":
            text = user_text(message)
            if text.strip():
                blocks.append(UserBlock(text))
        elif role == "assistant":
            blocks.append(AssistantBlock(message, final=True))
            for call in message.tool_calls:
                state = ToolState(call.id, call.name, call.arguments, started=True, finished=True)
                result = results.get(call.id)
                if result is not None:
                    state.content, state.details, state.is_error = result.content, result.details, result.is_error
                elif message.stop_reason in ("aborted", "error"):
                    state.content = [TextContent(text=message.error_message or "Operation aborted")]
                    state.is_error = True
                blocks.append(ToolBlock(state))
        elif role == "bashExecution":
            block = BashBlock(message.command, bool(message.exclude_from_context))
            block.finish(message)
            blocks.append(block)
        elif role == "custom":
            if message.display:
                blocks.append(CustomBlock(message, renderers.get(message.custom_type)))
        elif role == "compactionSummary":
            blocks.append(compaction_block(message))
        elif role == "branchSummary":
            blocks.append(SummaryBlock("[branch]", "Branch summary", message.summary))
    return blocks


def compaction_block(message: CompactionSummaryMessage) -> SummaryBlock:
    return SummaryBlock("[compaction]", f"Compacted from {message.tokens_before:,} tokens", message.summary)
