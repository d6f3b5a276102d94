"""The pieces of the chat: a user message, an assistant message, a tool call, the user's
shell command, a plugin's message, a summary, a status line.

A block paints itself at a width (as ANSI lines, see :mod:`paint`), starting with the
blank line that separates it from the one above; painting is cached until the block
changes or the view does (tool output expanded, thinking hidden). A block is ``final``
once nothing about it will change; final blocks at the head of the chat go to the
terminal's scrollback.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from attrs import define, frozen
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.rule import Rule
from rich.text import Text

from pi_core.protocol.messages import (
    AssistantMessage,
    BashExecutionMessage,
    CompactionSummaryMessage,
    CustomMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    UserMessage,
)
from pi_plugins.interactive import mermaid, render_hooks, tool_views
from pi_plugins.interactive.markdown import PiMarkdown
from pi_plugins.interactive.paint import Painter, strip_ansi
from pi_plugins.interactive.tool_views import BASH_PREVIEW_LINES, ToolState, call_title, result_body

#: A streaming text is painted from a paragraph break near its end: only its end fits in
#: the live area, and painting all of it on every delta would cost quadratic time over a
#: long answer. The tail holds at least this many characters or source lines (a screen's
#: worth); the whole text is painted once, when it is final.
STREAM_TAIL_CHARS = 2500
STREAM_TAIL_LINES = 60


@frozen
class View:
    """Display switches that change how blocks look (Ctrl+O and Ctrl+T)."""

    expand_tools: bool = False
    hide_thinking: bool = False
    #: What stands for hidden thinking (``ctx.ui.set_hidden_thinking_label``).
    thinking_label: str = "Thinking..."
    #: pi 1.6's ``outputPad``: the columns left and right of messages, tool output,
    #: ``!`` output and summaries (0 or 1).
    pad: int = 1


def output_pad(settings) -> int:
    """pi 1.6's ``outputPad`` setting: 0, else 1 (its default, and for any other value)."""
    return 0 if settings.get("outputPad") == 0 else 1


class Block:
    final: bool = True

    def __init__(self) -> None:
        self.version = 0
        self._cache: tuple | None = None

    def changed(self) -> None:
        self.version += 1

    def renderable(self, view: View, live: bool = False) -> RenderableType | None:
        raise NotImplementedError

    def images(self) -> list:
        """The images this block holds, drawn under it in the scrollback where the terminal can."""
        return []

    def lines(self, painter: Painter, width: int, view: View, live: bool = False) -> list[str]:
        key = (self.version, width, view, live, painter)  # another painter: another theme
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        renderable = self.renderable(view, live)
        lines = [""] + painter.lines(renderable, width) if renderable is not None else []
        self._cache = (key, lines)
        return lines


def _markdown(text: str, style: str = "none", pad: int = 1, diagrams: bool = False) -> RenderableType:
    return Padding(PiMarkdown(text, style=style, diagrams=diagrams), (0, pad))


_FENCE = re.compile(r"^[ \t]*(```|~~~)(.*)$", re.M)
_BREAK = re.compile(r"^[ \t]*$|^[ \t]*(```|~~~)", re.M)


class FenceState:
    """Whether a growing text is inside a code fence at some point, found by scanning
    only what was added since the last question (streamed text only grows)."""

    def __init__(self) -> None:
        self.position = 0
        self.open: str | None = None

    def at(self, text: str, position: int) -> str | None:
        if position < self.position or len(text) < self.position:
            self.position, self.open = 0, None
        for match in _FENCE.finditer(text, self.position, position):
            self.open = None if self.open is not None else "".join(match.groups()).strip()
        self.position = position
        return self.open


