"""The built-in ``pi export`` subcommand (``register_cli_commands``; ``pi --export FILE
[OUT]``). Its click command is imported only when it runs. ``pi install``, ``remove``,
``list`` and ``update`` are the ``packages`` plugin's (:mod:`pi_plugins.packages`)."""

from __future__ import annotations

import sys

import click

from pi_core import hookimpl
from pi_core.protocol.shell import CliCommand

HERE = __name__


@hookimpl
def register_cli_commands():
    return [
        CliCommand("export", f"{HERE}:export_command", "Export a session file to HTML", hidden=True),
    ]


@click.command("export")
@click.argument("source")
@click.argument("output", required=False)
def export_command(source: str, output: str | None) -> None:
    """Export a session file to HTML (pi --export FILE [OUT])."""
    from pi_plugins.export_html import export_html

    try:
        written = export_html(source, output)
    except (OSError, ValueError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    click.echo(f"Exported to: {written}")  # pi's wording, which scripts may read
