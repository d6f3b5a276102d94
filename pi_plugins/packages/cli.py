"""The click commands of ``pi install``, ``pi remove`` (``uninstall``), ``pi list`` and
``pi update``; imported only when one of them runs (the work is :mod:`.manage`'s)."""

from __future__ import annotations

import os
import sys

import click

_PIP_ARGS = {"ignore_unknown_options": True, "allow_interspersed_args": False,
             "help_option_names": ["-h", "--help"]}
_LOCAL_HELP = "Use the project's .pi/settings.json (plugin files only; packages share the environment)."


@click.command("install", context_settings=_PIP_ARGS)
@click.option("-l", "--local", is_flag=True, help=_LOCAL_HELP)
@click.option("--editable", is_flag=True, help="Install a project folder in editable mode (pip -e).")
@click.option("-a/-na", "--approve/--no-approve", "approve", default=None,
              help="Trust (or not) the project for this command (its .pi/settings.json packages).")
@click.argument("source")
@click.argument("pip_args", nargs=-1, type=click.UNPROCESSED)
def install_command(source: str, pip_args: tuple[str, ...], local: bool, editable: bool,
                    approve: bool | None) -> None:
    """Install a plugin package and report the plugins it adds.

    SOURCE is a PyPI requirement (pi-todo, "pi-todo>=1.2"), a path to a Python project
    or wheel, or a git+URL: installed with pip into the environment pi runs in; options
    after SOURCE go to pip (pi install ./my-plugin --no-build-isolation). Its plugins
    load on the next run.

    npm:NAME[@VERSION], git:HOST/OWNER/REPO[@REF] and git URLs (https://…, ssh://…) are
    pi packages: kept where pi keeps them and listed in settings.json "packages" (the
    project's with -l); their
    skills, prompt templates and themes load here, their TypeScript extensions do not.

    A .py file or a plugin folder without a pyproject.toml is not copied: its path is
    added to "extensions" in settings.json (global, or the project's with -l).
    """
    from pi_plugins.packages.manage import run_install

    sys.exit(run_install(source, list(pip_args), local=local, cwd=os.getcwd(), editable=editable,
                         approve=approve))


def _remove(source: str, pip_args: tuple[str, ...], local: bool, approve: bool | None = None) -> None:
    from pi_plugins.packages.manage import run_remove

    sys.exit(run_remove(source, list(pip_args), local=local, cwd=os.getcwd(), approve=approve))


@click.command("remove", context_settings=_PIP_ARGS)
@click.option("-l", "--local", is_flag=True, help=_LOCAL_HELP)
@click.option("-a/-na", "--approve/--no-approve", "approve", default=None,
              help="Trust (or not) the project for this command (its .pi/settings.json packages).")
@click.argument("source")
@click.argument("pip_args", nargs=-1, type=click.UNPROCESSED)
def remove_command(source: str, pip_args: tuple[str, ...], local: bool, approve: bool | None) -> None:
    """Uninstall a plugin package (by distribution name, plugin name or project path),
    take a plugin file out of settings.json, or remove a pi package (npm:…, git:…)."""
    _remove(source, pip_args, local, approve)


@click.command("uninstall", context_settings=_PIP_ARGS, hidden=True)
@click.option("-l", "--local", is_flag=True, help=_LOCAL_HELP)
@click.argument("source")
@click.argument("pip_args", nargs=-1, type=click.UNPROCESSED)
def uninstall_command(source: str, pip_args: tuple[str, ...], local: bool) -> None:
    """Alias for remove."""
    _remove(source, pip_args, local)


@click.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.option("-a/-na", "--approve/--no-approve", "approve", default=None,
              help="Read (or ignore) the project's .pi/settings.json for this command (project trust).")
def list_command(as_json: bool, approve: bool | None) -> None:
    """List pi packages (settings.json "packages"), the installed packages that provide
    pi plugins, and plugin files in settings."""
    from pi_plugins.packages.manage import run_list

    sys.exit(run_list(cwd=os.getcwd(), as_json=as_json, approve=approve))



@click.command("update", context_settings=_PIP_ARGS)
@click.option("--self", "self_update", is_flag=True, help="Update pi-harness (the default without a target).")
@click.option("--extensions", is_flag=True, help="Update every installed plugin package.")
@click.option("--extension", "extension", metavar="SOURCE", help="Update one plugin package (as pi update SOURCE).")
@click.option("--all", "everything", is_flag=True, help="Update pi-harness and every plugin package.")
@click.option("--models", is_flag=True, help="Refresh model catalogs only.")
@click.option("--force", is_flag=True, help="Reinstall even what is up to date.")
@click.option("-a/-na", "--approve/--no-approve", "approve", default=None,
              help="Trust (or not) the project for this command (its .pi/settings.json packages).")
@click.argument("target", required=False)
@click.argument("pip_args", nargs=-1, type=click.UNPROCESSED)
def update_command(target: str | None, pip_args: tuple[str, ...], self_update: bool, extensions: bool,
                   extension: str | None, everything: bool, models: bool, force: bool, approve: bool | None) -> None:
    """Update pi-harness (pi update, pi update self), one plugin package (pi update
    SOURCE), every plugin package (--extensions), or all of it (--all), with pip, in the
    environment pi runs in; or refresh the model catalogs (--models). Options after the
    target go to pip (--no-index --find-links DIR)."""
    from pi_plugins.packages.manage import run_update

    if models:
        sys.exit(_refresh_models(target, everything, self_update or extensions or extension is not None))

    sys.exit(run_update(extension or target, list(pip_args), self_update=self_update,
                        extensions=extensions, everything=everything, force=force,
                        cwd=os.getcwd(), approve=approve))


def _refresh_models(target: str | None, everything: bool, other_targets: bool) -> int:
    """``pi update --models`` (the providers plugin refreshes the catalogues), with pi's
    refusals of what it cannot be combined with."""
    usage = ("pi update [source|self|pi] [--self|--extensions|--models|--all] [--extension <source>] "
             "[--approve|--no-approve] [--force]")
    conflict = ("--all cannot be combined with --self, --extensions, --models, or --extension" if everything
                else "--models cannot be combined with --self, --extensions, --all, or --extension" if other_targets
                else "--models cannot be combined with a positional source" if target else None)
    if conflict:
        click.echo(conflict, err=True)
        click.echo(f"Usage: {usage}", err=True)
        return 1
    from pi_core.paths import agent_dir
    from pi_plugins.providers.catalogue_refresh import run

    return run(agent_dir(), os.environ)
