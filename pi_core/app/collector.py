"""The garbage collector of the ``pi`` process: idle while it starts, cheap at exit.

Start-up builds some 40,000 long-lived objects (modules, classes, plugins) and next to no
cyclic garbage, yet the collector ran about a hundred times over them (12 ms of a 0.25 s
``pi -p``), and at exit the interpreter's last collections walked them all again (30 ms).
So the console script pauses the collector (:func:`pause`); once the app is built (or a
subcommand other than the agent runs) :func:`resume` freezes what exists (``gc.freeze``:
never scanned again) and turns it back on for what the run creates. At exit, after every
other atexit hook, it freezes again: objects are still freed as the interpreter tears
down, only the search for cycles among them is skipped (Python does not promise to
finalize what is still alive at exit; everything pi opens is closed before).

Only the console script pauses; in-process callers (the SDK, tests) keep their collector
as it is, and :func:`resume` does nothing for them.
"""

from __future__ import annotations

import atexit
import gc

_paused = False


def pause() -> None:
    """Turn the collector off for start-up, and freeze it at exit (the console script)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True
    atexit.register(gc.freeze)  # registered first, so it runs after every other hook


def resume() -> None:
    """Start-up is over: freeze its objects and turn the collector back on."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
