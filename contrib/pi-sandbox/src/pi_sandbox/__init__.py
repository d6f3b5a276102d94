"""pi-sandbox: the bash tool, ``!cmd`` and ``ctx.exec`` run under bubblewrap, and the
file tools stay in the workspace (``execution_environment``).

Settings, per project in ``.pi/settings.json`` (over the global ``settings.json``), under
``"sandbox"``::

    {"sandbox": {"enabled": true, "network": false, "writable": ["../shared-cache"]}}

- ``enabled`` (default true): the sandbox is on once the package is installed;
- ``network`` (default false): without it commands have no network at all;
- ``writable``: more paths (relative to the workspace, or absolute) commands and file
  tools may write, beside the workspace.

Without bubblewrap every command fails with an error that says how to install it: the
sandbox never falls back to running commands unsandboxed. Each session has one private
``/tmp`` (a host folder bound there), kept across its commands and removed at
``session_shutdown``.
"""

from __future__ import annotations

from pi_core import hookimpl

SETTINGS_KEY = "sandbox"


def sandbox_settings(ctx) -> tuple[dict, list[str]]:
    """The project's ``sandbox`` settings and what is wrong with them. A bad value is
    replaced by the strict default (never by a looser one)."""
    settings = getattr(ctx, "settings", None)
    value = settings.get(SETTINGS_KEY) if settings is not None else None
    if value is None:
        return {}, []
    if not isinstance(value, dict):
        return {}, [f'"{SETTINGS_KEY}" must be an object, not {value!r}']
    config, problems = dict(value), []
    writable = config.get("writable", [])
    if not isinstance(writable, list) or not all(isinstance(p, str) for p in writable):
        problems.append(f'"{SETTINGS_KEY}.writable" must be a list of paths; none is used')
        config["writable"] = []
    for key in ("enabled", "network"):
        if key in config and not isinstance(config[key], bool):
            problems.append(f'"{SETTINGS_KEY}.{key}" must be true or false; the sandbox keeps '
                            "its strict default")
            config[key] = True if key == "enabled" else False
    return config, problems


@hookimpl
def execution_environment(ctx):
    from pi_sandbox.environment import SandboxEnvironment

    config, _ = sandbox_settings(ctx)
    if config.get("enabled", True) is False:
        return None
    return SandboxEnvironment(ctx.cwd, network=config.get("network", False),
                              writable=config.get("writable", []), owner=ctx)


@hookimpl(trylast=True)  # after the session's commands are stopped
def session_shutdown(ctx):
    """The session's private /tmp is removed with it."""
    import sys

    environment = sys.modules.get("pi_sandbox.environment")
    if environment is not None:  # (not loaded: no command ran, no /tmp was made)
        environment.release_session_tmp(ctx)


@hookimpl
def session_start(event, ctx):
    import shutil

    config, problems = sandbox_settings(ctx)
    for problem in problems:
        ctx.ui.notify(f"pi-sandbox: settings: {problem}", "warning")
    if config.get("enabled", True) is not False and shutil.which("bwrap") is None:
        from pi_sandbox.environment import MISSING_BWRAP

        ctx.ui.notify(MISSING_BWRAP, "error")
