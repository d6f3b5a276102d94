"""``mcp.json``: the servers of the agent dir's file and, in a trusted project, of
``.pi/mcp.json``, in the ``mcpServers`` shape other MCP clients share, checked as pi 1.6
checks them (its messages, its rules). A project entry replaces a user entry of the same
name; one without ``command``, ``url`` or ``type`` only overrides ``enabled``, ``exposure``
and ``toolExposure`` of the user entry and keeps the rest (credentials included).

Pure data and files: nothing here talks to a server, so ``pi -p`` with no servers, and
``pi mcp add``/``remove``, never load the MCP SDK.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import attrs

from pi_core.protocol.records import record
from pi_plugins.mcp import project_config_path, user_config_path

EXPOSURES = ("codemode", "deferred", "direct", "hidden")
EXPOSURE_ALIASES = {"codemode-deferred": "codemode"}
OVERRIDE_KEYS = ("enabled", "exposure", "toolExposure")
SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
DEFAULT_TIMEOUT_S = 60.0


@record(frozen=True)
class ServerEntry:
    """One server as configured: its name, its checked ``config`` (the file's JSON, aliases
    resolved), the file that defines it, ``global`` or ``project``, and the project file
    that overrides it, if any."""

    name: str
    config: dict
    source: str
    scope: str
    override: str | None = None

    @property
    def enabled(self) -> bool:
        return self.config.get("enabled") is not False

    @property
    def exposure(self) -> str:
        return self.config.get("exposure") or "codemode"

    @property
    def is_http(self) -> bool:
        return isinstance(self.config.get("url"), str)

    @property
    def uses_oauth(self) -> bool:
        """pi 1.6: an HTTP server signs in with OAuth unless it sends an Authorization header."""
        headers = self.config.get("headers") or {}
        return (self.is_http and not any(k.lower() == "authorization" for k in headers)
                and "auth" not in self.config)  # ``auth.provider``: that provider's login instead

    @property
    def timeout(self) -> float:
        return float(self.config.get("timeout") or DEFAULT_TIMEOUT_S)

    def exposures(self) -> set[str]:
        """Every exposure its tools can have, known before it connects."""
        return {self.exposure, *(self.config.get("toolExposure") or {}).values()}

    def has_direct_tools(self) -> bool:
        return "direct" in self.exposures()

    def tool_exposure(self, tool: str) -> str:
        """The tool's ``toolExposure`` entry (an exact name first, then the first pattern
        that matches), else the server's exposure."""
        overrides = self.config.get("toolExposure") or {}
        if tool in overrides:
            return overrides[tool]
        for pattern, exposure in overrides.items():
            if "*" in pattern and name_pattern(pattern).match(tool):
                return exposure
        return self.exposure

    def transport(self) -> str:
        """The URL, or the command line, as ``pi mcp list`` shows it."""
        if self.is_http:
            return self.config["url"]
        return " ".join([self.config["command"], *self.config.get("args", [])])


@record
class McpConfig:
    servers: list[ServerEntry] = attrs.field(factory=list)
    errors: list[str] = attrs.field(factory=list)
    auto_enable_codemode: bool | None = None
    project_config: str | None = None

    def get(self, name: str) -> ServerEntry | None:
        return next((s for s in self.servers if s.name == name), None)


def name_pattern(pattern: str) -> re.Pattern:
    """A tool-name pattern where ``*`` matches any characters."""
    return re.compile("^" + ".*".join(re.escape(part) for part in pattern.split("*")) + "$")


def namespace(server: str) -> str:
    """``mcp__<server>`` with ``-`` as ``_``: names that differ only there clash."""
    return "mcp__" + server.replace("-", "_")


def is_override(entry: dict) -> bool:
    return "command" not in entry and "url" not in entry and "type" not in entry


def load(agent_dir: str | Path, cwd: str | Path, *, project_trusted: bool) -> McpConfig:
    """The user's servers, then (when the project is trusted) the project's over them."""
    config = McpConfig()
    _read_file(user_config_path(agent_dir), "global", config)
    if project_trusted:
        path = project_config_path(cwd)
        config.project_config = str(path)
        _read_file(path, "project", config)
    return config


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8-sig"))


