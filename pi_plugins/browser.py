"""Opening a page in the user's browser, for the sign-ins (providers' and MCP servers'):
only in a graphical session, never a terminal browser, and never on the event loop."""

from __future__ import annotations

import contextlib
import os
import sys
import threading


def can_open_browser() -> bool:
    """A graphical session to open a browser in: never over SSH without a display, nor in
    a terminal browser (webbrowser would start lynx in the user's terminal)."""
    if os.environ.get("PI_NO_BROWSER"):
        return False
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def open_browser(url: str) -> bool:
    """Open ``url`` in a browser where there is a graphical session; True when one is
    tried. It opens on a thread: a ``BROWSER`` command is waited for, and a sign-in's own
    callback server on the event loop must be free to answer it meanwhile. ``BROWSER`` is
    read at each call (``webbrowser`` reads it once a process, and an SDK host may set it
    later)."""
    if not can_open_browser():
        return False
    threading.Thread(target=_open, args=(url,), name="open-browser", daemon=True).start()
    return True


def _open(url: str) -> None:
    import webbrowser

    for command in filter(None, os.environ.get("BROWSER", "").split(os.pathsep)):
        with contextlib.suppress(Exception):
            webbrowser.get(command).open(url)
            return
    with contextlib.suppress(Exception):
        webbrowser.open(url)
