"""``pi`` subcommands from plugins (``register_cli_commands``), like llm's
``register_commands(cli)``, but resolved lazily: a plugin names its click command by
``"module:attribute"``, and that module is imported only when the subcommand runs, so
``pi --help`` and ``pi -p`` never pay for it. The built-in ``install``, ``remove``,
``list`` and ``update`` come this way from :mod:`pi_plugins.packages`, and ``--export``
from :mod:`pi_plugins.cli_commands`.
"""

from __future__ import annotations

import asyncio
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
