"""``/mcp``, as pi 1.6's: in the chat a dialog that lists the servers (those that need
attention first) with their state, exposure and source, and for one server offers what
fits its state (sign in, tools, reconnect, sign out, exposure, enable or disable, also
"in this project"); elsewhere the status text; and ``/mcp login|logout|reconnect
[server]`` directly. Exposure and enabled-state changes are saved to the file that
defines the server (or its project override) and apply at once.

The dialog is a chain of ``ctx.ui.select`` menus, so it needs nothing of the chat but
its dialogs.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from pi_plugins.mcp.config import EXPOSURES, project_config_path, update_server, user_config_path
from pi_plugins.mcp.connection import McpCallError
from pi_plugins.mcp.servers import McpServers, Server, describe_state

USAGE = "Usage: /mcp, /mcp login [server], /mcp logout [server], /mcp reconnect [server]"
NO_OAUTH = "No enabled MCP server uses OAuth. Only HTTP servers without an Authorization header do."
EXPOSURE_DESCRIPTIONS = {
    "codemode": "called from codemode scripts, which find them with searchTools()",
    "deferred": "not declared until tool_search loads them, then called directly; no codemode needed",
    "direct": "declared to the model like built-in tools",
    "hidden": "unreachable",
}
BACK = "← back"
#: How long a menu drawn once waits for connections under way before it is drawn.
SETTLE_WAIT_S = 10.0
#: How often a live menu looks at the servers again.
WATCH_S = 0.2


def attention_rank(server: Server) -> int:
    """Servers that need the user first (pi 1.6's order)."""
    if not server.entry.enabled:
        return 5
    state = server.connection.state if server.connection is not None else None
    return {"needs-auth": 0, "failed": 1, "disconnected": 2, "connected": 4}.get(state or "", 3)


def _source(server: Server) -> str:
    return "global, project override" if server.entry.override else server.entry.scope


def _oauth(server: Server) -> bool:
    return server.entry.enabled and server.entry.uses_oauth


# ---------------------------------------------------------------- actions


async def reconnect(servers: McpServers, server: Server) -> str | None:
    """Connect the server again; an error message, or None."""
    if not server.entry.enabled or server.connection is None:
        return f'MCP server "{server.entry.name}" is disabled.'
    old = server.connection
    servers.connect(server)
    await old.close()
    assert server.connection is not None
    try:
        await server.connection.get_client()
    except McpCallError as exc:
        return str(exc)
    return None


async def sign_in(servers: McpServers, server: Server, ctx: Any) -> str | None:
    """The browser sign-in, then a reconnect; an error message, or None."""
    from pi_plugins.browser import open_browser
    from pi_plugins.mcp.login import sign_in as run_sign_in

    name = server.entry.name

    def show(url: str) -> None:
        ctx.ui.notify(f'Sign in to MCP server "{name}" in your browser:\n{url}', "info")
        open_browser(url)

    async def paste(deliver: Any) -> None:
        text = await ctx.ui.input(f'Waiting for sign-in to "{name}". If the browser cannot reach this machine, '
                                  "paste the URL it was redirected to.", "http://127.0.0.1:.../callback?code=...")
        if text and text.strip():
            deliver(text.strip())

    try:
        connection = await run_sign_in(server.entry, ctx.cwd, Path(ctx.agent_dir), show_url=show, paste=paste,
                                       on_log=servers.log.write)
    except asyncio.CancelledError:
        return "Sign-in cancelled."
    except Exception as exc:  # noqa: BLE001 - one line for the user
        from pi_plugins.mcp.login import one_line

        return f"Sign-in failed: {one_line(exc, name)}"
    await connection.close()
    failure = await reconnect(servers, server)
    return f"Signed in, but {failure}" if failure else None


async def sign_out(servers: McpServers, server: Server, ctx: Any) -> bool:
    """Delete the stored credentials and reconnect (the server then needs a sign-in)."""
    from pi_plugins.mcp.login import sign_out as forget

    removed = forget(server.entry, Path(ctx.agent_dir))
    await reconnect(servers, server)
    return removed


def _save(servers: McpServers, server: Server, patch: dict, in_project: bool = False) -> str | None:
    entry = server.entry
    path = Path(project_config_path(servers.ctx.cwd) if in_project else (entry.override or entry.source))
    try:
        update_server(path, entry.name, patch)
    except (OSError, ValueError) as exc:
        return f"Could not update {path}: {exc}"
    server.entry = attrs.evolve(entry, config={**entry.config, **patch},
                                override=str(path) if in_project else entry.override)
    return None


async def set_enabled(servers: McpServers, server: Server, enabled: bool, in_project: bool = False) -> str | None:
    failed = _save(servers, server, {"enabled": enabled}, in_project)
    if failed:
        return failed
    if enabled:
        servers.connect(server)
        servers.ensure_discovery_active()
        return None
    connection, server.connection, server.ready = server.connection, None, None
    servers.withdraw_tools(server)
    if connection is not None:
        await connection.close()
    return None


def set_exposure(servers: McpServers, server: Server, exposure: str) -> str | None:
    failed = _save(servers, server, {"exposure": exposure})
    if failed:
        return failed
    servers.apply_exposure(server)
    servers.ensure_discovery_active()
    return None


# ---------------------------------------------------------------- the dialog


def _server_description(server: Server) -> str:
    return f"{describe_state(server)} · {server.entry.exposure} · {_source(server)}"


def _actions(servers: McpServers, server: Server) -> list[tuple[str, str, str]]:
    """(value, label, description) of what fits the server's state, in pi 1.6's order
    and words."""
    entry, connection = server.entry, server.connection
    saved = "saved to the project mcp.json" if entry.override else f"saved to the {entry.scope} mcp.json"
    in_project = entry.scope == "global" and not entry.override and servers.config.project_config is not None
    in_project_saved = "saved to the project mcp.json"
    items: list[tuple[str, str, str]] = []
    if not entry.enabled:
        items.append(("enable", "Enable", saved))
        if in_project:
            items.append(("enable-project", "Enable in this project", in_project_saved))
        return items
    state = connection.state if connection is not None else None
    if state == "needs-auth":
        items.append(("signin", "Sign in", "opens the browser"))
    if state == "connected" and connection is not None:
        items.append(("tools", "Tools", f"{len(connection.tools)} offered"))
    if state in ("failed", "disconnected", "connected", "needs-auth"):
        items.append(("reconnect", "Reconnect", ""))
    if state == "connected" and entry.uses_oauth:
        items.append(("signout", "Sign out", "deletes the stored credentials"))
    items.append(("exposure", "Exposure", entry.exposure))
    items.append(("disable", "Disable", saved))
    if in_project:
        items.append(("disable-project", "Disable in this project", in_project_saved))
    return items


def _details(server: Server) -> str:
    entry, connection = server.entry, server.connection
    lines = [f"MCP server {entry.name}", entry.transport(), f"{entry.scope}: {entry.source}"]
    if entry.override:
        lines.append(f"project override: {entry.override}")
    state = describe_state(server)
    lines.append(f"State: {state.split(':')[0] if state.startswith('failed') else state}")
    if connection is not None and not connection.connected and connection.error:
        lines.append(connection.error)
    return "\n".join(lines)


async def _tools(ctx: Any, server: Server) -> None:
    exposure = server.entry.exposure
    rows: list[tuple[str, Any, str]] = []
    for tool in server.connection.tools if server.connection is not None else []:
        own = server.entry.tool_exposure(tool["name"])
        description = (tool.get("description") or "").strip().split("\n")[0]
        rows.append((tool["name"], tool["name"], description if own == exposure else f"[{own}] {description}"))
    title = f"Tools of {server.entry.name}\nExposure {exposure}: {EXPOSURE_DESCRIPTIONS[exposure]}"
    await _choose(ctx, lambda: (title, rows or [("The server offers no tools.", None, "")]), _nothing)


async def _exposure(ctx: Any, servers: McpServers, server: Server) -> str | None:
    current = server.entry.exposure
    where = server.entry.override or server.entry.source
    rows = [(f"{'✓ ' if e == current else '  '}{e}", e, EXPOSURE_DESCRIPTIONS[e]) for e in EXPOSURES]
    choice = await _choose(ctx, lambda: (f"Exposure of {server.entry.name}\nSaved to {where}.", rows), _nothing)
    if choice is None or choice == current:
        return None
    return set_exposure(servers, server, choice)


async def _nothing() -> None:
    """Nothing to wait for before a menu that does not change."""


async def run_action(ctx: Any, servers: McpServers, server: Server, action: str) -> str | None:
    """One menu action; a message to show, or None."""
    if action == "signin":
        return await sign_in(servers, server, ctx)
    if action == "reconnect":
        return await reconnect(servers, server)
    if action == "signout":
        await sign_out(servers, server, ctx)
        return None
    if action == "tools":
        await _tools(ctx, server)
        return None
    if action == "exposure":
        return await _exposure(ctx, servers, server)
    if action in ("enable", "disable", "enable-project", "disable-project"):
        return await set_enabled(servers, server, action.startswith("enable"), action.endswith("-project"))
    return None


async def _settled(servers: McpServers, only: Server | None = None) -> None:
    """Wait (a while) for connections under way, so a menu that is drawn once (where the
    UI has no live select) shows where they ended."""
    pending = [s.ready for s in servers.servers if s.ready is not None and not s.ready.done()
               and (only is None or s is only)]
    if pending:
        await asyncio.wait([asyncio.shield(p) for p in pending], timeout=SETTLE_WAIT_S)


#: A menu's title and options: ``(label, value, description)``.
Menu = Callable[[], tuple[str, list[tuple[str, Any, str]]]]


def _watch(content: Menu) -> Callable[[Callable[[], None]], Callable[[], None]]:
    """``subscribe`` for a live select: calls back whenever what ``content()`` gives
    changes (servers connecting, failing, dropping, signing in), looked at every
    :data:`WATCH_S`; returns the unsubscribe."""
    def subscribe(changed: Callable[[], None]) -> Callable[[], None]:
        async def watch() -> None:
            last = content()
            while True:
                await asyncio.sleep(WATCH_S)
                now = content()
                if now != last:
                    last = now
                    changed()

        task = asyncio.ensure_future(watch())

        def unsubscribe() -> None:
            task.cancel()

        return unsubscribe

    return subscribe


async def _choose(ctx: Any, content: Menu, settle: Callable[[], Any]) -> Any:
    """One menu: in the chat redrawn live as pi 1.6's; elsewhere drawn once after
    ``settle()``. The chosen option's value, or None."""
    live = getattr(ctx.ui, "select_live", None)
    if live is not None:
        return await live(content, _watch(content))
    await settle()
    title, options = content()
    values = {f"{label} — {description}" if description else label: value for label, value, description in options}
    choice = await ctx.ui.select(title, list(values))
    return values.get(choice) if choice is not None else None


def _servers_menu(servers: McpServers) -> tuple[str, list[tuple[str, Any, str]]]:
    ordered = sorted(servers.servers, key=lambda s: (attention_rank(s), s.entry.name))
    notices = [f"config: {error}" for error in servers.config.errors]
    return "\n".join(["MCP servers", *notices]), [(s.entry.name, s.entry.name, _server_description(s))
                                                   for s in ordered]


def _server_menu(servers: McpServers, server: Server, message: str | None) -> tuple[str, list[tuple[str, Any, str]]]:
    details = _details(server) + (f"\n{message}" if message else "")
    return details, [*((label, value, description) for value, label, description in _actions(servers, server)),
                     (BACK, BACK, "")]


async def dialog(ctx: Any, servers: McpServers) -> None:
    """The servers menu, then one server's menu, until the user closes them."""
    while True:
        if not servers.servers:
            ctx.ui.notify(f"No MCP servers configured. Add them to {user_config_path(ctx.agent_dir)} "
                          "or .pi/mcp.json.", "info")
            return
        name = await _choose(ctx, lambda: _servers_menu(servers), lambda: _settled(servers))
        if name is None:
            return
        message: str | None = None
        while (server := servers.find(name)) is not None:
            picked = await _choose(ctx, functools.partial(_server_menu, servers, server, message),
                                   functools.partial(_settled, servers, server))
            if picked is None or picked == BACK:
                break
            message = await run_action(ctx, servers, server, picked)


# ---------------------------------------------------------------- the command


def argument_completions(servers: McpServers | None, prefix: str) -> list[dict] | None:
    """``/mcp``'s arguments as pi 1.6 completes them: the action, then the servers it
    applies to (with their state)."""
    action, *rest = prefix.lstrip().split(" ", 1) if prefix.strip() else [""]
    if not rest:
        return [{"value": f"{word} ", "label": word} for word in ("login", "logout", "reconnect")
                if word.startswith(action)] or None
    name = rest[0].strip()
    if action not in ("login", "logout", "reconnect") or " " in name or servers is None:
        return None
    fits = (lambda s: s.connection is not None) if action == "reconnect" else _oauth
    return [{"value": f"{action} {s.entry.name}", "label": s.entry.name, "description": describe_state(s)}
            for s in servers.servers if fits(s) and s.entry.name.startswith(name)] or None



def _pick(servers: McpServers, name: str | None, eligible: Any, preferred: Any, none: str, ctx: Any):
    async def pick() -> Server | None:
        if name:
            server = servers.find(name)
            if server is None:
                ctx.ui.notify(f'No MCP server named "{name}".', "error")
            elif not eligible(server):
                ctx.ui.notify(none, "error")
            return server if server is not None and eligible(server) else None
        candidates = [s for s in servers.servers if eligible(s)]
        if not candidates:
            ctx.ui.notify(none, "info")
            return None
        liked = [s for s in candidates if preferred(s)]
        if len(candidates) == 1 or len(liked) == 1:
            return (liked or candidates)[0]
        choice = await ctx.ui.select("MCP server", [s.entry.name for s in candidates])
        return servers.find(choice) if choice else None

    return pick()


def without_servers(args: str, agent_dir: Any) -> tuple[str, str]:
    """What ``/mcp …`` says, and how loud, where no server is configured (pi 1.6's words:
    each action finds no server it could act on)."""
    words = args.split()
    if not words:
        return f"No MCP servers configured. Add them to {user_config_path(agent_dir)} or .pi/mcp.json.", "info"
    if len(words) > 2 or words[0] not in ("login", "logout", "reconnect"):
        return USAGE, "warning"
    if len(words) == 2:
        return f'No MCP server named "{words[1]}".', "error"
    return ("No enabled MCP server to reconnect." if words[0] == "reconnect" else NO_OAUTH), "info"


async def command(args: str, ctx: Any, servers: McpServers) -> str | None:
    """``/mcp [login|logout|reconnect [server]]``; the status text where one is shown."""
    words = args.split()
    if not words:
        if getattr(ctx, "mode", None) == "tui" and getattr(ctx.ui, "has_ui", False):
            await dialog(ctx, servers)
            return None
        if servers.reported is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(servers.reported)
        text = servers.status()
        ctx.ui.notify(text, "info")
        return text
    if len(words) > 2 or words[0] not in ("login", "logout", "reconnect"):
        ctx.ui.notify(USAGE, "warning")
        return None
    action, name = words[0], (words[1] if len(words) > 1 else None)
    if action == "reconnect":
        server = await _pick(servers, name, lambda s: s.connection is not None,
                             lambda s: s.connection is not None and s.connection.state in ("failed", "disconnected"),
                             "No enabled MCP server to reconnect.", ctx)
        if server is not None:
            failure = await reconnect(servers, server)
            ctx.ui.notify(failure, "error") if failure else ctx.ui.notify(
                f'Reconnected to MCP server "{server.entry.name}" ({describe_state(server)}).', "info")
        return None
    server = await _pick(servers, name, _oauth,
                         lambda s: s.connection is not None and s.connection.state == "needs-auth", NO_OAUTH, ctx)
    if server is None:
        return None
    if action == "logout":
        removed = await sign_out(servers, server, ctx)
        ctx.ui.notify(f'Signed out of MCP server "{server.entry.name}".' if removed
                      else f'No stored credentials for MCP server "{server.entry.name}".', "info")
        return None
    if not getattr(ctx.ui, "has_ui", False):
        ctx.ui.notify(f'Signing in to MCP server "{server.entry.name}" requires interactive mode.', "error")
        return None
    failure = await sign_in(servers, server, ctx)
    if failure:
        ctx.ui.notify(failure, "info" if failure == "Sign-in cancelled." else "error")
        return None
    servers.ensure_discovery_active()
    count = len(server.connection.tools) if server.connection is not None else 0
    ctx.ui.notify(f'Signed in to MCP server "{server.entry.name}" ({count} tools).', "info")
    return None
