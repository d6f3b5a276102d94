"""MCP servers, as pi 1.6's built-in ``mcp`` extension (its ``docs/mcp.md``): the
servers of ``~/.pi/agent/mcp.json`` and, in a trusted project, ``.pi/mcp.json``
(:mod:`.config`), over stdio or streamable HTTP (:mod:`.connection`, on the official
``mcp`` SDK), their tools as ``mcp__<server>__<tool>`` pi tools (:mod:`.servers`) and
their resources through ``list_mcp_resources``, ``list_mcp_resource_templates`` and
``read_mcp_resource`` (:mod:`.resources`).

- ``session_start``: every enabled server connects in the background;
- ``before_agent_start``: the first prompt waits (up to 10 s) only for servers with
  ``direct`` tools; the ``mcp_servers`` section of the system prompt, a change of it
  added as a message (:mod:`.prompt_section`);
- ``before_tool_call``: a call that reaches MCP tools waits for the servers it needs;
- ``session_shutdown``: the servers stop;
- ``register_flags``: ``--no-mcp`` (no servers for this run);
- ``register_cli_commands``: ``pi mcp add|remove|list|login|logout`` (:mod:`.cli`; OAuth
  in :mod:`.oauth` and :mod:`.login`);
- ``register_commands``: ``/mcp``: the servers' dialog in the chat, else their state, and
  ``/mcp login|logout|reconnect [server]`` (:mod:`.manage`).

Nothing of the SDK is imported unless a server is to connect, so ``pi -p`` without
servers pays nothing for it. ``-builtin:mcp`` drops it all.
"""

from __future__ import annotations

import weakref
from pathlib import Path
from typing import Any

from pi_core import CliCommand, Command, Flag, hookimpl

_running: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def user_config_path(agent_dir: str | Path) -> Path:
    return Path(agent_dir) / "mcp.json"


def project_config_path(cwd: str | Path) -> Path:
    return Path(cwd) / ".pi" / "mcp.json"


def servers_of(ctx: Any) -> Any:
    """The session's :class:`pi_plugins.mcp.servers.McpServers`, or None (for tests and
    for plugins such as codemode and tool search that reach non-direct tools)."""
    return _running.get(ctx)


@hookimpl
def register_flags():
    return [Flag("no-mcp", "Disable the built-in MCP support for this run: no servers connect, no MCP tools.")]


@hookimpl
def register_cli_commands():
    return [CliCommand("mcp", "pi_plugins.mcp.cli:mcp_command", "Add, remove and check MCP servers")]


@hookimpl
async def session_start(event, ctx):
    await _stop(ctx)
    if ctx.get_flag("no-mcp"):
        return
    if not user_config_path(ctx.agent_dir).is_file() and not project_config_path(ctx.cwd).is_file():
        return  # no servers: the configuration's reader is not even imported
    from pi_core import project_allowed
    from pi_plugins.mcp.config import load

    config = load(ctx.agent_dir, ctx.cwd,
                  project_trusted=project_allowed(getattr(ctx, "settings", None), ctx.cwd, ctx.agent_dir))
    if not config.servers and not config.errors:
        return
    from pi_plugins.mcp.servers import McpServers

    servers = _running[ctx] = McpServers(ctx, config)
    servers.start()
    servers.ensure_discovery_active()


@hookimpl
async def before_agent_start(event, ctx):
    """Wait for the servers with ``direct`` tools, then put the ``mcp_servers`` section
    where the model sees it (:mod:`.prompt_section`)."""
    servers = _running.get(ctx)
    if servers is None:
        return None
    await servers.pick_up_sign_ins()
    await servers.wait_for_direct()
    from pi_plugins.mcp.prompt_section import render

    return servers.prompt_section.apply(event, render(servers.servers))


@hookimpl
async def before_tool_call(event, ctx):
    """A call that reaches MCP tools waits for the servers it needs (see
    :meth:`pi_plugins.mcp.servers.McpServers.reached_by`)."""
    servers = _running.get(ctx)
    if servers is not None:
        known = next((t for t in ctx.get_all_tools() if t.name == event.tool_name), None)
        reaches = getattr(known, "reaches_tools", None)
        await servers.wait_for(servers.reached_by(event.tool_name, event.arguments, reaches))


@hookimpl
async def session_shutdown(event, ctx):
    await _stop(ctx)


async def _stop(ctx: Any) -> None:
    servers = _running.pop(ctx, None)
    if servers is not None:
        await servers.close()


async def _mcp_command(args: str, ctx) -> str | None:
    servers = _running.get(ctx)
    if ctx.get_flag("no-mcp"):
        text = "MCP is disabled for this run (--no-mcp)."
    elif servers is None:
        from pi_plugins.mcp.manage import without_servers

        text, level = without_servers(args, ctx.agent_dir)
        ctx.ui.notify(text, level)
        return text
    else:
        from pi_plugins.mcp.manage import command

        return await command(args, ctx, servers)
    ctx.ui.notify(text, "info")
    return text


@hookimpl
def register_commands():
    return [Command(name="mcp", description="Manage MCP servers: sign in, reconnect, enable or disable, "
                    "and change exposure", handler=_mcp_command, argument_hint="[login|logout|reconnect] [server]",
                    argument_completions=_mcp_arguments)]


def _mcp_arguments(prefix: str) -> list[dict] | None:
    """The completion has no ctx; a chat runs one session's servers."""
    from pi_plugins.mcp.manage import argument_completions

    return argument_completions(next(iter(_running.values()), None), prefix)
