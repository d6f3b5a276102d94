"""``pi config [-l]`` (pi 1.6): the package resources and built-in plugins one settings
scope loads, as pi 1.6's resource screen lists them (its headings, ``[x]``/``[ ]``, and in
the project scope ``[+]``/``[-]`` for an override and "inherited global" for none). Printed,
not a full-screen editor: a resource is switched by editing the settings file (a package
entry's filters, ``+builtin:NAME``/``-builtin:NAME`` in ``extensions``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

_KINDS = (("extensions", "Extensions"), ("skills", "Skills"), ("prompts", "Prompts"), ("themes", "Themes"))


def _builtin_switches(data: dict | None) -> dict[str, bool]:
    from pi_core.app.discovery import builtin_switch

    found: dict[str, bool] = {}
    entries = (data or {}).get("extensions")
    for entry in entries if isinstance(entries, list) else ():
        switch = builtin_switch(entry) if isinstance(entry, str) else None
        if switch is not None:
            found[switch[1]] = switch[0]
    return found


def config_lines(cwd: str, local: bool, approve: bool | None) -> list[str]:
    """The lines ``pi config`` prints for the user's scope, or the project's (``-l``)."""
    from pi_core.app.builtins import BUILTINS
    from pi_core.app.settings import Settings
    from pi_core.paths import agent_dir
    from pi_plugins.packages.configured import load

    home = agent_dir()
    settings = Settings.load(cwd, home, project_trusted=approve)
    trusted = bool(getattr(settings, "project_trusted", approve))
    resources = load(settings, home, Path(cwd), project_trusted=trusted)
    if local:
        lines = ["Project Local Resources", ".pi/settings.json · inherited global resources are dimmed", ""]
    else:
        lines = ["Global Resources", _home_relative(home / "settings.json"), ""]
    scope = "project" if local else "user"
    by_package: dict[str, list] = {}
    for resource in resources.resources:
        if resource.scope == scope or local:
            by_package.setdefault(resource.package, []).append(resource)
    for package, found in by_package.items():
        lines.append(f"  {package}")
        for kind, title in _KINDS:
            of_kind = [r for r in found if r.kind == kind]
            if of_kind:
                lines.append(f"    {title}")
                lines += [f"      [{'x' if r.enabled else ' '}] {r.relative}" for r in of_kind]
    user = _builtin_switches(getattr(settings, "global_data", None))
    project = _builtin_switches(getattr(settings, "project_data", None)) if local else {}
    lines.append("  Built-in · inherited global" if local else "  Built-in")
    lines.append("    Extensions")
    for name in BUILTINS:
        if name in project:
            lines.append(f"      [{'+' if project[name] else '-'}] {name}")
        elif local:
            lines.append(f"      [{'x' if user.get(name, True) else ' '}] {name}  inherited global")
        else:
            lines.append(f"      [{'x' if user.get(name, True) else ' '}] {name}")
    return lines + [f"warning: {p}" for p in resources.problems]


def _home_relative(path: Path) -> str:
    home = os.path.expanduser("~")
    text = str(path)
    return "~" + text[len(home):] if home and text.startswith(home + os.sep) else text


@click.command("config")
@click.option("-l", "--local", is_flag=True, help="The project's overrides (.pi/settings.json).")
@click.option("-a/-na", "--approve/--no-approve", "approve", default=None,
              help="Trust (or ignore) the project's files for this command, with -l.")
def config_command(local: bool, approve: bool | None) -> None:
    """List the package resources and built-ins the settings load (pi config)."""
    for line in config_lines(os.getcwd(), local, approve):
        click.echo(line)
    sys.exit(0)
