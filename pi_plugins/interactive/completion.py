"""Completion in the editor: ``/`` lists the slash commands (built-in, plugin commands,
prompt templates, skills); ``@`` fuzzy-finds project files; Tab completes a path.

The project's files are listed in the background (the walk ``find`` uses, so
``.gitignore`` is respected) and re-listed when ``@`` is typed after a while.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import time
from collections.abc import AsyncGenerator, Callable, Iterable
from typing import Any

from prompt_toolkit.completion import Completer, Completion
from prompt_toolkit.document import Document

log = logging.getLogger("pi.interactive")

MAX_FILES = 20_000
MAX_SHOWN = 20
STALE_AFTER = 3.0  # seconds: typing @ after this re-lists the files (in the background)


def fuzzy_score(query: str, candidate: str) -> float | None:
    """How well ``query`` matches ``candidate`` as a subsequence (higher is better), or
    None when it does not. Matches in the file name, at word starts and in runs count
    more; shorter candidates win ties."""
    if not query:
        return 0.0 - len(candidate) / 1000
    q, c = query.lower(), candidate.lower()
    name_start = c.rfind("/") + 1
    score, position, run = 0.0, 0, 0
    for ch in q:
        found = c.find(ch, position)
        if found < 0:
            return None
        if found == position and position > 0:
            run += 1
            score += 2 + run
        else:
            run = 0
        if found == 0 or c[found - 1] in "/_-. ":
            score += 3
        if found >= name_start:
            score += 1
        position = found + 1
    if q in c[name_start:]:
        score += 10
    return score - len(candidate) / 100


class FileIndex:
    """The project's files and folders, relative to ``cwd``, listed in the background.
    ``on_listed`` runs when a listing lands: the ``@`` menu asked while it ran was made
    from the old list (empty at first), so the editor asks again."""

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.paths: list[str] = []
        self.listed_at = 0.0
        self._task: asyncio.Task | None = None
        self.on_listed: Callable[[], None] | None = None

    def refresh(self) -> None:
        if self._task is not None and not self._task.done():
            return
        if time.monotonic() - self.listed_at < STALE_AFTER and self.paths:
            return
        self._task = asyncio.get_running_loop().create_task(self._list())

    async def _list(self) -> None:
        from pi_plugins.tools.environment import LocalEnvironment
        from pi_plugins.tools.walk import walk

        found: list[str] = []
        try:
            async for entry in walk(LocalEnvironment(self.cwd), self.cwd):
                found.append(entry.path + ("/" if entry.is_dir else ""))
                if len(found) >= MAX_FILES:
                    break
        except OSError:
            pass
        self.paths = found
        self.listed_at = time.monotonic()
        if self.on_listed is not None:
            self.on_listed()

    def search(self, query: str) -> list[str]:
        scored = [(s, p) for p in self.paths if (s := fuzzy_score(query, p)) is not None]
        scored.sort(key=lambda sp: (-sp[0], sp[1]))
        return [p for _, p in scored[:MAX_SHOWN]]


def _quote(path: str) -> str:
    return f'"{path}"' if " " in path else path


class EditorCompleter(Completer):
    """``commands()`` gives (name, description) pairs, names without the slash."""

    def __init__(self, commands: Callable[[], Iterable[tuple[str, str]]], files: FileIndex) -> None:
        self.commands = commands
        self.files = files

    #: Plugins' providers (``ctx.ui.add_autocomplete_provider``), each made of the one before.
    providers: list
    #: name -> the plugin command's ``argument_completions``.
    arguments: Callable[[], dict] = staticmethod(lambda: {})

    def _provided(self, document: Document, complete_event) -> Any:
        """What the plugins' providers answer (``ctx.ui.add_autocomplete_provider``), each
        made of the one before; may be awaitable (an ``async def get_suggestions``)."""
        provider: Any = _Builtin(self, complete_event)
        for make in self.providers:
            provider = make(provider) or provider
        lines = document.text.split("\n")
        where = (lines, document.cursor_position_row, document.cursor_position_col)
        if _takes_options(provider.get_suggestions):  # pi's (lines, line, col, options)
            return provider.get_suggestions(*where, {"force": bool(complete_event.completion_requested)})
        return provider.get_suggestions(*where)

    def get_completions(self, document: Document, complete_event) -> Iterable[Completion]:
        if getattr(self, "providers", None):
            found = self._provided(document, complete_event)
            if inspect.isawaitable(found):  # only get_completions_async may wait for it
                getattr(found, "close", lambda: None)()
                return
            yield from _as_completions(found)
            return
        yield from self.builtin(document, complete_event)

    async def get_completions_async(self, document: Document, complete_event) -> AsyncGenerator[Completion, None]:
        """The editor asks here: a provider's coroutine is awaited while the editor
        goes on taking keys (prompt_toolkit drops the answer if the text changed)."""
        if not getattr(self, "providers", None):
            for completion in self.builtin(document, complete_event):
                yield completion
            return
        try:
            found = self._provided(document, complete_event)
            while inspect.isawaitable(found):  # ``return current.get_suggestions(...)`` in an async one
                found = await found
        except Exception as exc:
            log.warning("an autocomplete provider failed: %s", exc)
            return
        for completion in _as_completions(found):
            yield completion

    def builtin(self, document: Document, complete_event) -> Iterable[Completion]:
        before = document.text_before_cursor
        name, space, typed = before[1:].partition(" ")
        if before.startswith("/") and space and "\n" not in before and name in self.arguments():
            try:
                offered = self.arguments()[name](typed) or []
            except Exception:
                offered = []
            yield from _as_completions({"prefix": typed, "items": offered})
            return
        if before.startswith("/") and " " not in before and "\n" not in before:
            yield from self._commands(before[1:])
            return
        word = before.split()[-1] if before and not before[-1].isspace() else ""
        if word.startswith("@"):
            self.files.refresh()
            for path in self.files.search(word[1:]):
                yield Completion("@" + _quote(path), start_position=-len(word), display=path)
            return
        if complete_event.completion_requested and word:
            yield from self._paths(word)

    def _commands(self, typed: str) -> Iterable[Completion]:
        typed = typed.lower()
        found = [(n, d) for n, d in self.commands() if n.lower().startswith(typed)]
        found += [(n, d) for n, d in self.commands()
                  if typed and typed in n.lower() and not n.lower().startswith(typed)]
        for name, description in found:
            yield Completion("/" + name, start_position=-len(typed) - 1, display="/" + name,
                             display_meta=description or "")

    def _paths(self, word: str) -> Iterable[Completion]:
        expanded = os.path.expanduser(word)
        base = expanded if os.path.isabs(expanded) else os.path.join(self.files.cwd, expanded)
        folder, prefix = os.path.split(base)
        try:
            names = sorted(os.listdir(folder or "."))
        except OSError:
            return
        typed_folder = word[: len(word) - len(prefix)]
        for name in names:
            if name.startswith(prefix) and (prefix.startswith(".") or not name.startswith(".")):
                full = os.path.join(folder, name)
                shown = typed_folder + name + ("/" if os.path.isdir(full) else "")
                yield Completion(shown, start_position=-len(word), display=name)


class _Builtin:
    """The built-in completions as a provider plugins stack theirs on (pi's ``current``):
    ``get_suggestions(lines, line, col)`` → ``{"prefix": text, "items": [...]}`` or None."""

    def __init__(self, completer: EditorCompleter, event) -> None:
        self.completer, self.event = completer, event

    def get_suggestions(self, lines: list[str], line: int, col: int, options: dict | None = None) -> dict | None:
        text = "\n".join(lines)
        position = sum(len(l) + 1 for l in lines[:line]) + col
        found = list(self.completer.builtin(Document(text, position), self.event))
        if not found:
            return None
        return {"prefix": lines[line][:col][len(lines[line][:col]) + found[0].start_position:],
                "items": [{"value": c.text, "label": c.display_text, "description": c.display_meta_text}
                          for c in found]}


def _takes_options(function: Callable) -> bool:
    """Whether a provider's ``get_suggestions`` takes pi's fourth argument, ``options``
    (``{"force": True}`` when Tab asked, not typing)."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 4 or any(p.kind == p.VAR_POSITIONAL for p in parameters)


def _as_completions(found: Any) -> Iterable[Completion]:
    if not isinstance(found, dict):
        return
    prefix = str(found.get("prefix") or "")
    for item in found.get("items") or []:
        if isinstance(item, str):
            item = {"value": item}
        value = str(item.get("value", ""))
        yield Completion(value, start_position=-len(prefix), display=str(item.get("label") or value),
                         display_meta=str(item.get("description") or ""))
