"""``pi mcp add|remove|list|login|logout``: change and check ``mcp.json`` and sign in to
OAuth servers without a session, so an agent can run them through bash. Options are read as pi 1.6 reads them (``-l``/``--local``,
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
  pi mcp login <server> [-l] [--timeout <seconds>]
  pi mcp logout <server> [-l]

Configure and check MCP servers and sign in to OAuth servers without starting a session.
Reads ~/.pi/agent/mcp.json and, in trusted projects, .pi/mcp.json.

Commands:
  add <server>            Add or replace a server in mcp.json (does not connect)
  remove <server>         Remove a server from mcp.json
  list                    Connect to every enabled server; show state, tools and errors (exit 1 on failure)
  login <server>          Sign in through the browser
  logout <server>         Delete the stored OAuth credentials

Options for add, remove, login, and logout:
  -l, --local             Use .pi/mcp.json in the current project instead of the user's file

Options for add:
  --url <url>             Streamable HTTP server URL (instead of a command)
  --env <KEY=VALUE>       Environment variable for a stdio server (repeatable)
  --cwd <dir>             Working directory for a stdio server
  --header <KEY=VALUE>    HTTP header (repeatable)
  --bearer-token-env-var <NAME>
                          Send "Authorization: Bearer ${NAME}"
  --oauth-client-id <id>  Pre-registered OAuth client id
  --oauth-client-secret <secret>
                          OAuth client secret (may be ${NAME} or !command)
  --oauth-callback-port <port>
                          Fixed OAuth callback port
  --oauth-client-name <name>
                          Client name sent when registering with the OAuth server
  --oauth-client-registration <mode>
                          auto (default), cimd, or dcr
  --exposure <mode>       codemode (default), deferred, direct, or hidden
  --description <text>    What the server offers, shown in the system prompt

Other options:
  --json                  Print the list as JSON
  --timeout <seconds>     Time limit for the whole sign-in (default: 300)"""
HELP_HINT = 'Use "pi mcp --help" for usage.'
ALIASES = {"-l": "--local"}
OAUTH_OPTIONS = {"oauth-client-id": "clientId", "oauth-client-secret": "clientSecret",
                 "oauth-callback-port": "callbackPort", "oauth-client-name": "clientName",
                 "oauth-client-registration": "clientRegistration"}
HTTP_ONLY = ("header", "bearer-token-env-var", *OAUTH_OPTIONS)
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
        "bearer-token-env-var": "value", "exposure": "value", "description": "value",
        **{option: "value" for option in OAUTH_OPTIONS}}, max_positionals=2)
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
        oauth: dict[str, Any] = {key: values[option] for option, key in OAUTH_OPTIONS.items() if option in values}
        if "callbackPort" in oauth:
            try:
                oauth["callbackPort"] = int(oauth["callbackPort"])
            except ValueError:
                raise Problem("--oauth-callback-port must be a port number.") from None
        entry = {"url": url, **({"headers": headers} if headers else {}), **({"oauth": oauth} if oauth else {})}
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
    connection = ServerConnection(entry, str(cwd), on_log=ServerLog(agent_dir / "mcp.log").write, agent_dir=agent_dir)
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
        state = f"connected, {count} tool{'' if count == 1 else 's'}" if r["state"] == "connected" \
            else "needs sign-in" if r["state"] == "needs-auth" else r["state"]
        out(f"{r['name']}: {state} ({r['exposure']}, {r['scope']})")
        out(f"  {r['transport']}")
        if r.get("override"):
            out(f"  project override: {r['override']}")
        if r["state"] == "needs-auth":
            out(f"  sign in with: pi mcp login {r['name']}")
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


def _edit_distance(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def _oauth_server(command: str, args: list[str], cwd: Path, agent_dir: Path, known: dict[str, str]):
    """The server ``pi mcp login|logout`` names, checked as pi 1.6 checks it."""
    positional, values, _ = parse(args, known)
    if len(positional) != 1:
        raise Problem(f"Usage: pi mcp {command} <server> [-l]\n{HELP_HINT}")
    (name,) = positional
    trusted = _trusted(cwd, agent_dir)
    config = load(agent_dir, cwd, project_trusted=trusted)
    entry = next((s for s in config.servers if s.name == name), None)
    if entry is None:
        names = [s.name for s in config.servers]
        near = next((n for n in names if _edit_distance(n, name) <= 2), None)
        note = (f" {project_config_path(cwd)} is ignored because the project is not trusted."
                if not trusted and project_config_path(cwd).is_file() else "")
        raise Problem(f'No MCP server named "{name}".' + (f' Did you mean "{near}"?' if near else "") + note
                      + f" Configured: {', '.join(names) or 'none'}.")
    if values.get("local") and entry.scope != "project":
        raise Problem(f'MCP server "{name}" is defined in {entry.source}, not in the project; omit --local.')
    if not entry.uses_oauth:
        from pi_plugins.mcp.login import NOT_OAUTH

        raise Problem(NOT_OAUTH.format(name=name))
    return entry, values


def run_logout(args: list[str], cwd: Path, agent_dir: Path, out) -> int:
    from pi_plugins.mcp.login import sign_out

    entry, _ = _oauth_server("logout", args, cwd, agent_dir, {"local": "flag"})
    try:
        removed = sign_out(entry, agent_dir)
    except (OSError, ValueError) as exc:
        raise Problem(f"Could not update {agent_dir / 'mcp-auth.json'}: {exc}") from None
    out(f'Signed out of MCP server "{entry.name}".' if removed else f'No stored credentials for MCP server "{entry.name}".')
    return 0


def run_login(args: list[str], cwd: Path, agent_dir: Path, out, err=None) -> int:
    import asyncio

    from pi_plugins.mcp.login import DEFAULT_TIMEOUT_S, login_command, paste_from_terminal

    entry, values = _oauth_server("login", args, cwd, agent_dir, {"local": "flag", "timeout": "value"})
    try:
        timeout = float(values.get("timeout", DEFAULT_TIMEOUT_S))
    except ValueError:
        timeout = -1
    if not timeout > 0 or timeout == float("inf"):
        raise Problem("--timeout must be a positive number of seconds.")
    err = err or (lambda line: print(line, file=sys.stderr))
    return asyncio.run(login_command(entry, str(cwd), agent_dir, timeout, out, err, paste=paste_from_terminal))


COMMANDS = {"add": run_add, "remove": run_remove, "list": run_list, "logout": run_logout}


def run(args: list[str], cwd: Path, agent_dir: Path, out=print, err=None) -> int:
    """``pi mcp ARGS``; the exit status."""
    err = err or (lambda line: print(line, file=sys.stderr))
    if not args or args[0] == "help" or "--help" in args or "-h" in args:
        out(HELP)
        return 0
    command = COMMANDS.get(args[0])
    if command is None and args[0] != "login":
        err(f'Unknown mcp command "{args[0]}".\n{HELP_HINT}')
        return 1
    try:
        if command is None:
            return run_login(args[1:], cwd, agent_dir, out, err)
        return command(args[1:], cwd, agent_dir, out)
    except Problem as exc:
        err(str(exc))
        return 1


@click.command("mcp", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False,
                                        "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def mcp_command(args: tuple[str, ...]) -> None:
    """Add, remove and check MCP servers, and sign in to them (pi mcp --help)."""
    from pi_core import agent_dir

    sys.exit(run(list(args), Path(os.getcwd()), agent_dir()))
