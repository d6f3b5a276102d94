"""The Radius MCP server a Radius sign-in adds, as pi 1.6 adds it: an entry in the global
``mcp.json`` at ``https://radius.pi.dev/mcp`` with ``"auth": {"provider": "radius"}`` (the
MCP plugin sends that provider's key as the bearer token, no MCP OAuth sign-in).

Nothing changes when a global server at that URL already uses this login. A server at
that URL with another login (or an OAuth sign-in) is pointed at this one, keeping its name
and its other fields; otherwise a new ``radius`` entry is added (``radius-mcp``,
``radius-mcp-2`` … when the name's namespace is taken). ``pi auth login radius`` adds it
without asking; ``/login`` asks first, then reloads so the server connects.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

RADIUS_MCP_URL = "https://radius.pi.dev/mcp"


def plan(provider_id: str, agent_dir: Path, cwd: str | Path) -> tuple[Path, str, dict] | None:
    """``(mcp.json path, server name, entry)`` to write; None when nothing is to change."""
    from pi_plugins.mcp.config import load, namespace

    servers = load(agent_dir, cwd, project_trusted=False).servers
    existing = next((s for s in servers if isinstance(s.config.get("url"), str)
                     and s.config["url"].rstrip("/") == RADIUS_MCP_URL.rstrip("/")), None)
    if existing is not None and (existing.config.get("auth") or {}).get("provider") == provider_id:
        return None
    name = existing.name if existing is not None else "radius"
    if existing is None:
        taken = {namespace(s.name) for s in servers}
        suffix = 1
        while namespace(name) in taken:
            name = "radius-mcp" if suffix == 1 else f"radius-mcp-{suffix}"
            suffix += 1
    entry = ({**existing.config, "auth": {"provider": provider_id}} if existing is not None
             else {"url": RADIUS_MCP_URL, "auth": {"provider": provider_id}})
    entry.pop("oauth", None)  # the login replaces the MCP OAuth sign-in
    return Path(agent_dir) / "mcp.json", name, entry


def configure(provider_id: str, provider_name: str, agent_dir: Path, cwd: str | Path,
              say: Callable[[str], None]) -> None:
    """``pi auth login radius``'s step: write the planned entry and say so (pi 1.6's words)."""
    from pi_plugins.mcp.config import add_server

    planned = plan(provider_id, agent_dir, cwd)
    if planned is None:
        return
    path, name, entry = planned
    try:
        replaced = add_server(path, name, entry)
    except (OSError, ValueError) as exc:
        say(f"Could not update {path}: {exc}")
        return
    say(f'{"Updated" if replaced else "Added"} MCP server "{name}" in {path} to use the {provider_name} login.')
