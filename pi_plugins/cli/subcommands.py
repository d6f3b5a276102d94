"""``pi`` subcommands from plugins (``register_cli_commands``), like llm's
``register_commands(cli)``, but resolved lazily: a plugin names its click command by
``"module:attribute"``, and that module is imported only when the subcommand runs, so
``pi --help`` and ``pi -p`` never pay for it. The built-in ``install``, ``remove``,
``list`` and ``update`` come this way from :mod:`pi_plugins.packages`, and ``--export``
from :mod:`pi_plugins.cli_commands`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from pi_core.protocol.shell import CliCommand


def plugin_cli_commands(cwd: str | None = None) -> dict[str, CliCommand]:
    """Every plugin's subcommands by name (plugins are loaded to ask them; their load
    problems are told by the command that runs next, not twice)."""
    import logging
    import os

    from pi_core.app.discovery import load_plugins

    logger = logging.getLogger("pi.plugins")
    level, logger.disabled = logger.disabled, True
    try:
        plugins = load_plugins(cwd=cwd or os.getcwd())
        found = asyncio.run(plugins.call("register_cli_commands", ctx=None))
    finally:
        logger.disabled = level
    return {c.name: c for c in found if isinstance(c, CliCommand)}


def find(name: str, cwd: str | None = None) -> Any | None:
    """The click command a plugin offers as ``pi NAME``, or ``None``."""
    command = plugin_cli_commands(cwd).get(name)
    return command.load() if command is not None else None


#: Words that are pi's flags, not subcommands, but are typed as one (``pi help``).
FLAG_WORDS = {"help": "pi --help", "version": "pi --version"}


def near_miss(word: str, names: Iterable[str]) -> str | None:
    """What ``pi WORD`` was probably meant to be, when WORD is not a subcommand but one
    slip from one: a letter left out, one too many, or two swapped (``serv``, ``mcpp``,
    ``instal``, ``lsit``), or ``help``/``version`` typed without their dashes. A changed
    letter does not count, so ordinary words stay prompts (``lint`` is not ``list``,
    ``remote`` not ``remove``); nor do words under three letters."""
    if word in FLAG_WORDS:
        return FLAG_WORDS[word]
    if len(word) < 3:
        return None
    for name in sorted(set(names)):
        if name != word and _one_slip(word, name):
            return f"pi {name}"
    return None


def _one_slip(a: str, b: str) -> bool:
    if abs(len(a) - len(b)) == 1:
        short, long_ = (a, b) if len(a) < len(b) else (b, a)
        return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
    return False
