"""The interactive mode (``pi`` with no ``-p``): a chat in the terminal.

Only the mode's registration lives here; prompt_toolkit and rich are imported when the
mode runs, so ``pi --help`` and the other modes stay quick.
"""

from __future__ import annotations

from pi_core import hookimpl
from pi_core.protocol.shell import Mode


async def run_interactive(app) -> int:
    from pi_plugins.interactive.app import InteractiveApp

    chat = InteractiveApp(app)
    try:
        return await chat.run()
    except Exception as error:  # a crash in the chat itself
        import sys
        import traceback

        print("pi exiting due to an uncaught exception:", file=sys.stderr)
        traceback.print_exception(error, file=sys.stderr)
        _record_crash(app, error, at_exit=False)
        return 1
    finally:
        if chat.crashed is not None:  # from a task: asyncio ends the program with it
            _record_crash(app, chat.crashed, at_exit=True)


def _record_crash(app, error: BaseException, at_exit: bool) -> None:
    """pi 1.6's crash log and its hint: after the traceback (printed at exit when the
    error ends the program, so the hint comes last there too)."""
    import atexit
    import sys

    from pi_plugins.interactive.crash_log import record_crash, report_instructions

    session = app.harness.session
    file = getattr(session, "file", None)
    session_file = str(file) if file is not None and session.on_disk else None
    if record_crash(app.harness.ctx.agent_dir, "uncaught_exception", error,
                    session_file=session_file, cwd=str(app.harness.ctx.cwd)) is None:
        return
    hint = f"\n{report_instructions(session_file)}"
    if not at_exit:
        print(hint, file=sys.stderr)
        return

    def tell() -> None:  # click's "Aborted!" says nothing more of a KeyboardInterrupt
        import traceback

        print("pi exiting due to an uncaught exception:", file=sys.stderr)
        traceback.print_exception(error, file=sys.stderr)
        print(hint, file=sys.stderr)

    atexit.register(tell)


@hookimpl
def register_modes():
    return [Mode("interactive", run_interactive, "chat in the terminal")]
