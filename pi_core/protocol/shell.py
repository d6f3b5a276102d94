"""What the hook specs name of the application around the core (output modes, ``pi`` subcommands, settings,
checkpoints): only their shape; the shell and plugins implement them."""

from __future__ import annotations

import builtins
import importlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from pi_core.protocol.records import record


@record
class Mode:
    """An output mode (``register_modes``): ``run(app)`` returns the process exit code;
    ``app`` is the command line's :class:`pi_plugins.cli.app.App`."""

    name: str
    run: Callable[[Any], Awaitable[int]]
    description: str = ""


@record(frozen=True)
class CliCommand:
    """A subcommand (``register_cli_commands``): ``pi NAME ...`` runs the click command
    at ``target``, which is imported only when the subcommand runs."""

    name: str
    target: str  # "package.module:click_command"
    help: str = ""
    hidden: bool = False

    def load(self) -> Any:
        module, _, attribute = self.target.partition(":")
        if not attribute:
            raise ValueError(f"CliCommand {self.name!r}: target must be 'module:attribute', not {self.target!r}")
        command = getattr(importlib.import_module(module), attribute)
        if not hasattr(command, "main"):
            raise TypeError(f"CliCommand {self.name!r}: {self.target} is not a click command")
        return command


class Settings(Protocol):
    """settings.json, global and project merged (:class:`pi_core.app.settings.Settings`)."""

    def get(self, key: str, default: Any = None) -> Any:
        """The value of a dotted ``key`` (``"compaction.reserveTokens"``), else ``default``."""

    def remember(self, key: str, value: Any) -> None:
        """Store ``key`` in the global settings file (what the user chose last)."""

    def set(self, key: str, value: Any) -> None:
        """Change ``key`` for this run only, never saved."""

    def paths(self, key: str) -> list[Path]:
        """The paths a list-valued ``key`` names, each resolved against its own file."""


class Checkpointer(Protocol):
    """The workspace's checkpoints (``workspace_checkpoints``; the built-in is
    :class:`pi_plugins.checkpoints.Checkpointer`)."""

    def list(self) -> list[Any]:
        """The checkpoints of the current branch, oldest first."""

    async def plan(self, entry_id: str) -> builtins.list[str]:  # list: the method above
        """The files a restore to ``entry_id`` would change."""

    async def restore(self, entry_id: str) -> Any:
        """Bring the workspace back to what it was at ``entry_id``."""


class NoSettings:
    """The settings of a harness composed without settings.json: every key unset but
    those :meth:`set` for this run. The core never reads the disk for settings; the
    shell passes the merged files."""

    def __init__(self) -> None:
        self.run_data: dict[str, Any] = {}

    def get(self, key: str, default: Any = None) -> Any:
        return self.run_data.get(key, default)

    def set(self, key: str, value: Any) -> None:
        self.run_data[key] = value

    def remember(self, key: str, value: Any) -> None:
        pass

    def paths(self, key: str) -> list[Path]:
        return []
