"""``pi --help`` names every subcommand the built-in plugins add (issue 39: a user finds
``pi serve``, ``pi connect``, ``pi mcp`` … there, not only in the docs)."""

import importlib
import subprocess

import pytest

from pi_core.app.builtins import BUILTINS

pytestmark = pytest.mark.process

#: Another name of a listed one (pi's ``uninstall`` is ``remove``).
ALIASES = {"uninstall"}


def builtin_subcommands() -> set[str]:
    names = set()
    for module in BUILTINS.values():
        register = getattr(importlib.import_module(module.partition(":")[0]), "register_cli_commands", None)
        if register is not None:
            names |= {command.name for command in register()}
    return names - ALIASES


def test_plain_help_names_every_built_in_subcommand(pi):
    shown = subprocess.run(pi.command("--help"), cwd=pi.cwd, env=pi.env, capture_output=True, text=True,
                           timeout=60)
    assert shown.returncode == 0
    epilog = " ".join(shown.stdout.split("Subcommands:", 1)[1].split())
    expected = builtin_subcommands()
    assert {"serve", "connect", "mcp", "auth", "config", "install", "batch"} <= expected
    missing = sorted(name for name in expected if f"pi {name}" not in epilog and f"|{name}" not in epilog)
    assert missing == []
