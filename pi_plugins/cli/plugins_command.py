"""``pi plugins``: the plugins in load order, where each came from, the hooks it
implements, those settings disabled, and which of a keyed hook's items replace another's."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from pi_core.plugins import Plugins


@click.command("plugins")
@click.option("-e", "--extension", "extensions", multiple=True, type=click.Path(),
              help="Also load a plugin file or package directory (repeatable).")
@click.option("--no-extensions", is_flag=True,
              help="Skip installed and user/project plugins; built-ins and -e still load.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.option("-a/-na", "--approve/--no-approve", "approve", default=None,
              help="Trust (or ignore) the project's .pi plugins and settings for this command.")
def plugins_command(extensions: tuple[str, ...], no_extensions: bool, as_json: bool,
                    approve: bool | None) -> None:
    """List the plugins in load order: where each came from, its distribution and
    version, the hooks it implements; plugins disabled by settings are shown as such."""
    from pi_core.app.discovery import PluginPolicy, load_plugins
    from pi_core.app.settings import Settings, quiet_trust
    from pi_core.paths import agent_dir

    cwd, home = os.getcwd(), agent_dir()
    trust = quiet_trust(cwd, home, Settings.load(cwd, home, project_trusted=False).global_data)
    settings = Settings.load(cwd, home, project_trusted=trust.trusted if approve is None else approve)
    plugins = load_plugins(cwd=cwd, agent_dir=home, settings=settings,
                           discover=not no_extensions, extension_paths=extensions)
    if approve is None and trust.notice:
        click.echo(trust.notice, err=True)
    rows: list[dict[str, Any]] = [
        {
            "name": info.name,
            "source": info.source,
            "location": info.location,
            "distribution": info.distribution,
            "version": info.version,
            "hooks": plugins.hooks_of(info.name),
            "enabled": True,
        }
        for info in plugins.infos
    ]
    rows += [
        {
            "name": skip.name,
            "source": skip.source,
            "location": skip.location,
            "distribution": skip.distribution,
            "version": skip.version,
            "hooks": None,
            "enabled": False,
            "reason": skip.reason,
        }
        for skip in plugins.skipped
    ]
    errors = [str(e) for e in plugins.errors] + [f"warning: {p}" for p in settings.problems]
    if not no_extensions:
        known = [r["name"] for r in rows] + [r["distribution"] for r in rows if r["distribution"]]
        for name in PluginPolicy.from_settings(settings).unmatched(known):
            errors.append(f"warning: settings name a plugin that is not installed: {name}")
    import asyncio

    from pi_core.context import Context

    before = len(plugins.errors)
    overrides = asyncio.run(collect_overrides(plugins, Context(
        cwd=cwd, plugins=plugins, settings=settings, agent_dir=home)))
    errors += [str(e) for e in list(plugins.errors)[before:]]
    if as_json:
        import json

        click.echo(json.dumps({"plugins": rows, "overrides": overrides, "errors": errors}, indent=2))
        return
    for row in rows:
        origin = row["source"]
        if row["distribution"]:
            origin += f", {row['distribution']} {row['version']}"
        state = "" if row["enabled"] else f"  [{row['reason']}]"
        click.echo(f"{row['name']}  ({origin})  {row['location']}{state}")
        hooks = "(not loaded)" if row["hooks"] is None else ", ".join(row["hooks"]) or "(none)"
        click.echo(f"    hooks: {hooks}")
    builtins = {info.name for info in plugins.infos if info.source == "builtin"}
    for override in overrides:
        losers = override["replaces"]
        whose = "the built-in" if all(l in builtins for l in losers) else \
            f"the one from {', '.join(losers)}"
        click.echo(f"{override['key']} ({override['hook']}) from {override['winner']} replaces {whose}")
    for error in errors:
        click.echo(error if error.startswith("warning:") else f"error: {error}", err=True)


async def collect_overrides(plugins: Plugins, ctx: Any) -> list[dict]:
    """Run every keyed collect hook once and say, for each key two plugins gave, which
    plugin's item won (``pi plugins``: "read from my_plugin replaces the built-in")."""
    import hookspecs

    found = []
    for module in hookspecs.SPEC_MODULES:
        for name in dir(module):
            spec = getattr(module, name)
            kind = getattr(spec, "pi_dispatch", None)
            if kind is None or kind.kind != "collect" or not isinstance(kind.key, str):
                continue
            if not plugins.has(name):
                continue
            caller = getattr(plugins.pm.hook, name)
            if caller.spec is not None and set(caller.spec.argnames) - {"ctx"}:
                continue  # needs a run's arguments (discover_models would probe servers)
            await plugins.call(name, ctx=ctx)
            for key, winner, losers in plugins.overrides.get(name, []):
                found.append({"hook": name, "key": str(key), "winner": winner,
                              "replaces": [l for l in losers if l != winner]})
    return [f for f in found if f["replaces"]]
