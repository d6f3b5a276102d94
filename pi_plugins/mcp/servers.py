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
from pathlib import Path
from typing import Any

import attrs

from pi_core import Tool, ToolResult
from pi_plugins.mcp.config import McpConfig, ServerEntry, namespace, user_config_path
from pi_plugins.mcp.connection import McpCallError, ServerConnection
from pi_plugins.mcp.log import ServerLog
from pi_plugins.mcp.naming import tool_names
from pi_plugins.mcp.prompt_section import PromptSection
from pi_plugins.mcp.resources import (
    LIST_RESOURCES_TOOL,
    LIST_TEMPLATES_TOOL,
    READ_RESOURCE_TOOL,
    resource_tools,
)
from pi_plugins.mcp.results import to_tool_result

STARTUP_WAIT_S = 10.0
RESOURCE_TOOL_NAMES = (LIST_RESOURCES_TOOL, LIST_TEMPLATES_TOOL, READ_RESOURCE_TOOL)
EXPOSURES_OF_TOOLS = ("direct", "codemode", "deferred")


@attrs.define(eq=False)
class McpTool(Tool):
    """A server's tool: a pi tool with its ``exposure`` and the server as its ``namespace``
    (``{name, aliases, description, instructions}``), which tool search ranks by and
    codemode's ``describeNamespace()`` answers with."""


@attrs.define(eq=False)
class Server:
    entry: ServerEntry
    connection: ServerConnection | None = None
    ready: asyncio.Future | None = None
    tool_names: dict[str, str] = attrs.field(factory=dict)  # server tool -> pi tool name
    tokens_when_needed: Any = None  # the stored OAuth tokens when it came to need a sign-in


def describe_state(server: Server) -> str:
    """The short state ``/mcp`` and the start-up report show."""
    if not server.entry.enabled:
        return "disabled"
    connection = server.connection
    if connection is None:
        return "starting"
    if connection.state == "needs-auth":
        return "needs sign-in"
    if connection.state == "failed":
        return f"failed: {(connection.error or 'unknown error').splitlines()[0]}"
    if connection.connected:
        count = len(connection.tools)
        return f"connected · {count} tool{'' if count == 1 else 's'}" + (" · resources" if connection.has_resources
                                                                           else "")
    return {"connecting": "connecting…", "disconnected": "disconnected, reconnects on next call"}.get(
        connection.state, connection.state)


def summary_line(description: str | None, instructions: str | None) -> str:
    """pi 1.6's one line for a server: the configured description, else the server's
    instructions, first line."""
    text = (description or "").strip() or (instructions or "").strip()
    return text.splitlines()[0].strip() if text else ""


def server_namespace(server: Server) -> dict:
    """``{name, aliases, description?, instructions?}``: the server's name is the alias
    (pi 1.6), so scripts may look ``mcp__docs`` up as ``docs``."""
    instructions = server.connection.instructions if server.connection is not None else None
    description = summary_line(server.entry.config.get("description"), None) or None
    found: dict = {"name": namespace(server.entry.name), "aliases": [server.entry.name]}
    if description:
        found["description"] = description
    if instructions:
        found["instructions"] = instructions
    return found


