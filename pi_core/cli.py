"""The ``pi`` command line (click). Kept light at import: ``pi --help`` must be quick."""

from __future__ import annotations

import json
import os

import click

from pi_core import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-v", "--version", prog_name="pi")
def main() -> None:
    """pi: a minimal, self-extensible coding-agent harness."""


@main.command("plugins")
@click.option("-e", "--extension", "extensions", multiple=True, type=click.Path(),
              help="Also load a plugin file or package directory (repeatable).")
@click.option("--no-extensions", is_flag=True,
              help="Skip installed and user/project plugins; built-ins and -e still load.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def plugins_command(extensions: tuple[str, ...], no_extensions: bool, as_json: bool) -> None:
    """List the loaded plugins in load order, where each came from and its hooks."""
    from pi_core.discovery import load_plugins

    plugins = load_plugins(
        cwd=os.getcwd(), extension_paths=extensions, discover=not no_extensions
    )
    rows = [
        {
            "name": info.name,
            "source": info.source,
            "location": info.location,
            "distribution": info.distribution,
            "version": info.version,
            "hooks": plugins.hooks_of(info.name),
        }
        for info in plugins.infos
    ]
    errors = [str(e) for e in plugins.errors]
    if as_json:
        click.echo(json.dumps({"plugins": rows, "errors": errors}, indent=2))
        return
    for row in rows:
        origin = row["source"]
        if row["distribution"]:
            origin += f", {row['distribution']} {row['version']}"
        click.echo(f"{row['name']}  ({origin})  {row['location']}")
        click.echo(f"    hooks: {', '.join(row['hooks']) or '(none)'}")
    for error in errors:
        click.echo(f"error: {error}", err=True)


if __name__ == "__main__":
    main()