def _read_file(path: Path, scope: str, config: McpConfig) -> None:
    if not path.is_file():
        return
    try:
        data = _read_json(path)
    except (OSError, ValueError) as exc:
        config.errors.append(f"{path}: {exc}")
        return
    if not isinstance(data, dict) or ("mcpServers" in data and not isinstance(data["mcpServers"], dict)):
        config.errors.append(f'{path}: expected an object with an "mcpServers" object')
        return
    auto = data.get("autoEnableCodemode")
    if isinstance(auto, bool):
        config.auto_enable_codemode = auto
    elif auto is not None:
        config.errors.append(f"{path}: autoEnableCodemode must be a boolean")
    for name, value in (data.get("mcpServers") or {}).items():
        if scope == "project" and isinstance(value, dict) and is_override(value):
            _apply_override(path, name, value, config)
            continue
        checked = validate(name, value)
        if isinstance(checked, str):
            config.errors.append(f"{path}: {checked}")
            continue
        clash = next((s.name for s in config.servers if s.name != name and namespace(s.name) == namespace(name)),
                     None)
        if clash is not None:
            config.errors.append(f'{path}: server "{name}" conflicts with "{clash}"')
            continue
        entry = ServerEntry(name, checked, str(path), scope)
        config.servers = [*(s for s in config.servers if s.name != name), entry]


def _apply_override(path: Path, name: str, value: dict, config: McpConfig) -> None:
    base = config.get(name)
    extra = [key for key in value if key not in OVERRIDE_KEYS]
    if base is None:
        config.errors.append(f'{path}: server "{name}" needs "command" or "url", or a global server to override')
    elif extra:
        config.errors.append(f'{path}: server "{name}": an override can only set {", ".join(OVERRIDE_KEYS)}')
    else:
        checked = validate(name, {**base.config, **value})
        if isinstance(checked, str):
            config.errors.append(f"{path}: {checked}")
        else:
            config.servers = [attrs.evolve(base, config=checked, override=str(path)) if s.name == name else s
                              for s in config.servers]


def _string_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


def validate(name: str, raw: Any) -> dict | str:
    """The entry with exposure aliases resolved, or pi 1.6's message for what is wrong."""
    if not SERVER_NAME.match(name):
        return f'invalid server name "{name}" (use letters, digits, "_" and "-")'
    if not isinstance(raw, dict):
        return f'server "{name}" must be an object'
    entry = dict(raw)
    if "exposure" in entry:
        entry["exposure"] = EXPOSURE_ALIASES.get(entry["exposure"], entry["exposure"])
    if isinstance(entry.get("toolExposure"), dict):
        entry["toolExposure"] = {k: EXPOSURE_ALIASES.get(v, v) for k, v in entry["toolExposure"].items()}
    problem = _base_problem(entry)
    kind, url, command = entry.get("type"), entry.get("url"), entry.get("command")
    if problem is None and kind == "sse":
        return f'server "{name}": legacy SSE transport is not supported; use the streamable HTTP URL'
    if problem is None and isinstance(url, str) and kind in (None, "http", "streamable-http"):
        problem = _http_problem(entry, url)
    elif problem is None and isinstance(command, str) and kind in (None, "stdio"):
        problem = _stdio_problem(entry)
    elif problem is None:
        return f'server "{name}" needs either "command" (stdio) or "url" (streamable HTTP)'
    problem = problem or _exposure_problem(entry)
    return f'server "{name}": {problem}' if problem else entry


def _base_problem(entry: dict) -> str | None:
    enabled, timeout, description = entry.get("enabled"), entry.get("timeout"), entry.get("description")
    if enabled is not None and not isinstance(enabled, bool):
        return "enabled must be a boolean"
    if description is not None and not isinstance(description, str):
        return "description must be a string"
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                or not timeout > 0):
        return "timeout must be a positive number of seconds"
    return None


def _http_problem(entry: dict, url: str) -> str | None:
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        return "url must be an http or https URL"
    if "headers" in entry and not _string_map(entry["headers"]):
        return "headers must map names to strings"
    if "auth" in entry and not (isinstance(entry["auth"], dict) and isinstance(entry["auth"].get("provider"), str)):
        return 'auth must be {"provider": "<provider id>"}'
    if "oauth" in entry:
        return _oauth_problem(entry["oauth"])
    return None


