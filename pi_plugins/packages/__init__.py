"""Plugin packages: ``pi install``, ``pi remove`` (``uninstall``), ``pi list`` and
``pi update``, through pip in the environment pi runs in (:mod:`.manage`), and plugin
files named in settings.json. The subcommands come through ``register_cli_commands``
(:mod:`.cli`, imported only when one runs), so dropping this plugin drops them. At
start-up, the pi packages settings.json lists but the disk lacks are installed
(``settings_problems``, :mod:`.startup_install`), as pi 1.6 does.
"""

from pi_core import hookimpl
from pi_core.protocol.shell import CliCommand

CLI = "pi_plugins.packages.cli"


@hookimpl
def register_cli_commands():
    return [
        CliCommand("install", f"{CLI}:install_command", "Install a plugin package"),
        CliCommand("remove", f"{CLI}:remove_command", "Uninstall a plugin package"),
        CliCommand("uninstall", f"{CLI}:uninstall_command", "Alias for remove", hidden=True),
        CliCommand("list", f"{CLI}:list_command", "List installed plugin packages"),
        CliCommand("update", f"{CLI}:update_command", "Update pi-harness, or its plugin packages"),
        CliCommand("config", "pi_plugins.packages.config_command:config_command",
                   "List the package resources and built-ins the settings load"),
    ]


@hookimpl
def settings_problems(settings):
    """Install the configured pi packages that are missing; what failed, as warnings."""
    from pi_plugins.packages.listed import lists_packages

    if not lists_packages(settings):
        return []
    from pi_plugins.packages.startup_install import install_missing

    return install_missing(settings)


@hookimpl(tryfirst=True)  # before the resource plugins look again
async def session_start(event, ctx):
    """``/reload``: as pi 1.6, try the missing packages again; said through the UI."""
    from pi_plugins.packages.listed import lists_packages

    if getattr(event, "reason", None) != "reload" or not lists_packages(ctx.settings):
        return
    import asyncio

    from pi_plugins.packages.startup_install import install_missing

    said: list[str] = []
    warnings = await asyncio.to_thread(install_missing, ctx.settings, say=said.append)
    ui = getattr(ctx, "ui", None)
    if ui is not None:
        for line in said:
            ui.notify(line, "info")
        for line in warnings:
            ui.notify(line, "warning")
