"""MCP resources through the three tools pi 1.6 (and Codex, opencode) give the model:
``list_mcp_resources``, ``list_mcp_resource_templates`` and ``read_mcp_resource``. They
take a ``server`` argument and reach every enabled, non-hidden server with resources, so
models trained on those tools use them unchanged.

Listings are compact JSON, ``{server?, resources: [{server, ...resource}], nextCursor?}``:
one page of one server (``cursor`` goes on), or every page of every server (the ones that
failed under ``errors``). MCP App resources (``ui://`` URIs, ``profile=mcp-app`` HTML)
are left out, as pi 1.6 does (nobody renders them here), and so are icons and ``_meta``.
A read resource reaches the model as text and images (binary ones saved to a temp file,
:mod:`.results`); codemode scripts get ``{server, uri, contents}`` (``structuredContent``
in the result's details).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

from pi_core import TextContent, Tool, ToolResult
from pi_plugins.mcp.connection import McpCallError, ServerConnection
from pi_plugins.mcp.results import READ_RESOURCE_TOOL, limit, resource_content

LIST_RESOURCES_TOOL = "list_mcp_resources"
LIST_TEMPLATES_TOOL = "list_mcp_resource_templates"
_MCP_APP_TYPE = re.compile(r';\s*profile\s*=\s*"?mcp-app"?', re.IGNORECASE)


def _string(description: str) -> dict:
    return {"type": "string", "description": description}


LIST_PARAMETERS = {
    "type": "object",
    "properties": {
        "server": _string("MCP server name. Omit to list every server with resources."),
        "cursor": _string("Opaque cursor from a previous call with the same server; omit for the first page."),
    },
    "additionalProperties": False,
}
READ_PARAMETERS = {
    "type": "object",
    "properties": {
        "server": _string("MCP server name exactly as configured. Must match the 'server' field returned by "
                          "list_mcp_resources."),
        "uri": _string("Resource URI to read. Must be one of the URIs returned by list_mcp_resources."),
    },
    "required": ["server", "uri"],
    "additionalProperties": False,
}
DESCRIPTIONS = {
    LIST_RESOURCES_TOOL: (
        "Lists resources provided by MCP servers. Resources allow servers to share data that provides context to "
        "language models, such as files, database schemas, or application-specific information. Prefer resources "
        "over web search when possible."),
    LIST_TEMPLATES_TOOL: (
        "Lists resource templates provided by MCP servers. Parameterized resource templates allow servers to share "
        "data that takes parameters and provides context to language models, such as files, database schemas, or "
        "application-specific information. Prefer resource templates over web search when possible."),
    READ_RESOURCE_TOOL: "Read a specific resource from an MCP server given the server name and resource URI.",
}

Connections = Callable[[], list[ServerConnection]]


class ResourceArgumentError(Exception):
    """Arguments the tool cannot use; the message is the error the model sees."""


def is_mcp_app(item: dict) -> bool:
    """An MCP App's user interface, which only hosts that render them can use."""
    uri = str(item.get("uri") or item.get("uriTemplate") or "")
    return uri.startswith("ui://") or bool(_MCP_APP_TYPE.search(str(item.get("mimeType") or "")))


