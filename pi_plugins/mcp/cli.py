"""``pi mcp add|remove|list``: change and check ``mcp.json`` without a session, so an
agent can run them through bash. Options are read as pi 1.6 reads them (``-l``/``--local``,
repeatable ``--env``/``--header``, ``--`` before a stdio command, whose own options pass
through); messages are its. ``list`` connects to every enabled server and exits 1 when an
entry is invalid or an enabled server is not connected. Imported only when ``pi mcp`` runs.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from pi_plugins.mcp.config import (
    add_server,
    load,
    project_config_path,
    remove_server,
    user_config_path,
    validate,
)

HELP = """Usage:
  pi mcp add <server> [options] -- <command> [args...]
  pi mcp add <server> [options] --url <url>
  pi mcp remove <server> [-l]
  pi mcp list [--json]

Add, remove and check MCP servers without starting a session.
Reads ~/.pi/agent/mcp.json and, in trusted projects, .pi/mcp.json.

Commands:
  add <server>            Add or replace a server in mcp.json (does not connect)
  remove <server>         Remove a server from mcp.json
  list                    Connect to every enabled server; show state, tools and errors (exit 1 on failure)

Options for add and remove:
  -l, --local             Use .pi/mcp.json in the current project instead of the user's file

Options for add:
  --url <url>             Streamable HTTP server URL (instead of a command)
  --env <KEY=VALUE>       Environment variable for a stdio server (repeatable)
  --cwd <dir>             Working directory for a stdio server
  --header <KEY=VALUE>    HTTP header (repeatable)
  --bearer-token-env-var <NAME>
                          Send "Authorization: Bearer ${NAME}"
  --exposure <mode>       codemode (default), deferred, direct, or hidden
  --description <text>    What the server offers, shown in the system prompt

