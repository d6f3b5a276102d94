"""``pi config [-l]`` (pi 1.6): the package resources and built-in plugins one settings
scope loads, as pi 1.6's resource screen lists them (its headings, ``[x]``/``[ ]``, and in
the project scope ``[+]``/``[-]`` for an override and "inherited global" for none). Printed,
not a full-screen editor: a resource is switched by editing the settings file (a package
entry's filters, ``+builtin:NAME``/``-builtin:NAME`` in ``extensions``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

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


UNTRUSTED = "Project is not trusted. Use --approve to modify local resource config."


def display_name(resource: Any) -> str:
    """How pi 1.6's resource screen names a file: a skill by its folder, an extension
    with its folder (unless that is ``extensions``), anything else by its file name."""
    path = resource.path
    if resource.kind == "extensions" and path.parent.name != "extensions":
        return f"{path.parent.name}/{path.name}"
    if resource.kind == "skills" and path.name == "SKILL.md":
        return path.parent.name
    return path.name


def _project_entry(resource: Any, project_packages: list) -> dict | None:
    """The project's object entry for the package ``resource`` comes from."""
    from pi_plugins.packages import sources

    for package in project_packages:
        if package.filter is not None and sources.source_string(package.entry) is not None \
                and package.source == sources.parse_source(resource.package):
            return package.filter
    return None


def override_state(resource: Any, project_packages: list) -> str:
    """``load``, ``unload`` or ``inherit``: what the project's entry of the package says
    of this file (pi 1.6's getProjectOverrideState)."""
    entry = _project_entry(resource, project_packages)
    patterns = entry.get(resource.kind) if entry is not None else None
    if entry is None or not isinstance(patterns, list):
        return "inherit"
    if not patterns and entry.get("autoload") is not False:
        return "unload"
    state = "inherit"
    relative = resource.relative.replace(os.sep, "/")
    for pattern in patterns:
        if isinstance(pattern, str) and pattern.lstrip("+-!") == relative:
            state = "unload" if pattern[:1] in ("-", "!") else "load"
    return state


def package_lines(resources: Any, local: bool, inherited: set) -> list[str]:
    """The package groups of pi 1.6's resource screen: ``SOURCE (scope)``, user before
    project then by source, each type's files by name; in the project scope the user's
    marked "inherited global" and the project's overrides as ``[+]``/``[-]``."""
    groups: dict[tuple[str, str], list] = {}
    for resource in resources.resources:
        groups.setdefault((resource.scope, resource.package), []).append(resource)
    project_packages = [p for p in resources.packages if p.scope == "project"]
    lines = []
    for scope, package in sorted(groups, key=lambda key: (key[0] != "user", key[1].casefold())):
        found = groups[(scope, package)]
        from_user = local and scope == "user"
        lines.append(f"  {package} ({scope})" + (" · inherited global" if from_user else ""))
        for kind, title in _KINDS:
            of_kind = sorted((r for r in found if r.kind == kind), key=lambda r: display_name(r).casefold())
            if of_kind:
                lines.append(f"    {title}")
            for resource in of_kind:
                box, suffix = f"[{'x' if resource.enabled else ' '}]", ""
                if local:
                    state = override_state(resource, project_packages)
                    if state != "inherit":
                        box, suffix = ("[+]", "  project load") if state == "load" else ("[-]", "  project unload")
                    elif scope == "user" or (resource.kind, resource.path) in inherited:
                        suffix = "  inherited global"
                lines.append(f"      {box} {display_name(resource)}{suffix}")
    return lines