def stream_tail(text: str, budget: int = STREAM_TAIL_CHARS, max_lines: int = STREAM_TAIL_LINES,
                fences: FenceState | None = None) -> str:
    """The end of a Markdown text from the first paragraph break that leaves at most about
    ``budget`` characters or ``max_lines`` lines after it, with a code fence re-opened if
    the cut falls inside one. With a :class:`FenceState` kept between calls on a growing
    text, each call costs the tail and what was added, not the whole text."""
    if len(text) <= budget and text.count("\n") < max_lines:
        return text
    start, lines = len(text), 0  # walk back over whole lines until the tail is big enough
    while start > 0 and len(text) - start < budget and lines < max_lines:
        start = text.rfind("\n", 0, start - 1) + 1 if start > 1 else 0
        lines += 1
    fence = (fences or FenceState()).at(text, start)
    if fence is not None:  # inside a code block: cut right here, re-opening it
        return f"{fence}\n{text[start:]}"
    # outside one: cut at the next blank line (or fence) so a paragraph stays whole
    match = _BREAK.search(text, start)
    if match is None or match.start() >= len(text):
        return text[start:]
    return text[match.start():].lstrip("\n")


class TextBlock(Block):
    """A line or two of status, information, a warning or an error."""

    def __init__(self, text: str, style: str = "dim") -> None:
        super().__init__()
        self.text, self.style = text, style

    def renderable(self, view: View, live: bool = False) -> RenderableType:
        return Padding(Text(self.text, style=self.style), (0, view.pad))


class HeaderBlock(Block):
    def __init__(self, title: str | None, hints: list[tuple[str, str]], notes: Sequence[str] = (),
                 sections: Sequence[tuple[str, list[str]]] = (),
                 problems: Sequence[tuple[str, list[tuple[str, str]]]] = ()) -> None:
        super().__init__()
        self.title, self.hints, self.notes = title, hints, list(notes)
        #: What was loaded, pi's "[Context]", "[Skills]", "[Prompts]", "[Extensions]", "[Themes]".
        self.sections = list(sections)
        #: What was wrong with it, pi's "[Skill conflicts]", "[Prompt conflicts]": (text, style) lines.
        self.problems = list(problems)

    def renderable(self, view: View, live: bool = False) -> RenderableType | None:
        if self.title is None:  # quietStartup: only what went wrong
            notes = [*problem_lines(self.problems), *(Text(note, style="warning") for note in self.notes)]
            return Padding(Group(*notes), (0, view.pad)) if notes else None
        hint = Text()
        for index, (key, what) in enumerate(self.hints):
            if index:
                hint.append(" · ", style="muted")
            hint.append(key, style="dim")
            hint.append(f" {what}", style="muted")
        parts = [Text(self.title, style="bold accent"), hint]
        for name, items in self.sections:
            parts += [Text(""), Text(f"[{name}]", style="accent"), Text("  " + ", ".join(items), style="dim")]
        if self.problems:
            parts += [Text(""), *problem_lines(self.problems)]
        parts += [Text(note, style="warning") for note in self.notes]
        return Padding(Group(*parts), (0, view.pad))


def problem_lines(sections: Sequence[tuple[str, list[tuple[str, str]]]]) -> list[Text]:
    """pi's problem sections: a "[Skill conflicts]" heading and its lines, a blank line between."""
    lines: list[Text] = []
    for index, (heading, entries) in enumerate(sections):
        if index:
            lines.append(Text(""))
        lines.append(Text(f"[{heading}]", style="warning"))
        lines += [Text(text, style=style) for text, style in entries]
    return lines


class ProblemsBlock(Block):
    """The problem sections again after ``/reload``."""

    def __init__(self, sections: Sequence[tuple[str, list[tuple[str, str]]]]) -> None:
        super().__init__()
        self.sections = list(sections)

    def renderable(self, view: View, live: bool = False) -> RenderableType | None:
        return Padding(Group(*problem_lines(self.sections)), (0, 1)) if self.sections else None


