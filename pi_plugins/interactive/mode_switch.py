"""Switching between fullscreen and regular while the chat runs (``/settings`` → TUI
mode), as pi 1.6 does: the setting is saved, the running screen is left as it is, and
the chat goes on in the other mode with the same conversation, editor text and dialog.
As in 1.6, not while an overlay is open ("Close active overlays before changing TUI
mode"), and the chat says "TUI mode: <mode>".

prompt_toolkit draws one application at a time, so the chat's application is ended
(:meth:`.InteractiveApp.run` sees :attr:`pending` and runs the new one); what the old
mode showed is handed over whole: the regular mode prints the transcript into the
terminal again, the fullscreen view paints it where it is looked at.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pi_plugins.interactive.fullscreen_layout import TUI_MODES

if TYPE_CHECKING:
    from pi_plugins.interactive.app import InteractiveApp

OVERLAYS_OPEN = "Close active overlays before changing TUI mode"


def current_mode(tui: InteractiveApp) -> str:
    return "fullscreen" if tui.fullscreen else "regular"


def request(tui: InteractiveApp, mode: str) -> bool:
    """Switch to ``mode`` once the running application has ended; False (and nothing
    done) while an overlay is open."""
    if mode not in TUI_MODES:
        raise ValueError(f"tuiMode must be one of {', '.join(TUI_MODES)}")
    if tui.overlays.entries:
        return False
    if mode == current_mode(tui) and tui.switching_to is None:
        return True
    tui.switching_to = mode
    app = tui.app
    if app is not None and app.is_running and not app.is_done:
        app.exit()
    return True


def remount(tui: InteractiveApp, mode: str) -> None:
    """The chat in ``mode``: its transcript handed to the new mode's view, a new
    application around it (not running yet)."""
    from pi_plugins.interactive.scrollback import Scrollback
    from pi_plugins.interactive.transcript_view import TranscriptView

    if tui.flusher_task is not None:
        tui.flusher_task.cancel()
    tui.fullscreen = mode == "fullscreen"
    tui.scrollback = TranscriptView(tui) if tui.fullscreen else Scrollback(tui)
    tui.scrollback.reprint(None)  # every block again, in the new mode
    tui.app = tui.layout.make_application()


def resumed(tui: InteractiveApp) -> None:
    """Once the new application runs: its flusher, the focus, and the chat's word."""
    tui.flusher_task = tui.spawn(tui.scrollback.flusher())
    tui.layout.refocus()
    tui.appearance_reports.start()  # the new application's input, if it has another
    tui.keyboard.start()
    tui.add_text(f"TUI mode: {current_mode(tui)}", "dim")