def sorted_keys(value: Any) -> Any:
    """Keys in order at every level, as pi 1.6 has them from its SDK (so the JSON reads alike)."""
    if isinstance(value, dict):
        return {k: sorted_keys(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [sorted_keys(v) for v in value]
    return value


def listed(server: str, item: dict) -> dict:
    """A listed resource or template tagged with its server, without ``_meta`` and icons."""
    return {"server": server, **sorted_keys({k: v for k, v in item.items() if k not in ("_meta", "icons")})}


def _argument(args: Any, key: str) -> str | None:
    value = args.get(key) if isinstance(args, dict) else None
    if value is None:
        return None
    if not isinstance(value, str):
        raise ResourceArgumentError(f"{key} must be a string")
    return value.strip() or None


def _find(connections: Connections, name: str) -> ServerConnection:
    found = connections()
    for connection in found:
        if connection.name == name:
            return connection
    available = ", ".join(c.name for c in found)
    raise ResourceArgumentError(f'MCP server "{name}" has no resources'
                                + (f". Servers with resources: {available}" if available else ""))


def _json_result(tool: str, server: str | None, payload: dict) -> ToolResult:
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    content, full = limit([TextContent(text)])
    details: dict[str, Any] = {"server": server or "", "tool": tool}
    if full:
        details["fullOutputPath"] = full
    details["structuredContent"] = payload
    return ToolResult(content=content, details=details)


def _lister(key: str, page: Callable[[ServerConnection, str | None], Awaitable[tuple[list[dict], str | None]]],
            every: Callable[[ServerConnection], Awaitable[list[dict]]], connections: Connections):
    """One page of the named server, or every item of every server (failures under ``errors``)."""
    import asyncio

    async def listing(args: Any) -> dict:
        server_name, cursor = _argument(args, "server"), _argument(args, "cursor")
        if server_name:
            connection = _find(connections, server_name)
            items, next_cursor = await page(connection, cursor)
            payload: dict[str, Any] = {"server": connection.name,
                                       key: [listed(connection.name, i) for i in items if not is_mcp_app(i)]}
            if next_cursor is not None:
                payload["nextCursor"] = next_cursor
            return payload
        if cursor:
            raise ResourceArgumentError("cursor can only be used when a server is specified")
        servers = sorted(connections(), key=lambda c: c.name)
        outcomes = await asyncio.gather(*(every(c) for c in servers), return_exceptions=True)
        found: list[dict] = []
        errors = []
        for connection, outcome in zip(servers, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                errors.append({"server": connection.name, "error": str(outcome)})
            else:
                found += [listed(connection.name, i) for i in outcome if not is_mcp_app(i)]
        return {key: found, **({"errors": errors} if errors else {})}

    return listing


async def _read(connections: Connections, args: Any) -> ToolResult:
    server_name, uri = _argument(args, "server"), _argument(args, "uri")
    if not server_name:
        raise ResourceArgumentError("server must be provided")
    if not uri:
        raise ResourceArgumentError("uri must be provided")
    connection = _find(connections, server_name)
    contents = [sorted_keys({k: v for k, v in c.items() if k != "_meta"}) for c in await connection.read_resource(uri)]
    blocks: list = []
    for item in contents:
        if len(contents) > 1:  # several (a folder, say): each labelled with its URI
            blocks.append(TextContent(f"{item.get('uri')}:"))
        blocks.append(resource_content(item))
    content, full = limit(blocks or [TextContent(f"Resource {uri} is empty.")])
    details: dict[str, Any] = {"server": connection.name, "tool": READ_RESOURCE_TOOL}
    if full:
        details["fullOutputPath"] = full
    details["structuredContent"] = {"server": connection.name, "uri": uri, "contents": contents}
    return ToolResult(content=content, details=details)


def resource_tools(connections: Connections, exposure: str) -> list[Tool]:
    """The three tools, reaching the servers ``connections()`` gives at call time."""

    async def resources_page(connection: ServerConnection, cursor: str | None):
        return await connection.list_page("resources", cursor)

    async def templates_page(connection: ServerConnection, cursor: str | None):
        return await connection.list_page("resourceTemplates", cursor)

    async def all_resources(connection: ServerConnection):
        return await connection.list_all("resources")

    async def all_templates(connection: ServerConnection):
        return await connection.list_all("resourceTemplates")

    list_resources = _lister("resources", resources_page, all_resources, connections)
    list_templates = _lister("resourceTemplates", templates_page, all_templates, connections)

    def tool(name: str, parameters: dict, run: Callable[[Any], Awaitable[ToolResult]]) -> Tool:
        async def execute(args: Any, _run: Any) -> ToolResult:
            try:
                return await run(args)
            except (ResourceArgumentError, McpCallError) as exc:
                return ToolResult.error(str(exc))

        return Tool(name=name, description=DESCRIPTIONS[name], parameters=parameters, function=execute,
                    label=name, default_active=exposure == "direct", exposure=exposure,  # type: ignore[arg-type]
                    annotations={"readOnlyHint": True})  # as pi 1.6 marks them

    async def run_list_resources(args: Any) -> ToolResult:
        return _json_result(LIST_RESOURCES_TOOL, _argument(args, "server"), await list_resources(args))

    async def run_list_templates(args: Any) -> ToolResult:
        return _json_result(LIST_TEMPLATES_TOOL, _argument(args, "server"), await list_templates(args))

    async def run_read(args: Any) -> ToolResult:
        return await _read(connections, args)

    return [tool(LIST_RESOURCES_TOOL, LIST_PARAMETERS, run_list_resources),
            tool(LIST_TEMPLATES_TOOL, LIST_PARAMETERS, run_list_templates),
            tool(READ_RESOURCE_TOOL, READ_PARAMETERS, run_read)]