def config_lines(cwd: str, local: bool, approve: bool | None) -> list[str]:
    """The lines ``pi config`` prints for the user's scope, or the project's (``-l``):
    the packages' resources as pi 1.6 lists them, then the user's own folders, the
    built-in plugins, the paths settings.json lists, and (``-l``) the project's own."""
    from pi_core.app.settings import Settings
    from pi_core.paths import agent_dir
    from pi_plugins.packages.configured import load

    home, here = agent_dir(), Path(cwd)
    global_settings = Settings.load(cwd, home, project_trusted=False)
    global_resources = load(global_settings, home, here, project_trusted=False)
    settings, resources = global_settings, global_resources
    if local:
        settings = Settings.load(cwd, home, project_trusted=approve)
        resources = load(settings, home, here, project_trusted=True)
        lines = ["Project Local Resources", ".pi/settings.json · inherited global resources are dimmed", ""]
    else:
        lines = ["Global Resources", "~/.pi/agent/settings.json", ""]
    inherited = {(r.kind, r.path) for r in global_resources.resources}
    lines += package_lines(resources, local, inherited)
    from functools import partial

    from pi_plugins.packages import own_resources as mine

    own = mine.own_groups(settings, home, here, project=local)
    overrides, users = None, set()
    if local:  # the project's [+]/[-] on your own files, and which of them are the user's
        overrides = partial(mine.override_state, project_data=getattr(settings, "project_data", None),
                            project_base=here / ".pi")
        users = mine.inherited_files(mine.own_groups(global_settings, home, here, project=False))
    # pi 1.6's order: your folders, the built-ins, your settings' paths, the project's
    # folders, the built-ins the project switches, the project settings' paths
    for place in (("user", "auto"), "builtin", ("user", "settings"), ("project", "auto"), "project builtin",
                  ("project", "settings")):
        if place == "builtin":
            lines += builtin_lines(settings, local)
        elif place == "project builtin":
            lines += builtin_override_lines(settings) if local else []
        else:
            for group in (g for g in own if (g.scope, g.source) == place):
                lines += mine.group_lines(group, inherited=local and group.scope == "user", overrides=overrides,
                                          inherited_files=users)
    return lines + [f"warning: {p}" for p in resources.problems]


def builtin_lines(settings: Any, local: bool) -> list[str]:
    """The built-in plugins, on or off (``-builtin:NAME`` in ``extensions``); in the
    project scope those the project does not switch (:func:`builtin_override_lines`)."""
    from pi_core.app.builtins import BUILTINS

    user = _builtin_switches(getattr(settings, "global_data", None))
    project = _builtin_switches(getattr(settings, "project_data", None)) if local else {}
    lines = ["  Built-in · inherited global" if local else "  Built-in", "    Extensions"]
    for name in sorted((n for n in BUILTINS if n not in project), key=str.casefold):  # by name, as pi 1.6
        lines.append(f"      [{'x' if user.get(name, True) else ' '}] {name}" + ("  inherited global" if local else ""))
    return lines


def builtin_override_lines(settings: Any) -> list[str]:
    """The built-ins the project's ``extensions`` switch (``+builtin:NAME`` /
    ``-builtin:NAME``), in a group of their own as pi 1.6 shows them."""
    from pi_core.app.builtins import BUILTINS

    project = _builtin_switches(getattr(settings, "project_data", None))
    switched = sorted((n for n in BUILTINS if n in project), key=str.casefold)  # by name, as pi 1.6
    if not switched:
        return []
    return ["  Built-in (project override)", "    Extensions"] + [
        f"      [+] {n}  project load" if project[n] else f"      [-] {n}  project unload" for n in switched]


def _trusted(cwd: str, approve: bool | None) -> bool:
    from pi_core.app.settings import Settings
    from pi_core.paths import agent_dir

    return Settings.load(cwd, agent_dir(), project_trusted=approve).project_trusted is True


@click.command("config")
@click.option("-l", "--local", is_flag=True, help="The project's overrides (.pi/settings.json).")
@click.option("-a/-na", "--approve/--no-approve", "approve", default=None,
              help="Trust (or ignore) the project's files for this command, with -l.")
def config_command(local: bool, approve: bool | None) -> None:
    """List the package resources and built-ins the settings load (pi config)."""
    if local and not _trusted(os.getcwd(), approve):
        click.echo(UNTRUSTED, err=True)
        sys.exit(1)
    for line in config_lines(os.getcwd(), local, approve):
        click.echo(line)
    sys.exit(0)