def _oauth_problem(oauth: object) -> str | None:
    """pi 1.6's checks of the ``oauth`` settings it reads (messages as its own)."""
    if not isinstance(oauth, dict):
        return "oauth must be an object"
    port = oauth.get("callbackPort")
    if port is not None and (not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535):
        return "oauth.callbackPort must be a port number"
    callback = oauth.get("callbackUrl")
    if callback is not None:
        parsed = urlparse(callback) if isinstance(callback, str) else None
        try:
            url_port = parsed.port if parsed else None
        except ValueError:
            parsed = None
        if parsed is None or parsed.scheme != "http" or parsed.hostname not in ("localhost", "127.0.0.1", "::1") \
                or parsed.query or parsed.fragment or "#" in callback or parsed.username:
            return "oauth.callbackUrl must be an http URI on localhost, 127.0.0.1, or [::1] without query or fragment"
        if url_port and port is not None and url_port != port:
            return "oauth.callbackUrl and oauth.callbackPort name different ports"
    if "scope" in oauth and not isinstance(oauth["scope"], str):
        return "oauth.scope must be a string"
    name = oauth.get("clientName")
    if name is not None and not (isinstance(name, str) and name.strip()):
        return "oauth.clientName must be a non-empty string"
    registration = oauth.get("clientRegistration")
    if registration is not None and registration not in ("auto", "dcr"):
        if registration != "cimd":
            return 'oauth.clientRegistration must be "auto", "dcr", or "cimd"'
        if "clientId" in oauth or "clientName" in oauth:
            return 'oauth.clientRegistration "cimd" cannot be combined with oauth.clientId or oauth.clientName'
        if isinstance(callback, str) and (urlparse(callback).hostname == "::1" or urlparse(callback).path != "/callback"):
            return 'oauth.clientRegistration "cimd" requires oauth.callbackUrl on localhost or 127.0.0.1 with path /callback'
    metadata = oauth.get("authServerMetadataUrl")
    if metadata is not None:
        parsed = urlparse(metadata) if isinstance(metadata, str) else None
        if parsed is None or not parsed.netloc or not (parsed.scheme == "https" or (
                parsed.scheme == "http" and parsed.hostname in ("localhost", "127.0.0.1", "::1"))):
            return "oauth.authServerMetadataUrl must be an https URL, or http on localhost, 127.0.0.1, or [::1]"
    return None


def _stdio_problem(entry: dict) -> str | None:
    args = entry.get("args")
    if args is not None and not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
        return "args must be an array of strings"
    if "env" in entry and not _string_map(entry["env"]):
        return "env must map names to strings"
    if "cwd" in entry and not isinstance(entry["cwd"], str):
        return "cwd must be a string"
    return None


def _exposure_problem(entry: dict) -> str | None:
    allowed = ", ".join(f'"{e}"' for e in EXPOSURES)
    exposure, tools = entry.get("exposure"), entry.get("toolExposure")
    if exposure is not None and exposure not in EXPOSURES:
        return f"exposure must be one of {allowed}"
    if tools is not None:
        if not isinstance(tools, dict):
            return "toolExposure must map tool names to exposures"
        for tool, value in tools.items():
            if value not in EXPOSURES:
                return f'toolExposure "{tool}" must be one of {allowed}'
    return None


# ------------------------------------------------------------------ editing (pi mcp add/remove)

def _edit(path: Path, edit) -> None:
    """Read ``path`` (an empty config when missing), let ``edit(servers, data)`` change it,
    and write it back with its own indentation when ``edit`` returns True."""
    text = path.read_text(encoding="utf-8-sig") if path.is_file() else None
    data = {} if text is None else json.loads(text)
    if not isinstance(data, dict) or ("mcpServers" in data and not isinstance(data["mcpServers"], dict)):
        raise ValueError(f'{path}: expected an object with an "mcpServers" object')
    if not edit(data.get("mcpServers"), data):
        return
    found = re.search(r"^([ \t]+)\S", text or "", re.MULTILINE)
    indent = found.group(1) if found else "  "
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8")


def add_server(path: Path, name: str, entry: dict) -> bool:
    """Add or replace ``name``; True when an entry was replaced. Other content is kept."""
    replaced = False

    def edit(servers, data):
        nonlocal replaced
        servers = servers if isinstance(servers, dict) else {}
        replaced = name in servers
        servers[name] = entry
        data["mcpServers"] = servers
        return True

    _edit(path, edit)
    return replaced


def remove_server(path: Path, name: str) -> bool:
    """Take ``name`` out; False when the file does not define it."""
    if not path.is_file():
        return False
    removed = False

    def edit(servers, data):
        nonlocal removed
        if not isinstance(servers, dict) or name not in servers:
            return False
        del servers[name]
        removed = True
        return True

    _edit(path, edit)
    return removed


def update_server(path: Path, name: str, patch: dict) -> None:
    """Set ``patch``'s keys on ``name`` (added as an override entry when the file lacks
    it, as pi 1.6's "Disable in this project" does); other content is kept."""

    def edit(servers, data):
        servers = servers if isinstance(servers, dict) else {}
        entry = servers.get(name)
        servers[name] = {**(entry if isinstance(entry, dict) else {}), **patch}
        data["mcpServers"] = servers
        return True

    _edit(path, edit)
