"""The language of a file from its name, for the syntax highlighting of ``read`` and
``write`` in the chat, as pi 1.6 picks it: the text after the last dot, lowercased (a
name without a dot, ``Dockerfile``, is its own extension). The languages are pygments'
names; pi 1.6's list, Dart, Nix, Groovy and Gradle among them."""

from __future__ import annotations

from rich.style import Style
from rich.syntax import Syntax
from rich.text import Span, Text

_BY_LANGUAGE = {
    "typescript": "ts tsx", "javascript": "js jsx mjs cjs", "python": "py", "ruby": "rb", "rust": "rs",
    "go": "go", "java": "java", "kotlin": "kt", "swift": "swift", "dart": "dart", "groovy": "groovy gradle",
    "nix": "nix", "c": "c h", "cpp": "cpp cc cxx hpp", "csharp": "cs", "php": "php", "bash": "sh bash zsh",
    "fish": "fish", "powershell": "ps1", "sql": "sql", "html": "html htm", "css": "css", "scss": "scss",
    "sass": "sass", "less": "less", "json": "json", "yaml": "yaml yml", "toml": "toml", "xml": "xml",
    "markdown": "md markdown", "dockerfile": "dockerfile", "makefile": "makefile", "cmake": "cmake",
    "lua": "lua", "perl": "perl", "r": "r", "scala": "scala", "clojure": "clj", "elixir": "ex exs",
    "erlang": "erl", "haskell": "hs", "ocaml": "ml", "vim": "vim", "graphql": "graphql", "protobuf": "proto",
    "hcl": "tf hcl",
}
#: Each extension pi 1.6 knows to its language.
LANGUAGES = {ext: language for language, exts in _BY_LANGUAGE.items() for ext in exts.split()}
#: The colours, as the chat's fenced code blocks have them.
CODE_THEME = "monokai"


def language_of(path: str) -> str | None:
    extension = path.rsplit(".", 1)[-1].lower()
    return LANGUAGES.get(extension) if extension else None


def highlighted(code: str, path: object) -> Text | None:
    """``code`` coloured as the language of ``path``; None for a file of no known language."""
    language = language_of(path) if isinstance(path, str) else None
    if language is None:
        return None
    text = Syntax(code, language, theme=CODE_THEME).highlight(code)
    text.rstrip()
    # the colours of the words only: the chat's background stays (the theme's is dropped)
    text.style = ""
    text.spans = [Span(span.start, span.end, _foreground(span.style)) for span in text.spans]
    return text


def _foreground(style: str | Style) -> str | Style:
    if isinstance(style, str):
        return style
    return Style(color=style.color, bold=style.bold, italic=style.italic, underline=style.underline)
