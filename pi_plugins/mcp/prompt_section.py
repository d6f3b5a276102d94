"""The ``mcp_servers`` section of the system prompt, in pi 1.6's words: every enabled
server with ``codemode`` or ``deferred`` tools, how its tools are reached, and one line
from its ``description`` or, once connected, its instructions. The model learns of these
servers from it alone, since neither codemode nor tool_search lists them.

The section goes at the end of the system prompt. When it changes (a server connected and
its instructions are known, one was disabled), pi 1.6 records the new section in the
session as a ``system`` message before the prompt (``{"role": "system", "content": "",
"sections": {"mcp_servers": ...}}``, ``null`` for a removed section) and, for models that
take no system message mid-conversation (the default), sends the system prompt with the
new section (one cache miss per change); we do both.
"""

from __future__ import annotations

from typing import Any

from pi_plugins.mcp.config import namespace

NAME = "mcp_servers"
#: Characters of one server's line of description (as Codex allows for a namespace).
MAX_SERVER_DESCRIPTION_CHARS = 250
#: Characters of the whole section: descriptions shrink to fit, then servers are left out.
MAX_SECTION_CHARS = 4096


def _intro(reaches: set[str]) -> str:
    intro = "MCP servers whose tools are not declared to you."
    if "codemode" in reaches:
        intro += " Call the tools of `codemode` servers from codemode scripts."
    if "tool_search" in reaches:
        intro += " Load the tools of `tool_search` servers with `tool_search`."
    return intro


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return "" if limit <= 1 else text[:limit - 1].rstrip() + "…"


def render(servers: list[Any]) -> str | None:
    """The section's body for ``servers`` (:class:`pi_plugins.mcp.servers.Server`), or None
    when no enabled server has non-direct tools."""
    from pi_plugins.mcp.servers import summary_line

    listed = sorted((s for s in servers if s.entry.enabled and s.entry.exposures() & {"codemode", "deferred"}),
                    key=lambda s: s.entry.name)
    if not listed:
        return None
    reaches = ["codemode" if "codemode" in s.entry.exposures() else "tool_search" for s in listed]
    intro = _intro(set(reaches))
    heads = [f"- {namespace(s.entry.name)} ({reach})" for s, reach in zip(listed, reaches, strict=True)]

    def omitted(count: int) -> list[str]:
        plural = "" if count == 1 else "s"
        return [f"- … {count} more server{plural}; find their tools with searchTools()"] if count > 0 else []

    def size(kept: int) -> int:
        return len("\n".join([intro, *heads[:kept], *omitted(len(listed) - kept)]))

    kept = len(listed)
    while kept > 0 and size(kept) > MAX_SECTION_CHARS:
        kept -= 1
    per_server = 0 if kept == 0 else min(MAX_SERVER_DESCRIPTION_CHARS, (MAX_SECTION_CHARS - size(kept)) // kept - 2)
    lines = []
    for server, head in zip(listed[:kept], heads, strict=False):
        instructions = server.connection.instructions if server.connection is not None else None
        summary = _cut(summary_line(server.entry.config.get("description"), instructions), per_server) \
            if per_server > 0 else ""
        lines.append(f"{head}: {summary}" if summary else head)
    return "\n".join([intro, *lines, *omitted(len(listed) - kept)])


def wrapped(body: str) -> str:
    return f"<{NAME}>\n{body}\n</{NAME}>"


def update_entry(body: str | None) -> Any:
    """pi 1.6's session record of the change: a ``system`` message with the section."""
    from pi_core import SystemMessage

    return SystemMessage(sections={NAME: wrapped(body) if body is not None else None})


def update_text(body: str | None) -> str:
    """The change in pi 1.6's words (as a model that takes mid-conversation system
    messages would receive it)."""
    return (f'Updated system prompt section "{NAME}":\n\n{wrapped(body)}' if body is not None
            else f'Removed system prompt section "{NAME}".')


class PromptSection:
    """The section as last sent to one session's model (``current``)."""

    def __init__(self) -> None:
        self.started = False
        self.current: str | None = None

    def apply(self, event: Any, body: str | None) -> Any:
        """``before_agent_start``'s event with the section at the end of the system
        prompt; a change since the last prompt is recorded before the prompt."""
        if not self.started:
            self.started, self.current = True, body
        elif body != self.current:
            self.current = body
            event.before_prompt = [*event.before_prompt, update_entry(body)]
        if self.current is not None:
            event.system_prompt = f"{event.system_prompt}\n\n{wrapped(self.current)}"
        return event