class UserBlock(Block):
    def __init__(self, text: str, images: list | None = None) -> None:
        super().__init__()
        self.text = text
        self._images = list(images or [])

    def images(self) -> list:
        return self._images

    def renderable(self, view: View, live: bool = False) -> RenderableType:
        return Padding(PiMarkdown(render_hooks.transformed(self.text.strip(), "user"), box_style="user.box",
                                  diagrams=mermaid.drawn(False)),
                       (1, view.pad), style="user.box",
                       expand=True)


def split_paragraphs(text: str) -> list[str]:
    """Top-level Markdown blocks: the text split at blank lines outside code fences."""
    chunks: list[str] = []
    current: list[str] = []
    fence = None
    for line in text.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith("```") or stripped.startswith("~~~"):
            fence = None if fence is not None else stripped
        if fence is None and not line.strip():
            if current:
                chunks.append("\n".join(current))
                current = []
            continue
        current.append(line)
    if current:
        chunks.append("\n".join(current))
    return chunks


def _trimmed(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and not strip_ansi(lines[start]).strip():
        start += 1
    while end > start and not strip_ansi(lines[end - 1]).strip():
        end -= 1
    return lines[start:end]


class AssistantBlock(Block):
    """An assistant message, streaming until ``final``. Its tool calls are blocks of
    their own; this one shows text, thinking (dimmed, or one line when hidden) and how
    the message ended if it ended badly.

    While it streams, only the end of each text is painted, paragraph by paragraph, and
    a paragraph already painted is not painted again: a frame costs about one paragraph,
    however long the answer. The finished message is painted whole, once."""

    def __init__(self, message: AssistantMessage, final: bool = False) -> None:
        super().__init__()
        self.message = message
        self.final = final
        self._paragraphs: dict[tuple[str, str, int], list[str]] = {}
        self._fences: dict[int, FenceState] = {}

    def _visible(self) -> list:
        return [c for c in self.message.content
                if (isinstance(c, TextContent) and c.text.strip())
                or (isinstance(c, ThinkingContent) and c.thinking.strip())]

    def ending(self) -> Text | None:
        message = self.message
        if any(isinstance(c, ToolCall) for c in message.content):
            return None
        if message.stop_reason == "aborted":
            return Text(message.error_message if message.error_message
                        and message.error_message != "Request was aborted" else "Operation aborted", style="error")
        if message.stop_reason == "error":
            return Text(f"Error: {message.error_message or 'Unknown error'}", style="error")
        return None

    def renderable(self, view: View, live: bool = False) -> RenderableType | None:
        parts: list[RenderableType] = []
        for index, content in enumerate(self._visible()):
            if index:
                parts.append(Text(""))
            if isinstance(content, ThinkingContent):
                if view.hide_thinking:
                    parts.append(Padding(Text(view.thinking_label, style="thinking"), (0, view.pad)))
                else:
                    thinking = render_hooks.transformed(content.thinking.strip(), "assistant-thinking", live)
                    parts.append(_markdown(thinking, "thinking", view.pad))
            else:
                parts.append(_markdown(render_hooks.transformed(content.text.strip(), "assistant", live),
                                       pad=view.pad, diagrams=mermaid.drawn(not self.final)))
        ending = self.ending()
        if ending is not None:
            if parts:
                parts.append(Text(""))
            parts.append(Padding(ending, (0, view.pad)))
        return Group(*parts) if parts else None

    def lines(self, painter: Painter, width: int, view: View, live: bool = False) -> list[str]:
        if not live:
            return super().lines(painter, width, view)
        out: list[str] = []
        used: dict[tuple[str, str, int], list[str]] = {}
        for index, content in enumerate(self.message.content):
            if isinstance(content, ThinkingContent):
                thinking, text = True, content.thinking
            elif isinstance(content, TextContent):
                thinking, text = False, content.text
            else:
                continue
            if not text.strip():
                continue
            if thinking and view.hide_thinking:
                out += ["", *painter.lines(Padding(Text(view.thinking_label, style="thinking"), (0, view.pad)), width)]
                continue
            style = "thinking" if thinking else self.text_style()
            text = render_hooks.transformed(text, "assistant-thinking" if thinking else "assistant", True)
            tail = stream_tail(text, fences=self._fences.setdefault(index, FenceState()))
            for chunk in split_paragraphs(tail.strip()):
                key = (chunk, style, width)
                painted = self._paragraphs.get(key)
                if painted is None:
                    painted = paint_paragraph(chunk, style, painter, width, view)[1:]
                used[key] = painted
                out += ["", *painted]
        self._paragraphs = used
        ending = self.ending()
        if ending is not None:
            out += ["", *painter.lines(Padding(ending, (0, view.pad)), width)]
        return out

    def text_style(self) -> str:
        """The answer's text paragraphs: ``"none"``, or ``"plain"`` while Mermaid diagrams
        wait for the answer to complete (``markdown.mermaid: "final"``)."""
        return "none" if mermaid.drawn(not self.final) else "plain"

    def paragraphs(self, view: View) -> list[tuple[str, str]]:
        """The message as (Markdown, style) paragraphs that paint on their own (with
        :func:`paint_paragraph`) into what the live painting shows: the fullscreen
        transcript paints a long answer a screen at a time. The ending, if any, is
        ``(text, "error")``; hidden thinking is its label with the style ``"label"``."""
        out: list[tuple[str, str]] = []
        for content in self._visible():
            if isinstance(content, ThinkingContent):
                if view.hide_thinking:
                    out.append((view.thinking_label, "label"))
                else:
                    thinking = render_hooks.transformed(content.thinking.strip(), "assistant-thinking")
                    out += [(chunk, "thinking") for chunk in split_paragraphs(thinking)]
            else:
                text = render_hooks.transformed(content.text.strip(), "assistant", not self.final)
                out += [(chunk, self.text_style()) for chunk in split_paragraphs(text)]
        ending = self.ending()
        if ending is not None:
            out.append((ending.plain, "error"))
        return out


def paint_paragraph(text: str, style: str, painter: Painter, width: int, view: View) -> list[str]:
    """One of :meth:`AssistantBlock.paragraphs`, painted: a blank line, then its lines."""
    if style == "label":
        return ["", *painter.lines(Padding(Text(text, style="thinking"), (0, view.pad)), width)]
    if style == "error":
        return ["", *painter.lines(Padding(Text(text, style="error"), (0, view.pad)), width)]
    if style == "plain":
        markdown = PiMarkdown(text)
    else:
        markdown = PiMarkdown(text, style=style, diagrams=style == "none" and mermaid.drawn(False))
    return ["", *_trimmed(painter.lines(Padding(markdown, (0, view.pad)), width))]


@define(frozen=True)
class RenderOptions:
    """What ``render_result`` is told: the output expanded (Ctrl+O), or still partial."""

    expanded: bool = False
    is_partial: bool = False


class ToolBlock(Block):
    """A tool call: its title while the arguments stream, then its (partial) result."""

    def __init__(self, state: ToolState) -> None:
        super().__init__()
        self.state = state

    @property
    def final(self) -> bool:  # type: ignore[override]
        return self.state.finished

    #: The theme handed to tools' ``render_call`` / ``render_result`` (the chat sets it).
    theme: Any = None

    def images(self) -> list:
        return [c for c in self.state.content or [] if getattr(c, "type", None) == "image"]

    def renderable(self, view: View, live: bool = False) -> RenderableType:
        state = self.state
        box = ("tool.error" if state.is_error else "tool.success") if state.finished else "tool.pending"
        title: RenderableType = self._drawn("render_call", state.args) or call_title(state)
        body = None
        if state.content is not None:
            from pi_core.protocol.tools import ToolResult

            result = ToolResult(content=list(state.content), details=state.details, is_error=state.is_error)
            body = self._drawn("render_result", result, RenderOptions(view.expand_tools, not state.finished))
        if body is None:
            body = result_body(state, view.expand_tools)
            if (timer := tool_views.timer_text(state) if state.content is not None else None) is not None:
                body = Group(*([body, Text("")] if body is not None else []), Text(timer, style="muted"))
        inner = Group(title, Text(""), body) if body is not None else title
        return Padding(inner, (1, view.pad), style=box, expand=True)

    def lines(self, painter: Painter, width: int, view: View, live: bool = False) -> list[str]:
        if not self.state.finished and (shown := tool_views.timer_text(self.state)) != getattr(self, "_timer", None):
            self._timer = shown  # a running row's timer counts on: drawn again when it moves
            self.changed()
        return super().lines(painter, width, view, live)

    def _drawn(self, slot: str, *args: Any) -> RenderableType | None:
        """A plugin's drawing of the call or result (see :mod:`render_hooks`), or None for ours."""
        self.render_state: dict = getattr(self, "render_state", {})
        return render_hooks.tool_drawn(self.state, slot, self.render_state, self.theme, *args)


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
            return Padding(Group(*parts), (0, view.pad))
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
        return Padding(Group(*parts), (0, view.pad))


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
                return Padding(shown, (1, view.pad), style="custom.box", expand=True)
        content = message.content if isinstance(message.content, str) else "\n".join(
            c.text for c in message.content if isinstance(c, TextContent))
        label = Text(f"[{message.custom_type}]", style="custom.label")
        shown = PiMarkdown(render_hooks.transformed(content, "custom"))
        return Padding(Group(label, Text(""), shown), (1, view.pad), style="custom.box", expand=True)


class SummaryBlock(Block):
    """A compaction or branch summary: a label, and the summary itself when expanded."""

    def __init__(self, label: str, note: str, summary: str) -> None:
        super().__init__()
        self.label, self.note, self.summary = label, note, summary

    def renderable(self, view: View, live: bool = False) -> RenderableType:
        parts: list[RenderableType] = [Text(self.label, style="summary.label")]
        if view.expand_tools:
            parts += [Text(""), PiMarkdown(render_hooks.transformed(self.summary, "summary"), diagrams=mermaid.drawn(False))]
        else:
            parts.append(Text(f"{self.note} (ctrl+o to expand)", style="muted"))
        return Padding(Group(*parts), (1, view.pad), style="custom.box", expand=True)


class ComponentBlock(Block):
    """A plugin's component in the chat (a header from ``ctx.ui.set_header``)."""

    def __init__(self, component: Any) -> None:
        super().__init__()
        self.component = component

    def lines(self, painter: Painter, width: int, view: View, live: bool = False) -> list[str]:
        from pi_plugins.interactive.components import component_lines

        return component_lines(self.component, width)


class NoticeBlock(Block):
    """A titled piece of Markdown between two rules (the changelog's "What's New")."""

    def __init__(self, title: str | None, text: str) -> None:
        super().__init__()
        self.title, self.text = title, text

    def renderable(self, view: View, live: bool = False) -> RenderableType:
        parts: list[RenderableType] = [Rule(style="border")]
        if self.title:
            parts += [Padding(Text(self.title, style="bold accent"), (0, view.pad)), Text("")]
        parts += [_markdown(render_hooks.transformed(self.text, "changelog"), pad=view.pad), Rule(style="border")]
        return Group(*parts)


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


def blocks_for_messages(messages: list, renderers: dict[str, Renderer] | None = None,
                        tools: dict | None = None) -> list[Block]:
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
                state = ToolState(call.id, call.name, call.arguments, started=True, finished=True,
                                  tool=(tools or {}).get(call.name))
                result = results.get(call.id)
                if result is not None:
                    state.content, state.details, state.is_error = result.content, result.details, result.is_error
                    state.duration_ms = result.duration_ms
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