#: The boolean hints of an MCP tool's annotations a pi 1.6 tool carries (``Tool.annotations``).
ANNOTATION_HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def mcp_tool(server: Server, spec: dict, name: str, exposure: str) -> Tool:
    """The pi tool for one server tool, as pi 1.6 declares it (description, else title,
    else a sentence naming it; the input schema as an object schema; label server/tool;
    the annotations' boolean hints)."""
    remote = spec["name"]
    server_name = server.entry.name
    schema = dict(spec.get("inputSchema") or {})
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    given: dict = spec["annotations"] if isinstance(spec.get("annotations"), dict) else {}
    title = spec.get("title") or given.get("title")
    hints = {hint: given[hint] for hint in ANNOTATION_HINTS if isinstance(given.get(hint), bool)}
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

    return McpTool(name=name, description=description, parameters=schema, function=execute,
                   label=f"{server_name}/{remote}", default_active=exposure == "direct",
                   exposure=exposure, namespace=server_namespace(server),  # type: ignore[arg-type]
                   annotations=hints or None)


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
        self.warned_unreachable = False
        self.prompt_section = PromptSection()
        self.resource_exposure: str | None = None  # the resource tools' exposure; None: not registered

    def find(self, name: str) -> Server | None:
        return next((s for s in self.servers if s.entry.name == name), None)

    # ------------------------------------------------------------ connecting

    def start(self) -> None:
        """Connect every enabled server in the background; report the problems once all
        have settled (or at once when none is to connect)."""
        for server in self.servers:
            if server.entry.enabled:
                self.connect(server)
        pending = [s.ready for s in self.servers if s.ready is not None]
        self.reported = asyncio.ensure_future(self._report_when_settled(pending))

    def connect(self, server: Server) -> None:
        """Open (again) the server's connection in the background."""
        server.connection = ServerConnection(server.entry, self.ctx.cwd, on_tools=self._register,
                                             on_log=self.log.write, agent_dir=Path(self.ctx.agent_dir))
        server.ready = asyncio.ensure_future(self._settle(server, server.connection))

    async def _settle(self, server: Server, connection: ServerConnection) -> None:
        with contextlib.suppress(McpCallError, asyncio.CancelledError):
            await connection.get_client()
        if connection.state == "needs-auth":
            server.tokens_when_needed = self._stored_tokens(server)

    def _stored_tokens(self, server: Server) -> Any:
        from pi_plugins.mcp.oauth import AuthStore, server_url

        try:
            return AuthStore(Path(self.ctx.agent_dir)).state(server.entry.name, server_url(server.entry)).get("tokens")
        except (OSError, ValueError):
            return None

    async def _report_when_settled(self, pending: list) -> None:
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        if not self.closed:
            self.report_problems()

    def report_problems(self) -> None:
        lines = [f"config: {error}" for error in self.config.errors]
        lines += [f"{s.entry.name}: {describe_state(s)}" for s in self.servers
                  if s.connection is not None and s.connection.state in ("failed", "needs-auth")]
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

    async def wait_for(self, names: list[str] | None = None, timeout: float | None = None) -> None:
        """Wait for the named servers (all when None) to settle, as a call that reaches
        their tools needs them registered first (pi 1.6 waits the same way)."""
        ready = [s.ready for s in self.servers if s.entry.enabled and s.ready is not None
                 and not s.ready.done() and (names is None or s.entry.name in names)]
        if ready:
            await asyncio.wait(ready, timeout=timeout or max(s.entry.timeout for s in self.servers))

    def reached_by(self, tool: str, arguments: Any, reaches: Any = None) -> list[str] | None:
        """The servers a call of ``tool`` needs (None: every server). A tool that declares
        pi 1.6's ``reaches_tools`` (codemode, ``tool_search``) says: ``"all"``, or words, each
        needing the servers whose namespace or tools it holds; the resource tools need all;
        an MCP tool its own."""
        if reaches is not None:
            try:
                words = reaches(arguments)
            except Exception:
                return None  # a broken declaration: wait for every server rather than too few
            if words == "all" or not isinstance(words, (list, tuple, set)):
                return None
            return [s.entry.name for s in self.servers if any(
                namespace(s.entry.name) in word or any(t in word for t in s.tool_names.values())
                for word in map(str, words))]
        if tool in RESOURCE_TOOL_NAMES:
            return None
        return [s.entry.name for s in self.servers if tool in s.tool_names.values()
                or tool.startswith(namespace(s.entry.name) + "__")]

    async def pick_up_sign_ins(self) -> None:
        """Servers that wait for a sign-in reconnect once credentials were stored for
        them meanwhile (``pi mcp login`` in another process, for example run by the
        agent), so the prompt about to start has their tools, as pi 1.6 does."""
        waiting = [s for s in self.servers if s.entry.enabled and s.connection is not None
                   and s.connection.state == "needs-auth"]
        if not waiting:
            return
        signed_in = []
        for server in waiting:
            tokens = self._stored_tokens(server)
            if isinstance(tokens, dict) and tokens.get("access_token") and tokens != server.tokens_when_needed:
                old = server.connection
                self.connect(server)
                assert old is not None
                await old.close()
                signed_in.append(server.entry.name)
        if signed_in:
            await self.wait_for(signed_in, STARTUP_WAIT_S)

    def ensure_discovery_active(self) -> None:
        """Activate what reaches the non-direct tools, from the config (so before the
        servers connect), as pi 1.6 does: ``codemode`` for ``codemode`` exposure unless
        ``autoEnableCodemode`` is false, ``tool_search`` for ``deferred``; warn once when
        neither is active."""
        exposures = {e for s in self.servers if s.entry.enabled for e in s.entry.exposures()}
        needs_codemode, needs_search = "codemode" in exposures, "deferred" in exposures
        if not (needs_codemode or needs_search):
            return
        registered = {t.name for t in self.ctx.get_all_tools()}
        active = list(self.ctx.get_active_tools())
        auto = self.config.auto_enable_codemode is not False
        add = [name for name, wanted in (("codemode", needs_codemode and auto), ("tool_search", needs_search))
               if wanted and name in registered and name not in active]
        if add:
            self.ctx.set_active_tools([*active, *add])
        reachable = {*active, *add} & registered & {"codemode", "tool_search"}
        if reachable or self.warned_unreachable:
            return
        self.warned_unreachable = True
        reason = " (autoEnableCodemode is false)" if needs_codemode and "codemode" in registered and not auto else ""
        self.ctx.ui.notify("MCP tools are only reachable from the codemode or tool_search tool, but neither is "
                           f"active{reason}; they cannot be called.", "warning")

    # ------------------------------------------------------------ tools

    def _taken_by_others(self, server: Server):
        others = {name for s in self.servers if s is not server for name in s.tool_names.values()}
        return others.__contains__

    def _register(self, connection: ServerConnection) -> None:
        """(Re-)register a server's tools from its current list (the hidden ones as
        ``hidden``: listed, never declared or called); withdraw the ones it dropped."""
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
            exposure = server.entry.tool_exposure(remote)  # "hidden": registered, unreachable (pi 1.6)
            choice = None if exposure == "hidden" else self._flags_choice(name, exposure)
            if choice == "withdraw":
                self._unregister(name)
                continue
            server.tool_names[remote] = name
            with contextlib.suppress(Exception):
                self.ctx.register_tool(mcp_tool(server, specs[remote], name, exposure))
                active = self.ctx.get_active_tools()
                if choice == "off" and name in active:
                    self.ctx.set_active_tools([n for n in active if n != name])
                elif choice == "on" and name not in active:
                    self.ctx.set_active_tools([*active, name])
        self.sync_resource_tools()

    def resource_connections(self) -> list[ServerConnection]:
        """The servers the resource tools reach: enabled, not hidden, with resources."""
        return [s.connection for s in self.servers if s.entry.enabled and s.entry.exposure != "hidden"
                and s.connection is not None and s.connection.has_resources]

    def sync_resource_tools(self) -> None:
        """Register the resource tools with the widest exposure of the servers they reach
        (``direct``, then ``codemode``, then ``deferred``), as pi 1.6 does; withdraw them
        when no server has resources."""
        exposures = {c.entry.exposure for c in self.resource_connections()}
        wanted = next((e for e in EXPOSURES_OF_TOOLS if e in exposures), None)
        if wanted == self.resource_exposure:
            return
        for name in RESOURCE_TOOL_NAMES:
            self._unregister(name)
        self.resource_exposure = wanted
        if wanted is None:
            return
        for tool in resource_tools(self.resource_connections, wanted):
            choice = self._flags_choice(tool.name, wanted)
            if choice == "withdraw":
                continue
            with contextlib.suppress(Exception):
                self.ctx.register_tool(tool)
                active = self.ctx.get_active_tools()
                if choice == "off" and tool.name in active:
                    self.ctx.set_active_tools([n for n in active if n != tool.name])
                elif choice == "on" and tool.name not in active:
                    self.ctx.set_active_tools([*active, tool.name])

    def _flags_choice(self, name: str, exposure: str) -> str | None:
        """What ``--tools``/``--exclude-tools``/``--no-tools`` say of a tool registering now
        (the command line keeps them on the run's ctx; None without them)."""
        from pi_plugins.cli.tool_selection import late_tools

        flags = late_tools(self.ctx)
        return flags.decide(name, exposure) if flags is not None else None

    def withdraw_tools(self, server: Server) -> None:
        """A disabled server's tools leave (its resources with it)."""
        for name in server.tool_names.values():
            self._unregister(name)
        server.tool_names = {}
        self.sync_resource_tools()

    def apply_exposure(self, server: Server) -> None:
        """After an exposure change: register the tools again with it, and take tools no
        longer ``direct`` out of the declared set."""
        if server.connection is not None and server.connection.connected:
            self._register(server.connection)
        self.sync_resource_tools()
        indirect = {name for remote, name in server.tool_names.items()
                    if server.entry.tool_exposure(remote) != "direct"}
        active = self.ctx.get_active_tools()
        if indirect & set(active):
            self.ctx.set_active_tools([n for n in active if n not in indirect])

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
            if connection is not None and connection.state == "needs-auth" and entry.enabled:
                lines.append(f"{entry.name}: needs sign-in, run /mcp login {entry.name} ({entry.exposure})")
                continue
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
