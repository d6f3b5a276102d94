"""``ctx.ui`` in ACP mode: a plugin's question becomes the editor's permission request.

``confirm`` offers allow and reject; ``select`` offers its choices as permission options
(an "Allow…" choice is an allow option, "Deny…" or "Reject…" a reject one), so
pi-permissions asks in the editor. The request names the tool call being decided, when
there is one. ``input`` and ``editor`` have no counterpart in the protocol: they answer
None, as a dismissed dialog does. Notifications go to stderr, which editors log. The
component calls are pi's RPC mode's no-ops (:mod:`pi_plugins.headless_ui`; pi-acp runs
pi in that mode).
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pi_plugins.headless_ui import HeadlessComponents

if TYPE_CHECKING:  # acp is imported when the mode runs
    from acp.schema import PermissionOptionKind


class AcpUI(HeadlessComponents):
    has_ui = True
    theme_error = "Theme switching not supported in RPC mode"

    def __init__(self, connection: Callable[[], Any], session_id: Callable[[], str | None]) -> None:
        self._connection = connection
        self._session_id = session_id
        #: The tool call ``before_tool_call`` is deciding (set by the ACP agent).
        self.pending_tool_call: dict | None = None

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None) -> bool:
        choice = await self._ask(title, [("allow", "Allow", "allow_once"), ("reject", "Reject", "reject_once")],
                                 message)
        return choice == "allow"

    async def select(self, title: str, options: list[str], *, timeout: float | None = None) -> str | None:
        choices = [(str(n), option, _kind(option)) for n, option in enumerate(options)]
        choice = await self._ask(title, choices)
        return options[int(choice)] if choice is not None else None

    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None) -> str | None:
        return None

    async def editor(self, title: str, prefill: str = "", *, timeout: float | None = None) -> str | None:
        return None

    async def _ask(self, title: str, choices: list[tuple[str, str, PermissionOptionKind]], message: str = "") -> str | None:
        from acp.schema import PermissionOption, ToolCallUpdate

        conn, session_id = self._connection(), self._session_id()
        if conn is None or session_id is None:
            return None
        pending = self.pending_tool_call or {}
        tool_call = ToolCallUpdate(
            tool_call_id=pending.get("id") or f"question-{uuid.uuid4().hex[:8]}",
            title=title, status="pending", raw_input=pending.get("arguments"),
            kind=pending.get("kind"))
        try:
            response = await conn.request_permission(
                session_id=session_id, tool_call=tool_call,
                options=[PermissionOption(option_id=i, name=name, kind=kind) for i, name, kind in choices])
        except Exception as exc:  # the editor failed to answer: a dismissed dialog
            print(f"pi acp: permission request failed: {exc}", file=sys.stderr)
            return None
        outcome = response.outcome
        return getattr(outcome, "option_id", None) if outcome.outcome == "selected" else None

    # ------------------------------------------------------------ fire and forget

    def notify(self, message: str, level: str = "info") -> None:
        print(f"pi [{level}]: {message}", file=sys.stderr)

    def set_status(self, key: str, text: str | None = None) -> None:
        pass

    def set_widget(self, key: str, lines: list[str] | None = None, placement: str | None = None) -> None:
        pass

    def set_title(self, title: str) -> None:
        pass

    def set_editor_text(self, text: str) -> None:
        pass

    def get_editor_text(self) -> str:
        return ""


def _kind(option: str) -> PermissionOptionKind:
    lowered = option.lower()
    if lowered.startswith(("deny", "reject", "no")):
        return "reject_once"
    if lowered.startswith("allow") and ("session" in lowered or "every" in lowered or "always" in lowered):
        return "allow_always"
    return "allow_once"
