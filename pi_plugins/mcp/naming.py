"""MCP tool names as pi 1.6 gives them: ``mcp__<server>__<tool>`` with every character
other than letters, digits and ``_`` as ``_`` (so a name is also an identifier), at most
64 characters; a name too long, or one two tools of a server would share, ends in a
hash of the server and tool instead."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable

MAX_TOOL_NAME = 64  # what the providers accept
_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def tool_name(server: str, tool: str, taken: Callable[[str], bool] = lambda name: False) -> str:
    name = _UNSAFE.sub("_", f"mcp__{server}__{tool}")
    if len(name) <= MAX_TOOL_NAME and not taken(name):
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[:MAX_TOOL_NAME - len(digest) - 1]}_{digest}"


def tool_names(server: str, tools: list[str], taken: Callable[[str], bool] = lambda name: False) -> dict[str, str]:
    """Each of the server's tools to its name: every tool whose plain name another of its
    tools shares gets the hash, whichever comes first in the list."""
    plain = [tool_name(server, tool) for tool in tools]
    names: dict[str, str] = {}
    for tool in tools:
        names[tool] = tool_name(server, tool, lambda candidate: taken(candidate) or plain.count(candidate) > 1
                                or candidate in names.values())
    return names
