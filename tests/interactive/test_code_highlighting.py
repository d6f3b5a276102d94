"""pi 1.6 colours what ``read`` shows and what ``write`` wrote by the file's language,
Dart, Nix, Groovy and Gradle files among them; a file of no known language stays plain."""

from __future__ import annotations

import re

import pytest

from pi_core.protocol.messages import TextContent
from pi_plugins.interactive.blocks import ToolBlock, View
from pi_plugins.interactive.code_languages import language_of
from pi_plugins.interactive.paint import Painter, strip_ansi
from pi_plugins.interactive.tool_views import ToolState

SOURCES = {
    "main.dart": ("void main() {\n  final greeting = 'hi';\n}\n", "final"),
    "flake.nix": ("{ pkgs }:\nlet name = \"x\"; in pkgs.hello\n", "let"),
    "Build.groovy": ("def greet(String who) {\n  return \"hi ${who}\"\n}\n", "def"),
    "build.gradle": ("plugins {\n  id 'java'\n}\ndef version = '1.0'\n", "def"),
}


@pytest.fixture
def painter():
    from rich.style import Style

    from pi_plugins.interactive.themes import dark

    Style.parse.cache_clear()
    dark().apply()
    return Painter("truecolor")


def _colours_of(line: str, word: str) -> set[str]:
    """The SGR codes in force where ``word`` starts on ``line``."""
    at = strip_ansi(line).index(word)
    codes, seen = [], 0
    for piece in re.split(r"(\x1b\[[0-9;]*m)", line):
        if piece.startswith("\x1b["):
            codes.append(piece)
        elif seen + len(piece) > at:
            break
        else:
            seen += len(piece)
    return set(codes)


def _line_with(lines: list[str], word: str) -> str:
    return next(line for line in lines if re.search(rf"\b{word}\b", strip_ansi(line)))


@pytest.mark.parametrize("name", sorted(SOURCES))
@pytest.mark.parametrize("tool", ["read", "write"])
def test_read_and_write_colour_dart_nix_groovy_and_gradle_keywords(painter, tool, name):
    code, keyword = SOURCES[name]
    if tool == "read":
        state = ToolState("c1", "read", {"path": name}, finished=True, content=[TextContent(text=code)])
    else:
        state = ToolState("c1", "write", {"path": name, "content": code}, finished=True,
                          content=[TextContent(text="Wrote it")])
    coloured = ToolBlock(state).lines(painter, 80, View(), False)
    plain = ToolState("c1", tool, {"path": "notes.txt", **({"content": code} if tool == "write" else {})},
                      finished=True, content=[TextContent(text=code if tool == "read" else "Wrote it")])
    uncoloured = ToolBlock(plain).lines(painter, 80, View(), False)
    words = [strip_ansi(line).replace(name, "notes.txt").rstrip() for line in coloured]
    assert words == [strip_ansi(line).rstrip() for line in uncoloured]  # the same words, the same lines
    assert _colours_of(_line_with(coloured, keyword), keyword) != _colours_of(_line_with(uncoloured, keyword), keyword)


def test_the_language_comes_from_the_last_extension_as_pi16_picks_it():
    assert [language_of(p) for p in ("a/b.DART", "x.nix", "y.groovy", "build.gradle", "Dockerfile", "a.txt")] == [
        "dart", "nix", "groovy", "groovy", "dockerfile", None]
