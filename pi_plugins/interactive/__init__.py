"""The interactive mode (``pi`` with no ``-p``): a chat in the terminal.

Only the mode's registration lives here; prompt_toolkit and rich are imported when the
mode runs, so ``pi --help`` and the other modes stay quick.
"""

from __future__ import annotations

from pi_core import hookimpl
from pi_core.protocol.shell import Mode


async def run_interactive(app) -> int:
    from pi_plugins.interactive.app import InteractiveApp

    return await InteractiveApp(app).run()


@hookimpl
def register_modes():
    return [Mode("interactive", run_interactive, "chat in the terminal")]
