"""The ``tool_search`` tool, as pi 1.6 declares it: ranks the tools not declared to the
model (``codemode`` and ``deferred`` exposure, such as MCP tools) and declares the matches
from the model's next request. Its description names no tool, so it stays the same while
tools come and go (MCP servers connecting)."""

from __future__ import annotations

from typing import Any

from pi_core import Tool, ToolResult, ToolRun

NAME = "tool_search"
SEARCHABLE = ("codemode", "deferred")
#: pi 1.6's default for tool_search and searchTools(); here, not in ``ranking``, so
#: declaring the tool does not load the ranking (it loads with the first search).
DEFAULT_LIMIT = 8

DESCRIPTION = (
    "# Tool discovery\n\n"
    "Searches over deferred tool metadata with BM25 and exposes matching tools for the next model call.\n\n"
    "Some of the tools, such as tools of MCP servers, may not have been provided to you upfront, and you "
    f"should use this tool (`{NAME}`) to search for the required tools. For MCP tool discovery, always use "
    f"`{NAME}`."
)

PARAMETERS = {
    "type": "object",
    "required": ["query"],
    "properties": {
        "query": {"type": "string", "description": "Search query for deferred tools."},
        "limit": {"type": "number",
                  "description": f"Maximum number of tools to return. Defaults to {DEFAULT_LIMIT}."},
    },
}


def searchable(ctx: Any) -> list[Tool]:
    """The tools ``tool_search`` may load: registered, of a searchable exposure, not declared yet."""
    active = set(ctx.get_active_tools())
    return [t for t in ctx.get_all_tools() if getattr(t, "exposure", "direct") in SEARCHABLE
            and t.name not in active]


def load(ctx: Any, query: str, limit: int) -> list[Tool]:
    """Rank the searchable tools by ``query`` and declare the best ``limit`` from the next request."""
    from pi_plugins.tool_search.ranking import rank

    found = rank(query, searchable(ctx), limit)
    if found:
        ctx.set_active_tools([*ctx.get_active_tools(), *(t.name for t in found)])
    return found


def _first_line(text: str) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


def report(found: list[Tool]) -> str:
    """What the model reads back, in pi 1.6's words."""
    if not found:
        return "No matching tools found."
    lines = "\n".join(f"- {t.name}: {_first_line(t.description)}" for t in found)
    plural = "" if len(found) == 1 else "s"
    return f"Loaded {len(found)} tool{plural}. They are available from your next call:\n{lines}"


def make_tool(on_loaded) -> Tool:
    """The tool; ``on_loaded(ctx, tools)`` hears what each call declared (to record it)."""

    async def execute(args: dict, run: ToolRun) -> ToolResult:
        query = args.get("query", "")
        if not isinstance(query, str) or not query.strip():
            raise ValueError("query must not be empty")
        limit = args.get("limit", DEFAULT_LIMIT)
        if isinstance(limit, bool) or not isinstance(limit, (int, float)) or limit != int(limit) or limit <= 0:
            raise ValueError("limit must be a positive integer")
        found = load(run.ctx, query, int(limit)) if run.ctx is not None else []
        if found:
            on_loaded(run.ctx, found)
        return ToolResult.text(report(found), {"loaded": [t.name for t in found]})

    return Tool(name=NAME, label=NAME, description=DESCRIPTION, parameters=PARAMETERS, function=execute,
                default_active=False, exposure="model-only", reaches_tools=lambda args: "all",
                prompt_snippet="Search for tools that are not loaded yet and load the matches",
                summarize=lambda args: f"tool_search {args.get('query', '')}".rstrip())
