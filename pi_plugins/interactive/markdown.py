"""Markdown as pi shows it in a terminal: rich's renderer with left-aligned headings and
fenced code kept between its fences (so a copied block still reads as Markdown)."""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.markdown import CodeBlock, Heading, ListItem, Markdown
from rich.padding import Padding
from rich.segment import Segment
from rich.syntax import Syntax
from rich.text import Text


class _Heading(Heading):
    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        text = self.text.copy()
        text.justify = "left"
        level = int(self.tag[1:]) if self.tag[1:].isdigit() else 1
        if level >= 3:
            text = Text("#" * level + " ", style=f"markdown.{self.tag}") + text
        yield text


class _CodeBlock(CodeBlock):
    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text).rstrip("\n")
        language = "" if self.lexer_name == "text" else self.lexer_name
        syntax = Syntax(code, self.lexer_name, theme=self.theme, word_wrap=True,
                        background_color="default")
        yield Group(Text("```" + language, style="markdown.fence"),
                    Padding(syntax, (0, 0, 0, 2)),
                    Text("```", style="markdown.fence"))


class _ListItem(ListItem):
    """``- item`` and ``1. item``, as written."""

    def render_bullet(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self._marked(console, options, "- ", "markdown.item.bullet")

    def render_number(self, console: Console, options: ConsoleOptions, number: int,
                      last_number: int) -> RenderResult:
        width = len(str(last_number)) + 2
        yield from self._marked(console, options, f"{number}.".ljust(width), "markdown.item.number")

    def _marked(self, console: Console, options: ConsoleOptions, marker: str, style: str) -> RenderResult:
        lines = console.render_lines(self.elements, options.update(width=options.max_width - len(marker)),
                                     style=self.style)
        marker_style = console.get_style(style, default="none")
        for index, line in enumerate(lines):
            yield Segment(marker, marker_style) if index == 0 else Segment(" " * len(marker))
            yield from line
            yield Segment.line()


class PiMarkdown(Markdown):
    elements = {**Markdown.elements, "heading_open": _Heading, "fence": _CodeBlock,
                "code_block": _CodeBlock, "list_item_open": _ListItem}

    def __init__(self, markup: str, *, style: str = "none") -> None:
        super().__init__(markup, code_theme="monokai", style=style, hyperlinks=False)
