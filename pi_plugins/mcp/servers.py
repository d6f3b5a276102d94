"""The MCP servers of one session: connected in the background when it starts, their
tools registered as pi tools (``mcp__<server>__<tool>``) as each connects, withdrawn
when a server's list changes, and the problems reported once after start-up.

A tool's exposure decides how it reaches the model: ``direct`` tools are declared like
built-in tools; ``codemode`` and ``deferred`` tools are registered but not declared
(``default_active`` off), for codemode or tool search to reach; ``hidden`` tools are not
registered. Every call goes through the harness's tool pipeline, so the
``before_tool_call`` gates and ``after_tool_call`` chains apply to MCP tools too.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import attrs

from pi_core import Tool, ToolResult
from pi_plugins.mcp.config import McpConfig, ServerEntry, user_config_path
from pi_plugins.mcp.connection import McpCallError, ServerConnection
from pi_plugins.mcp.log import ServerLog
from pi_plugins.mcp.naming import tool_names
from pi_plugins.mcp.results import to_tool_result

STARTUP_WAIT_S = 10.0
EXPOSURES_OF_TOOLS = ("direct", "codemode", "deferred")


@attrs.define(eq=False)
class Server:
    entry: ServerEntry
    connection: ServerConnection | None = None
    ready: asyncio.Future | None = None
    tool_names: dict[str, str] = attrs.field(factory=dict)  # server tool -> pi tool name


def describe_state(server: Server) -> str:
    """The short state ``/mcp`` and the start-up report show."""
    if not server.entry.enabled:
        return "disabled"
    connection = server.connection
    if connection is None:
        return "starting"
    if connection.state == "failed":
        return f"failed: {(connection.error or 'unknown error').splitlines()[0]}"
    if connection.connected:
        count = len(connection.tools)
        return f"connected · {count} tool{'' if count == 1 else 's'}" + (" · resources" if connection.has_resources
                                                                           else "")
    return {"connecting": "connecting…", "disconnected": "disconnected, reconnects on next call"}.get(
        connection.state, connection.state)


def mcp_tool(server: Server, spec: dict, name: str, exposure: str) -> Tool:
    """The pi tool for one server tool, as pi 1.6 declares it (description, else title,
    else a sentence naming it; the input schema as an object schema; label server/tool)."""
    remote = spec["name"]
    server_name = server.entry.name
    schema = dict(spec.get("inputSchema") or {})
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    title = spec.get("title") or (spec.get("annotations") or {}).get("title")
    description = (spec.get("description") or "").strip() or title or f"MCP tool {remote} from server {server_name}"

    async def execute(args: Any, run: Any) -> ToolResult:
        connection = server.connection
        if connection is None:
            return ToolResult.error(f'MCP server "{server_name}" is disabled.')
        if connection.connected and not any(t.get("name") == remote for t in connection.tools):
            return ToolResult.error(f'MCP tool "{server_name}/{remote}" is no longer available.')
        try:
            result = await connection.call_tool(remote, dict(args or {}), progress=run.update)
        except McpCallError as exc:
            return ToolResult.error(str(exc))
        return to_tool_result(server_name, remote, result, readable=connection.has_resources)

    return Tool(name=name, description=description, parameters=schema, function=execute,
                label=f"{server_name}/{remote}", default_active=exposure == "direct")


class McpServers:
    """The servers of one harness (its ``ctx``)."""

    def __init__(self, ctx: Any, config: McpConfig) -> None:
        self.ctx = ctx
        self.config = config
        self.servers = [Server(entry) for entry in config.servers]
        self.log = ServerLog(user_config_path(ctx.agent_dir).with_name("mcp.log"))
        self.waited = False
        self.reported: asyncio.Future | None = None
        self.closed = False

    def find(self, name: str) -> Server | None:
        return next((s for s in self.servers if s.entry.name == name), None)

    # ------------------------------------------------------------ connecting

    def start(self) -> None:
        """Connect every enabled server in the background; report the problems once all
        have settled (or at once when none is to connect)."""
        for server in self.servers:
            if server.entry.enabled:
                self._connect(server)
        pending = [s.ready for s in self.servers if s.ready is not None]
        self.reported = asyncio.ensure_future(self._report_when_settled(pending))

    def _connect(self, server: Server) -> None:
        server.connection = ServerConnection(server.entry, self.ctx.cwd, on_tools=self._register,
                                             on_log=self.log.write)
        server.ready = asyncio.ensure_future(self._settle(server.connection))

    @staticmethod
    async def _settle(connection: ServerConnection) -> None:
        with contextlib.suppress(McpCallError, asyncio.CancelledError):
            await connection.get_client()

    async def _report_when_settled(self, pending: list) -> None:
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        if not self.closed:
            self.report_problems()

    def report_problems(self) -> None:
        lines = [f"config: {error}" for error in self.config.errors]
        lines += [f"{s.entry.name}: {describe_state(s)}" for s in self.servers
                  if s.connection is not None and s.connection.state == "failed"]
        if lines:
            body = "\n".join(f"  {line}" for line in lines)
            self.ctx.ui.notify(f"MCP servers need attention:\n{body}\nRun /mcp to fix.", "warning")

    async def wait_for_direct(self, timeout: float | None = None) -> None:
        """Before the first prompt only: wait (up to ``timeout``) for the servers whose
        tools are declared to the model, so its first request declares them."""
        if self.waited:
            return
        self.waited = True
        ready = [s.ready for s in self.servers if s.entry.enabled and s.entry.has_direct_tools() and s.ready]
        if not ready:
            return
        _, late = await asyncio.wait(ready, timeout=STARTUP_WAIT_S if timeout is None else timeout)
        if late:
            self.ctx.ui.notify("MCP servers are still connecting; their tools become available once connected.",
                               "info")

    # ------------------------------------------------------------ tools

    def _taken_by_others(self, server: Server):
        others = {name for s in self.servers if s is not server for name in s.tool_names.values()}
        return others.__contains__

    def _register(self, connection: ServerConnection) -> None:
        """(Re-)register a server's tools from its current list; withdraw the ones it
        dropped, and the hidden ones."""
        server = self.find(connection.name)
        if server is None or server.connection is not connection or self.closed:
            return
        specs = {t["name"]: t for t in connection.tools}
        names = tool_names(server.entry.name, list(specs), self._taken_by_others(server))
        for remote, name in server.tool_names.items():
            if remote not in names or names[remote] != name:
                self._unregister(name)
        server.tool_names = {}
        for remote, name in names.items():
            exposure = server.entry.tool_exposure(remote)
            if exposure == "hidden":
                self._unregister(name)
                continue
            server.tool_names[remote] = name
            with contextlib.suppress(Exception):
                self.ctx.register_tool(mcp_tool(server, specs[remote], name, exposure))

    def _unregister(self, name: str) -> None:
        with contextlib.suppress(Exception):
            self.ctx.unregister_tool(name)

    def tool_exposures(self) -> dict[str, str]:
        """Every registered MCP tool's name and exposure (for codemode and tool search)."""
        return {name: s.entry.tool_exposure(remote) for s in self.servers for remote, name in s.tool_names.items()}

    # ------------------------------------------------------------ status and shutdown

    def status(self) -> str:
        """``/mcp`` outside the chat's dialog: each server, its state and exposure."""
        if not self.servers and not self.config.errors:
            return (f"No MCP servers configured. Add them to {user_config_path(self.ctx.agent_dir)} "
                    "or .pi/mcp.json.")
        lines = []
        for server in self.servers:
            connection, entry = server.connection, server.entry
            if not entry.enabled:
                state = "disabled"
            elif connection is None:
                state = "starting"
            elif connection.connected:
                state = f"connected, {len(connection.tools)} tools"
            elif connection.state == "disconnected":
                state = "disconnected, reconnects on next call"
            else:
                state = connection.state
            error = ""
            if connection is not None and connection.error and not connection.connected:
                error = "\n    " + connection.error.replace("\n", "\n    ")
            lines.append(f"{entry.name}: {state} ({entry.exposure}){error}")
        lines += [f"config error: {error}" for error in self.config.errors]
        return "\n".join(lines)

    async def close(self) -> None:
        self.closed = True
        if self.reported is not None and not self.reported.done():
            self.reported.cancel()
        await asyncio.gather(*(s.connection.close() for s in self.servers if s.connection is not None),
                             return_exceptions=True)
