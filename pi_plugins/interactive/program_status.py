"""pi 1.6's program status reports (OSC 7501, the Program Status Protocol), so a terminal or
an agent dashboard can show whether pi works, waits for the user, is done or failed.

``working`` during a run or a compaction (the message: the session name, or "Compacting
context"), ``blocked`` while a plugin's dialog waits (its title; ``permission`` for a
confirm, ``question`` otherwise), ``done`` after a run (the session name), ``error`` after
one that failed (the error's first line), ``idle`` at start and after a cancelled run;
``clear`` when the chat ends. Prompts and answers are never reported. Sent only where the
terminal answered the protocol's support query at start (:mod:`.terminal_colors`), or
always with ``PI_PROGRAM_STATUS=1``, never with ``0``; each report once (a repeat is not
sent again).
"""

from __future__ import annotations

import base64
import os
import re
from typing import Any

QUERY = b"\x1b]7501;?\x1b\\"
REPLY = re.compile(rb"\x1b\]7501;\?[^\x07\x1b]*(?:\x07|\x1b\\)")
APP = "pi"
_APP_NAME = re.compile(r"^[A-Za-z0-9_.+-]{1,32}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
MAX_MESSAGE_BYTES = 2048


def supported_by(tui: Any) -> bool:
    """Whether the chat's terminal takes reports: ``PI_PROGRAM_STATUS``, else its answer
    to the support query at start (a chat on other streams was not asked)."""
    forced = override()
    if forced is not None:
        return forced
    from pi_plugins.interactive import terminal_colors

    return tui.terminal_input is None and terminal_colors.program_status_answered


def override(env: Any = None) -> bool | None:
    """``PI_PROGRAM_STATUS``: True (always report), False (never), None (ask the terminal)."""
    value = (os.environ if env is None else env).get("PI_PROGRAM_STATUS")
    return {"1": True, "0": False}.get(value or "")


def format_status(state: str, message: str = "", kind: str = "", app: str = APP) -> str:
    """The OSC 7501 report: ``state=…:app=…[:kind=…][:msg=<base64>]`` ended by ST; control
    characters in the message become spaces (a terminal drops a report holding one)."""
    pairs = [f"state={state}"]
    if _APP_NAME.match(app):
        pairs.append(f"app={app}")
    if state == "blocked" and kind:
        pairs.append(f"kind={kind}")
    text = _CONTROL.sub(" ", message).strip().encode()[:MAX_MESSAGE_BYTES].decode(errors="ignore")
    if text:
        pairs.append("msg=" + base64.b64encode(text.encode()).decode())
    return "\x1b]7501;" + ":".join(pairs) + "\x1b\\"


def _first_line(text: str | None) -> str:
    return ((text or "").splitlines() or [""])[0].strip() or "Error"


class ProgramStatus:
    """The chat's state as reports, from the harness's events and the dialogs it shows."""

    def __init__(self, tui: Any, supported: bool) -> None:
        self.tui = tui
        self.supported = supported
        self.run_active = self.compacting = False
        self.run_result: tuple[str, str] = ("done", "")  # what a run that settles now reports
        self.resting: tuple[str, str] = ("idle", "")  # between runs
        self.blocked: dict[object, tuple[str, str]] = {}  # dialog -> (kind, title), oldest first
        self._last: str | None = None

    def _session_name(self) -> str:
        try:
            return self.tui.harness.session.name or ""
        except Exception:  # no session yet: the report goes without a name
            return ""

    def on_event(self, event: Any) -> None:
        kind = event.type
        if kind == "agent_start":
            self.run_active, self.run_result = True, ("done", "")
        elif kind == "message_end":
            message = event.message
            if getattr(message, "role", None) != "assistant":
                return
            # the latest answer decides: a retried error is replaced by the retry's outcome
            failed = message.stop_reason == "error"
            self.run_result = ("error", _first_line(message.error_message)) if failed else ("done", "")
        elif kind == "compaction_start":
            self.compacting = True
        elif kind == "compaction_end":
            self.compacting = False
            if self.run_active:
                if event.aborted:
                    self.run_result = ("idle", "")
                elif event.error_message:
                    self.run_result = ("error", _first_line(event.error_message))
            elif event.aborted:
                self.resting = ("idle", "")
            elif event.reason == "manual":
                self.resting = ("error", _first_line(event.error_message)) if event.error_message else ("done", "")
        elif kind == "agent_end":
            if event.will_retry:
                return
            self.run_active = False
            last = next((m for m in reversed(event.messages) if getattr(m, "role", None) == "assistant"), None)
            aborted = last is not None and last.stop_reason == "aborted"
            self.resting = ("idle", "") if aborted else self.run_result
        elif kind != "session_info_changed":
            return
        self.report()

    def set_blocked(self, dialog: object, kind: str | None = None, title: str = "") -> None:
        """A dialog that waits for the user (``kind`` given) or no longer does (None)."""
        self.blocked.pop(dialog, None)
        if kind is not None:
            self.blocked[dialog] = (kind, title)
        self.report()

    def current(self) -> tuple[str, str, str]:
        """(state, message, kind) to report now."""
        if self.blocked:
            kind, title = list(self.blocked.values())[-1]
            return "blocked", title, kind
        if self.compacting:
            return "working", "Compacting context", ""
        state, message = ("working", "") if self.run_active else self.resting
        if state in ("working", "done"):
            message = self._session_name()
        return state, message, ""

    def report(self) -> None:
        state, message, kind = self.current()
        sequence = format_status(state, message, kind)
        if sequence == self._last:
            return
        self._last = sequence
        if self.supported:
            self.tui.write_to_terminal(sequence)

    def clear(self) -> None:
        """The chat ends: the terminal forgets the status (sent only if one was reported)."""
        if self.supported and self._last is not None:
            self.tui.write_to_terminal(format_status("clear", app=""))
        self._last = None
