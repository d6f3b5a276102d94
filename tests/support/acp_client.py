"""An editor's side of the Agent Client Protocol, built on the ``agent-client-protocol``
package: it starts an agent program (``pi --mode acp``, or pi-acp), keeps every
``session/update`` it is sent, and answers permission requests as a test tells it.

::

    async with AcpClient.spawn(["pi", "--mode", "acp"], env=env, cwd=cwd) as client:
        await client.conn.initialize(protocol_version=1)
        session = await client.conn.new_session(cwd=str(cwd), mcp_servers=[])
        await client.conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        client.updates  # [{"sessionUpdate": "agent_message_chunk", ...}, ...]
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Callable

from acp import RequestPermissionResponse, spawn_agent_process
from acp.schema import AllowedOutcome, DeniedOutcome


def as_json(model: Any) -> Any:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json") if hasattr(model, "model_dump") else model


class AcpClient:
    """The ``acp.Client`` a test drives the agent with."""

    def __init__(self) -> None:
        self.updates: list[dict] = []
        self.permission_requests: list[dict] = []
        #: ``answer(request) -> option id`` (or None to cancel); default: the first allow option.
        self.answer: Callable[[dict], str | None] = _first_allow
        self.conn: Any = None
        self.process: Any = None
        self._changed = asyncio.Condition()

    @classmethod
    @contextlib.asynccontextmanager
    async def spawn(cls, command: list[str], *, env: dict, cwd: str, **kwargs: Any):
        client = cls()
        async with spawn_agent_process(client, command[0], *command[1:], env=env, cwd=cwd,
                                       **kwargs) as (conn, process):
            client.conn, client.process = conn, process
            yield client

    # ------------------------------------------------------------ acp.Client

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        value = as_json(update)
        value["_sessionId"] = session_id
        async with self._changed:
            self.updates.append(value)
            self._changed.notify_all()

    async def request_permission(self, session_id: str, tool_call: Any, options: list, **kwargs: Any):
        request = {"sessionId": session_id, "toolCall": as_json(tool_call),
                   "options": [as_json(o) for o in options]}
        self.permission_requests.append(request)
        chosen = self.answer(request)
        if chosen is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=chosen))

    async def write_text_file(self, *args: Any, **kwargs: Any):
        raise NotImplementedError("this client offers no file system")

    async def read_text_file(self, *args: Any, **kwargs: Any):
        raise NotImplementedError("this client offers no file system")

    async def create_terminal(self, *args: Any, **kwargs: Any):
        raise NotImplementedError("this client offers no terminal")

    async def ext_method(self, method: str, params: dict) -> dict:
        return {}

    async def ext_notification(self, method: str, params: dict) -> None:
        return None

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    # ------------------------------------------------------------ waiting

    async def wait_for(self, predicate: Callable[[dict], bool], after: int = 0, timeout: float = 20.0) -> dict:
        async def find() -> dict:
            async with self._changed:
                while True:
                    for update in self.updates[after:]:
                        if predicate(update):
                            return update
                    await self._changed.wait()

        try:
            return await asyncio.wait_for(find(), timeout)
        except asyncio.TimeoutError:
            kinds = [u.get("sessionUpdate") for u in self.updates[after:]]
            raise AssertionError(f"no matching session/update after {after} in {timeout} s; saw {kinds}") from None

    def of(self, kind: str, after: int = 0) -> list[dict]:
        return [u for u in self.updates[after:] if u.get("sessionUpdate") == kind]

    def text(self, kind: str = "agent_message_chunk", after: int = 0) -> str:
        return "".join(u["content"].get("text", "") for u in self.of(kind, after) if "content" in u)


def _first_allow(request: dict) -> str | None:
    for option in request["options"]:
        if option["kind"].startswith("allow"):
            return option["optionId"]
    return None
