"""Which MCP servers to start: ``mcp.json`` in the agent dir (every project) and in the
project's ``.pi`` folder; a project server replaces a global one of the same name.

    {"mcpServers": {
        "github": {"command": "github-mcp-server", "args": ["stdio"],
                   "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
        "local": {"command": "python", "args": ["tools/server.py"], "cwd": ".", "timeout": 60}}}

``${VAR}`` in the command, the arguments, ``cwd`` and ``env`` values is taken from the
environment. A relative ``cwd`` is relative to the folder holding the ``.pi`` folder (or
the agent dir for global servers); by default servers start in the working directory.
A file or a server entry that cannot be read is reported and skipped, never fatal.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from attrs import define, field

FILE_NAME = "mcp.json"


@define
class ServerConfig:
    name: str
    command: str
    args: list[str] = field(factory=list)
    env: dict[str, str] = field(factory=dict)
    cwd: str | None = None
    #: Seconds a tool call may take before the model gets a timeout error.
    timeout: float = 300.0
    #: Seconds the server has to start and list its tools.
    startup_timeout: float = 30.0
    source: str = ""


@define
class Config:
    servers: list[ServerConfig] = field(factory=list)
    problems: list[str] = field(factory=list)


def load_config(cwd: str | os.PathLike, agent_dir: str | os.PathLike, project: bool = True) -> Config:
    """The servers of both files; the project's only when ``project`` (the project is
    trusted: pi-harness's project trust)."""
    config = Config()
    found: dict[str, ServerConfig] = {}
    files = ((Path(agent_dir) / FILE_NAME, Path(agent_dir)), (Path(cwd) / ".pi" / FILE_NAME, Path(cwd)))
    for path, base in files if project else files[:1]:
        for server in _read(path, base, Path(cwd), config.problems):
            found.pop(server.name, None)  # keep the order of the file that wins
            found[server.name] = server
    config.servers = list(found.values())
    return config


def _read(path: Path, base: Path, cwd: Path, problems: list[str]) -> list[ServerConfig]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        problems.append(f"{path}: cannot read it ({exc}); its servers are skipped")
        return []
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        problems.append(f"{path}: expected an object with \"mcpServers\": {{name: {{command, args…}}}}")
        return []
    found = []
    for name, raw in servers.items():
        try:
            found.append(parse_server(name, raw, base, cwd, str(path)))
        except ValueError as exc:
            problems.append(f"{path}: server {name!r}: {exc}; skipped")
    return [s for s in found if s is not None]


def parse_server(name: str, raw: Any, base: Path, cwd: Path, source: str = "") -> ServerConfig | None:
    """A server entry; None when it says ``"enabled": false``; ValueError when bad."""
    if not isinstance(raw, dict):
        raise ValueError("expected an object")
    if raw.get("enabled", True) is False:
        return None
    if raw.get("type", "stdio") != "stdio" or "url" in raw:
        raise ValueError("only stdio servers (a command) are supported")
    command = raw.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ValueError("'command' must be a non-empty string")
    args = raw.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, (str, int, float)) for a in args):
        raise ValueError("'args' must be a list of strings")
    env = raw.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, (str, int, float)) for v in env.values()):
        raise ValueError("'env' must be an object of strings")
    where = raw.get("cwd")
    if where is not None and not isinstance(where, str):
        raise ValueError("'cwd' must be a string")
    timeouts = {}
    for key, attr in (("timeout", "timeout"), ("startupTimeout", "startup_timeout")):
        value = raw.get(key)
        if value is not None:
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"'{key}' must be a positive number of seconds")
            timeouts[attr] = float(value)
    folder = str(base / os.path.expanduser(os.path.expandvars(where))) if where else str(cwd)
    return ServerConfig(
        name=name, command=os.path.expandvars(command), args=[os.path.expandvars(str(a)) for a in args],
        env={str(k): os.path.expandvars(str(v)) for k, v in env.items()}, cwd=folder, source=source,
        **timeouts)
