"""The local machine as the execution environment, and the end of its commands.

Every command, whether the bash tool's, the user's ``!cmd`` or a plugin's ``ctx.exec``,
runs through the environment the ``execution_environment`` hook gives. This plugin
answers first (``tryfirst``), so any other plugin's environment (a sandbox, a container)
wins over it. When a session ends, whatever its commands left running on purpose (a
dev server started with ``&``) is stopped.
"""

from __future__ import annotations

import sys

from pi_core import hookimpl


@hookimpl(tryfirst=True)
def execution_environment(ctx):
    from pi_plugins.tools.environment import LocalEnvironment

    return LocalEnvironment(getattr(ctx, "cwd", None), owner=ctx)


@hookimpl
def session_shutdown(ctx):
    processes = sys.modules.get("pi_plugins.tools.processes")  # none ran without it
    if processes is not None:
        processes.stop_commands(owner=ctx)
