"""Batches of agents (``pi batch``): many independent prompts, each its own agent and
session, run a bounded number at a time in one event loop (:mod:`.runner`) or on Ray
(:mod:`.ray`). The plugin adds the subcommand; its modules load only when it runs."""

from pi_core import hookimpl
from pi_core.protocol.shell import CliCommand


@hookimpl
def register_cli_commands():
    return [CliCommand("batch", "pi_plugins.batch.cli:batch_command", "Run a batch of agents")]
