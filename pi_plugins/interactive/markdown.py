"""Markdown as pi shows it in a terminal: rich's renderer with left-aligned headings,
fenced code kept between its fences (so a copied block still reads as Markdown), line
breaks kept as written (``line one⏎line two`` stays two lines, as in pi), and code on
the background of the box it sits in (a user message's code keeps the message's colour)."""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, Heading, ListItem, Markdown
from rich.segment import Segment
from rich.syntax import Syntax
from rich.text import Text

from pi_plugins.interactive import mermaid

#: What each line of a fenced code block starts with (settings ``markdown.codeBlockIndent``).
code_block_indent = "  "


class _Heading(Heading):
    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        text = self.text.copy()
        text.justify = "left"
        level = int(self.tag[1:]) if self.tag[1:].isdigit() else 1
        if level >= 3:
            text = Text("#" * level + " ", style=f"markdown.{self.tag}") + text
        yield text


class _CodeBlock(CodeBlock):
    box_style: str | None = None  # the markdown's box_style, given at create
    diagrams = False  # the markdown's diagrams, given at create

    @classmethod
    def create(cls, markdown, token) -> _CodeBlock:
        block = super().create(markdown, token)
        assert isinstance(block, _CodeBlock)  # made by cls
        block.box_style = getattr(markdown, "box_style", None)
        block.diagrams = getattr(markdown, "diagrams", False)
        return block

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text).rstrip("\n")
        if self.diagrams and mermaid.is_mermaid(self.lexer_name):
            art = mermaid.diagram(code, options.max_width)
            if art is not None:
                for row in art:
                    if self.box_style:
                        row.stylize_before(console.get_style(self.box_style, default="none"))
                    yield row
                return
        language = "" if self.lexer_name == "text" else self.lexer_name
        background = "default"
        box_style = self.box_style
        if box_style:
            color = console.get_style(box_style, default="none").bgcolor
            if color is not None:
                background = color.name if not color.triplet else color.triplet.hex
        indent = code_block_indent
        width = max(options.max_width - len(indent), 1)
        syntax = Syntax(code, self.lexer_name, theme=self.theme, word_wrap=not _fits(code, width),
                        background_color=background)
        yield Text("```" + language, style="markdown.fence")
        box = console.get_style(box_style, default="none") if box_style else None
        lines = console.render_lines(syntax, options.update(width=width), style=box, pad=False)
        for line in lines:
            yield Segment(indent, box)
            yield from line
            yield Segment.line()
        yield Text("```", style="markdown.fence")


def _fits(code: str, width: int) -> bool:
    """Whether no line of ``code`` needs wrapping at ``width``: then rich paints the code
    in one pass (``word_wrap=False``) to the same lines, instead of wrapping each line
    on its own (a third of a code block's painting)."""
    return "\t" not in code and all(cell_len(line) <= width for line in code.split("\n"))


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

    def __init__(self, markup: str, *, style: str = "none", box_style: str | None = None,
                 diagrams: bool = False) -> None:
        #: The style of the box around (``user.box``): code blocks take its background.
        self.box_style = box_style
        #: Whether ```mermaid blocks are drawn as diagrams (:mod:`.mermaid`).
        self.diagrams = diagrams
        super().__init__(markup, code_theme="monokai", style=style, hyperlinks=False)
        _keep_line_breaks(self.parsed)


def _keep_line_breaks(tokens) -> None:
    """A single newline inside a paragraph is a line break, as pi shows it (CommonMark
    would join the lines)."""
    for token in tokens:
        if token.type == "softbreak":
            token.type = "hardbreak"
        if token.children:
            _keep_line_breaks(token.children)
