"""``write``: create or replace a file, making its missing parent directories."""

from __future__ import annotations

import os

from pi_core.protocol.tools import Tool, ToolResult, ToolRun
from pi_plugins.tools.errors import ToolError, os_error
from pi_plugins.tools.locks import file_lock
from pi_plugins.tools.lookup import environment_for

DESCRIPTION = (
    "Write a file: creates it, or replaces all of its content if it exists. Missing parent "
    "directories are created. To change part of an existing file, use edit instead."
)

PARAMETERS = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "The file to write, relative to the working directory or absolute"},
        "content": {"type": "string", "description": "The complete new content of the file"},
    },
    "required": ["path", "content"],
}


async def execute(args: dict, run: ToolRun) -> ToolResult:
    if run.signal.aborted:
        raise ToolError("Operation aborted")
    path, content = args["path"], args["content"]
    env = await environment_for(run)
    full = env.resolve(path)
    data = content.encode("utf-8", "replace")
    async with file_lock(full):
        try:
            await env.make_dirs(os.path.dirname(full))
            await env.write_bytes(full, data)
        except OSError as exc:
            raise os_error(exc, path, "writing") from None
    return ToolResult.text(f"Successfully wrote {len(data)} bytes to {path}")


write_tool = Tool(
    name="write",
    label="write",
    description=DESCRIPTION,
    parameters=PARAMETERS,
    function=execute,
    execution_mode="parallel",
)
