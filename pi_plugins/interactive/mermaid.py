"""pi 1.6's Mermaid diagrams (``markdown.mermaid``): a ```mermaid block in a user message,
an answer or a summary is drawn as box-drawing art in place of its source.

``"streaming"`` (the default) draws it while the answer streams, ``"final"`` once the
answer is complete, ``"off"`` never. As in 1.6, the source is kept where no art can be
drawn (a kind of diagram the renderer does not know, nothing that parses, an error) and
where the art is wider than the space it would sit in. Drawn by termaid, a pure-Python
renderer of Mermaid to terminal art; its arrow heads are swapped for 1.6's (▶ ◀) and its
parts coloured with the tokens 1.6 gives them (boxes ``borderMuted``, edges ``accent``,
labels ``text``).
"""

from __future__ import annotations

import functools

from rich.text import Text

MODES = ("off", "final", "streaming")
#: The setting's value for this chat (set at start-up from ``markdown.mermaid``).
mode = "streaming"

_ARROWS = str.maketrans({"►": "▶", "◄": "◀"})
_STYLES = {"node": "border.muted", "subgraph": "border.muted", "edge": "accent", "arrow": "accent",
           "label": "markdown.text", "edge_label": "markdown.text", "bold_label": "bold",
           "italic_label": "italic", "subgraph_label": "bold accent"}


def mode_from(settings) -> str:
    """The ``markdown.mermaid`` setting, a value 1.6 does not know read as its default."""
    value = settings.get("markdown.mermaid", "streaming")
    return value if value in MODES else "streaming"


def drawn(streaming: bool) -> bool:
    """Whether diagrams are drawn in a text that is still ``streaming`` (or complete)."""
    return mode == "streaming" or (mode == "final" and not streaming)


def is_mermaid(info: str) -> bool:
    """A fence whose language (its info string's first word) is ``mermaid``, any case."""
    words = info.strip().split(None, 1)
    return bool(words) and words[0].lower() == "mermaid"


@functools.lru_cache(maxsize=64)
def _styled(source: str) -> tuple[tuple[tuple[str, str], ...], ...] | None:
    import termaid

    try:
        document = termaid.render_styled(source, padding_x=2, padding_y=0)
    except Exception:  # a source termaid chokes on keeps its text, as pi keeps one it cannot draw
        return None
    lines = tuple(tuple((chunk["text"], chunk["style"]) for chunk in line) for line in document["lines"])
    while lines and not "".join(text for text, _ in lines[-1]).strip():
        lines = lines[:-1]
    return lines or None


def diagram(source: str, width: int) -> list[Text] | None:
    """The diagram's lines, or None where the source should be shown instead (nothing
    drawn, or wider than ``width`` columns)."""
    if not source.strip():
        return None
    styled = _styled(source)
    if styled is None:
        return None
    lines = [Text.assemble(*((text.translate(_ARROWS), _STYLES.get(style, "")) for text, style in line))
             for line in styled]
    for line in lines:
        line.rstrip()
    if max(line.cell_len for line in lines) > width:
        return None
    return lines
