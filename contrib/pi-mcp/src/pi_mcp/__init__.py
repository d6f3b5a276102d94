"""pi-mcp: the tools of MCP servers (stdio), offered to the model as pi tools.

Servers are configured in ``.pi/mcp.json`` (the project) and ``<agent dir>/mcp.json``
(every project); see :mod:`pi_mcp.config`. They start when the harness collects its
tools (``register_tools``, just before ``session_start``), all at once, and stop at
``session_shutdown``. Each server tool becomes ``mcp__<server>__<tool>`` with the
server's JSON Schema as its parameters; results map to text and image content
(:mod:`pi_mcp.results`). A server that fails to start is reported through the UI and
the log, and the others still work; a server that breaks later gives the model an error
result, not a crash. ``/mcp`` lists the servers and their tools.

Nothing of the ``mcp`` SDK (nor asyncio or the tool machinery) is imported unless a
server is configured, so loading the plugin costs next to nothing.
"""

from __future__ import annotations

import logging
import weakref
from typing import Any

from pi_core import Command, hookimpl
from pi_mcp.config import ServerConfig, load_config

log = logging.getLogger("pi.mcp")
EMPTY_SCHEMA = {"type": "object", "properties": {}}


class Servers:
    """The servers of one harness."""

    def __init__(self) -> None:
        self.connections: dict[str, Any] = {}
        self.failures: dict[str, str] = {}
        self.tools: list = []

    async def start(self, configs: list[ServerConfig], ctx) -> None:
        import asyncio

        from pi_mcp.connection import Connection, ServerError

        connections = [Connection(c) for c in configs]
        outcomes = await asyncio.gather(*(c.start() for c in connections), return_exceptions=True)
        for connection, outcome in zip(connections, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                reason = str(outcome) if isinstance(outcome, ServerError) else repr(outcome)
                self.failures[connection.name] = reason
                log.warning("MCP server %s failed to start: %s", connection.name, reason)
                ctx.ui.notify(f"pi-mcp: server {connection.name!r} failed to start: {reason}", "warning")
            else:
                self.connections[connection.name] = connection
        names: set[str] = set()
        for connection in self.connections.values():
            for spec in connection.tools:
                tool = make_tool(connection, spec, ctx)
                if tool.name in names:
                    ctx.ui.notify(f"pi-mcp: two tools are named {tool.name}; the second is left out", "warning")
                    continue
                names.add(tool.name)
                self.tools.append(tool)

    async def stop(self) -> None:
        import asyncio

        await asyncio.gather(*(c.stop() for c in self.connections.values()), return_exceptions=True)

    def describe(self) -> str:
        from pi_mcp.results import tool_name

        if not self.connections and not self.failures:
            return "No MCP servers are configured (.pi/mcp.json)."
        lines = []
        for name, connection in self.connections.items():
            state = "running" if connection.running else f"stopped ({connection.error or 'shut down'})"
            tools = [tool_name(name, t["name"]) for t in connection.tools]
            lines.append(f"{name}: {state}, {len(tools)} tools" + (f": {', '.join(tools)}" if tools else ""))
        for name, reason in self.failures.items():
            lines.append(f"{name}: failed to start: {reason}")
        return "\n".join(lines)


_servers: weakref.WeakKeyDictionary[Any, Servers] = weakref.WeakKeyDictionary()


def _schema(spec: dict, server: str, ctx) -> dict:
    """The server's input schema, or an open object schema if it is not a valid one."""
    schema = spec.get("inputSchema")
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return dict(EMPTY_SCHEMA)
    try:
        import jsonschema

        jsonschema.validators.validator_for(schema).check_schema(schema)
    except Exception as exc:
        ctx.ui.notify(f"pi-mcp: {server}/{spec['name']} has an invalid input schema ({exc}); "
                      "its arguments are not checked", "warning")
        return dict(EMPTY_SCHEMA)
    return {"type": "object", **schema}


def make_tool(connection, spec: dict, ctx):
    """The pi ``Tool`` for one tool (``spec``, as listed) of a connected server."""
    from pi_core import Tool, ToolResult
    from pi_mcp.connection import ServerError
    from pi_mcp.results import to_tool_result, tool_name

    server, remote = connection.name, spec["name"]
    description = spec.get("description") or spec.get("title") or remote

    async def execute(args: dict, run):
        try:
            if not connection.running and connection.error is None:  # stopped with its session
                await connection.ensure_running()
            result = await connection.call(remote, args)
        except ServerError as exc:
            return ToolResult.error(f"MCP server {server!r}, tool {remote!r}: {exc}")
        return to_tool_result(result, server, remote)

    return Tool(name=tool_name(server, remote), description=f"{description} (MCP server: {server})",
                parameters=_schema(spec, server, ctx), function=execute, label=f"{server}: {remote}")


@hookimpl
async def register_tools(ctx):
    from pi_core import project_allowed

    config = load_config(ctx.cwd, ctx.agent_dir,
                         project=project_allowed(getattr(ctx, "settings", None), ctx.cwd, ctx.agent_dir))
    for problem in config.problems:
        log.warning("%s", problem)
        ctx.ui.notify(f"pi-mcp: {problem}", "warning")
    previous = _servers.pop(ctx, None)
    if previous is not None:  # a reload: the old servers go first
        await previous.stop()
    if not config.servers:
        return []
    servers = _servers[ctx] = Servers()
    await servers.start(config.servers, ctx)
    return servers.tools


@hookimpl
async def session_shutdown(event, ctx):
    """Stop the servers; if the harness goes on with another session, a server starts
    again on the first call of one of its tools."""
    servers = _servers.get(ctx)
    if servers is not None:
        await servers.stop()


async def _mcp_command(args: str, ctx) -> str:
    servers = _servers.get(ctx)
    text = servers.describe() if servers is not None else "No MCP servers are configured (.pi/mcp.json)."
    ctx.ui.notify(text, "info")
    return text


@hookimpl
def register_commands(ctx):
    return [Command(name="mcp", description="List the MCP servers and their tools", handler=_mcp_command)]


def servers_of(ctx) -> Servers | None:
    """The running servers of a harness (its ``ctx``), for tests and other plugins."""
    return _servers.get(ctx)