Other options:
  --json                  Print the list as JSON"""
HELP_HINT = 'Use "pi mcp --help" for usage.'
ALIASES = {"-l": "--local"}
HTTP_ONLY = ("header", "bearer-token-env-var")
STDIO_ONLY = ("env", "cwd")


class Problem(Exception):
    """A usage or file error: one line (or two) for stderr, exit status 1."""


def parse(args: list[str], known: dict[str, str], max_positionals: int = 10**6):
    """pi 1.6's option reading: ``--name value``, flags, repeatable lists; ``--`` (or
    reaching ``max_positionals``) makes the rest positional."""
    positional: list[str] = []
    values: dict[str, Any] = {}
    lists: dict[str, list[str]] = {}
    i = 0
    while i < len(args):
        typed = args[i]
        arg = ALIASES.get(typed, typed)
        if arg == "--" or len(positional) >= max_positionals:
            positional += args[i + 1 if arg == "--" else i:]
            break
        i += 1
        if not arg.startswith("--"):
            positional.append(arg)
            continue
        name = arg[2:]
        kind = known.get(name)
        if kind is None:
            raise Problem(f"Unknown option {typed}.\n{HELP_HINT}")
        if kind == "flag":
            values[name] = True
            continue
        if i >= len(args):
            raise Problem(f"{arg} needs a value.")
        value, i = args[i], i + 1
        if kind == "list":
            lists.setdefault(name, []).append(value)
        else:
            values[name] = value
    return positional, values, lists


def _pairs(option: str, pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key:
            raise Problem(f'--{option} expects KEY=VALUE, got "{pair}".')
        out[key] = value
    return out


def _trusted(cwd: Path, agent_dir: Path) -> bool:
    from pi_core import project_allowed

    return project_allowed(None, cwd, agent_dir)


def run_add(args: list[str], cwd: Path, agent_dir: Path, out) -> int:
    usage = f"Usage: pi mcp add <server> [options] (--url <url> | -- <command> [args...])\n{HELP_HINT}"
    positional, values, lists = parse(args, {
        "local": "flag", "url": "value", "env": "list", "cwd": "value", "header": "list",
        "bearer-token-env-var": "value", "exposure": "value", "description": "value"}, max_positionals=2)
    name, *command = positional or [""]
    url = values.get("url")
    if not name or (url is None) == (not command):
        raise Problem(usage)
    misplaced = next((o for o in (STDIO_ONLY if url is not None else HTTP_ONLY) if o in values or o in lists), None)
    if misplaced:
        where = "stdio servers" if url is not None else "HTTP servers (--url)"
        raise Problem(f"--{misplaced} only applies to {where}.")
    entry: dict[str, Any]
    if url is not None:
        headers = _pairs("header", lists.get("header", []))
        if "bearer-token-env-var" in values:
            headers["Authorization"] = "Bearer ${" + values["bearer-token-env-var"] + "}"
        entry = {"url": url, **({"headers": headers} if headers else {})}
    else:
        env = _pairs("env", lists.get("env", []))
        entry = {"command": command[0], **({"args": command[1:]} if command[1:] else {}),
                 **({"env": env} if env else {}), **({"cwd": values["cwd"]} if "cwd" in values else {})}
    for key in ("exposure", "description"):
        if key in values:
            entry[key] = values[key]
    checked = validate(name, entry)
    if isinstance(checked, str):
        raise Problem(checked)
    local = bool(values.get("local"))
    path = project_config_path(cwd) if local else user_config_path(agent_dir)
    scope = "project" if local else "global"
    try:
        replaced = add_server(path, name, entry)
    except (OSError, ValueError) as exc:
        raise Problem(f"Could not update {path}: {exc}") from None
    out(f'{"Replaced" if replaced else "Added"} {scope} MCP server "{name}" in {path}.')
    if local and not _trusted(cwd, agent_dir):
        out(f"The project is not trusted, so {path} is ignored until you start pi in the project and trust it.")
    sign_in = url is not None and not any(k.lower() == "authorization" for k in entry.get("headers", {}))
    out("Check it with: pi mcp list" + (f". If it requires sign-in: pi mcp login {name}" if sign_in else ""))
    return 0


def run_remove(args: list[str], cwd: Path, agent_dir: Path, out) -> int:
    positional, values, _ = parse(args, {"local": "flag"})
    if len(positional) != 1:
        raise Problem(f"Usage: pi mcp remove <server> [-l]\n{HELP_HINT}")
    (name,) = positional
    local = bool(values.get("local"))
    path = project_config_path(cwd) if local else user_config_path(agent_dir)
    scope = "project" if local else "global"
    try:
        removed = remove_server(path, name)
    except (OSError, ValueError) as exc:
        raise Problem(f"Could not update {path}: {exc}") from None
    if removed:
        out(f'Removed {scope} MCP server "{name}" from {path}.')
        return 0
    other = next((s for s in load(agent_dir, cwd, project_trusted=True).servers
                  if s.name == name and s.scope != scope), None)
    hint = "" if other is None else \
        f" It is defined in {other.source}; {'use --local' if other.scope == 'project' else 'omit --local'}."
    raise Problem(f'No {scope} MCP server named "{name}" in {path}.{hint}')


async def _report(entry, cwd: Path, agent_dir: Path) -> dict:
    from pi_plugins.mcp.connection import McpCallError, ServerConnection
    from pi_plugins.mcp.log import ServerLog

    report: dict[str, Any] = {"name": entry.name, "scope": entry.scope, "source": entry.source,
                              **({"override": entry.override} if entry.override else {}),
                              "enabled": entry.enabled, "exposure": entry.exposure,
                              "transport": entry.transport(), "state": "disabled", "tools": []}
    if not entry.enabled:
        return report
    connection = ServerConnection(entry, str(cwd), on_log=ServerLog(agent_dir / "mcp.log").write)
    try:
        await connection.get_client()
    except McpCallError:
        pass  # the connection keeps the state and the error
    report["state"] = "connected" if connection.connected else connection.state
    report["tools"] = [t["name"] for t in connection.tools]
    overrides = {t: e for t in report["tools"] if (e := entry.tool_exposure(t)) != entry.exposure}
    if overrides:
        report["toolExposure"] = overrides
    if connection.has_resources:
        report["resources"] = True
    if report["state"] != "connected" and connection.error:
        report["error"] = connection.error
    await connection.close()
    return report


def run_list(args: list[str], cwd: Path, agent_dir: Path, out) -> int:
    import asyncio

    positional, values, _ = parse(args, {"json": "flag"})
    if positional:
        raise Problem(f"Usage: pi mcp list [--json]\n{HELP_HINT}")
    trusted = _trusted(cwd, agent_dir)
    config = load(agent_dir, cwd, project_trusted=trusted)
    project_file = project_config_path(cwd)
    note = (f"{project_file} is ignored because the project is not trusted. Start pi in the project to trust it."
            if not trusted and project_file.is_file() else None)

    async def all_reports():
        return await asyncio.gather(*(_report(entry, cwd, agent_dir) for entry in config.servers))

    reports = asyncio.run(all_reports()) if config.servers else []
    failed = bool(config.errors) or any(r["enabled"] and r["state"] != "connected" for r in reports)
    if values.get("json"):
        out(json.dumps({"servers": reports, "errors": config.errors, **({"note": note} if note else {})}, indent=2))
        return 1 if failed else 0
    if not reports and not config.errors:
        out(f"No MCP servers configured. Add them to {user_config_path(agent_dir)} or .pi/mcp.json.")
    for r in reports:
        count = len(r["tools"])
        state = f"connected, {count} tool{'' if count == 1 else 's'}" if r["state"] == "connected" else r["state"]
        out(f"{r['name']}: {state} ({r['exposure']}, {r['scope']})")
        out(f"  {r['transport']}")
        if r.get("override"):
            out(f"  project override: {r['override']}")
        if r["tools"]:
            marked = [f"{t} [{r['toolExposure'][t]}]" if t in r.get("toolExposure", {}) else t for t in r["tools"]]
            out(f"  tools: {', '.join(marked)}")
        if r.get("resources"):
            out("  offers resources")
        if r.get("error"):
            out("  " + r["error"].replace("\n", "\n  "))
    for error in config.errors:
        out(f"config error: {error}")
    if note:
        out(note)
    return 1 if failed else 0


COMMANDS = {"add": run_add, "remove": run_remove, "list": run_list}


def run(args: list[str], cwd: Path, agent_dir: Path, out=print, err=None) -> int:
    """``pi mcp ARGS``; the exit status."""
    err = err or (lambda line: print(line, file=sys.stderr))
    if not args or args[0] == "help" or "--help" in args or "-h" in args:
        out(HELP)
        return 0
    command = COMMANDS.get(args[0])
    if command is None:
        err(f'Unknown mcp command "{args[0]}".\n{HELP_HINT}')
        return 1
    try:
        return command(args[1:], cwd, agent_dir, out)
    except Problem as exc:
        err(str(exc))
        return 1


@click.command("mcp", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False,
                                        "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def mcp_command(args: tuple[str, ...]) -> None:
    """Add, remove and check MCP servers (pi mcp --help)."""
    from pi_core import agent_dir

    sys.exit(run(list(args), Path(os.getcwd()), agent_dir()))
