"""``ls``: one directory's entries, sorted, directories marked with "/"."""

from __future__ import annotations

from pi_core.protocol.tools import Tool, ToolResult, ToolRun
from pi_plugins.tools.errors import ToolError, os_error
from pi_plugins.tools.lookup import environment_for
from pi_plugins.tools.truncation import MAX_BYTES, format_size, truncate_head

DEFAULT_LIMIT = 500

DESCRIPTION = (
    "List a directory: entries sorted alphabetically, hidden ones included, directories "
    f"ending in '/'. Output stops at {DEFAULT_LIMIT} entries (change it with limit) or "
    f"{MAX_BYTES // 1024}KB."
)

PARAMETERS = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Directory to list (default: the working directory)"},
        "limit": {"type": "integer", "minimum": 1, "description": f"Most entries to return (default: {DEFAULT_LIMIT})"},
    },
}


async def execute(args: dict, run: ToolRun) -> ToolResult:
    if run.signal.aborted:
        raise ToolError("Operation aborted")
    where = args.get("path") or "."
    limit = args.get("limit") or DEFAULT_LIMIT
    env = await environment_for(run)
    full = env.resolve(where)
    try:
        info = await env.stat(full)
        if info.kind != "directory":
            raise ToolError(f"{where} is not a directory. Use read to see a file.")
        entries = await env.list_dir(full)
    except OSError as exc:
        raise os_error(exc, where, "listing") from None
    listed = sorted((e for e in entries if e.kind is not None), key=lambda e: (e.name.lower(), e.name))
    if not listed:
        return ToolResult.text("(empty directory)")
    shown = [e.name + "/" if e.kind == "directory" else e.name for e in listed[:limit]]
    cut = truncate_head("\n".join(shown), max_lines=len(shown) + 1)
    notes, details = [], {}
    if len(listed) > limit:
        notes.append(f"Showing {limit} of {len(listed)} entries. Call ls with limit={limit * 2} for more")
        details["entryLimitReached"] = limit
    if cut.truncated:
        notes.append(f"Output cut at the {format_size(MAX_BYTES)} budget")
        details["truncation"] = cut.as_details()
    text = cut.content + ("\n\n[" + ". ".join(notes) + "]" if notes else "")
    return ToolResult.text(text, details or None)


ls_tool = Tool(
    name="ls",
    label="ls",
    description=DESCRIPTION,
    parameters=PARAMETERS,
    function=execute,
    execution_mode="parallel",
    default_active=False,  # offered when asked for (--tools), as in pi
)
