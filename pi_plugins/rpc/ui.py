"""``ctx.ui`` in RPC mode: pi's extension-UI sub-protocol.

A dialog (``confirm``, ``select``, ``input``, ``editor``) writes an
``extension_ui_request`` line with a fresh ``id`` and waits for the client's
``extension_ui_response`` with that id; a ``timeout`` (seconds here, milliseconds on the
wire) or the end of input answers with the dialog's default, as a cancelled dialog does
(confirm: False; the others: None). ``notify``, ``set_status``, ``set_widget``,
``set_title`` and ``set_editor_text`` only write a request; no answer is expected
(``set_widget`` with lines only: a component factory is ignored, as in pi). The
component calls are pi's RPC mode's no-ops (:mod:`pi_plugins.headless_ui`).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

from pi_plugins.headless_ui import HeadlessComponents

CANCELLED = {"cancelled": True}


class RpcUI(HeadlessComponents):
    has_ui = True
    theme_error = "Theme switching not supported in RPC mode"

    def __init__(self, send: Callable[[dict], None]) -> None:
        self._send = send
        self._pending: dict[str, asyncio.Future] = {}

    # ------------------------------------------------------------ dialogs

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None) -> bool:
        response = await self._dialog({"method": "confirm", "title": title, "message": message}, timeout)
        return False if response.get("cancelled") else bool(response.get("confirmed", False))

    async def select(self, title: str, options: list[str], *, timeout: float | None = None) -> str | None:
        response = await self._dialog({"method": "select", "title": title, "options": list(options)}, timeout)
        return _value(response)

    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None) -> str | None:
        response = await self._dialog({"method": "input", "title": title, "placeholder": placeholder}, timeout)
        return _value(response)

    async def editor(self, title: str, prefill: str = "", *, timeout: float | None = None) -> str | None:
        response = await self._dialog({"method": "editor", "title": title, "prefill": prefill}, timeout)
        return _value(response)

    async def _dialog(self, request: dict, timeout: float | None) -> dict:
        request_id = str(uuid.uuid4())
        answer = asyncio.get_running_loop().create_future()
        self._pending[request_id] = answer
        if timeout is not None:
            request["timeout"] = int(timeout * 1000)
        self._send({"type": "extension_ui_request", "id": request_id, **request})
        try:
            return await asyncio.wait_for(answer, timeout)
        except TimeoutError:
            return CANCELLED
        finally:
            self._pending.pop(request_id, None)

    def resolve(self, response: dict) -> bool:
        """An ``extension_ui_response`` from the client; False when no dialog waits
        for its id (answered already, timed out, or never asked)."""
        key = response.get("id")
        answer = self._pending.pop(key, None) if isinstance(key, str) else None
        if answer is None or answer.done():
            return False
        answer.set_result(response)
        return True

    def waiting(self, request_id: str) -> bool:
        """Whether the dialog ``request_id`` still waits for its answer."""
        return request_id in self._pending

    def cancel_all(self) -> None:
        """Answer every open dialog with its default (the client has gone)."""
        pending, self._pending = self._pending, {}
        for answer in pending.values():
            if not answer.done():
                answer.set_result(CANCELLED)

    # ------------------------------------------------------------ fire and forget

    def notify(self, message: str, level: str = "info") -> None:
        self._request({"method": "notify", "message": message, "notifyType": level})

    def set_status(self, key: str, text: str | None = None) -> None:
        self._request({"method": "setStatus", "statusKey": key, "statusText": text})

    def set_widget(self, key: str, lines: list[str] | None = None, placement: str | None = None) -> None:
        if lines is not None and not isinstance(lines, (list, tuple)):
            return  # a component factory: nothing to draw it with, as pi ignores it
        self._request({"method": "setWidget", "widgetKey": key,
                       "widgetLines": list(lines) if lines is not None else None,
                       "widgetPlacement": placement})

    def set_title(self, title: str) -> None:
        self._request({"method": "setTitle", "title": title})

    def set_editor_text(self, text: str) -> None:
        self._request({"method": "set_editor_text", "text": text})

    def get_editor_text(self) -> str:
        """The client keeps the editor; RPC cannot ask it synchronously."""
        return ""

    def _request(self, fields: dict) -> None:
        # pi leaves out undefined fields (a cleared status or widget has no text/lines).
        self._send({"type": "extension_ui_request", "id": str(uuid.uuid4()),
                    **{k: v for k, v in fields.items() if v is not None}})


def _value(response: dict) -> Any:
    return None if response.get("cancelled") else response.get("value")
