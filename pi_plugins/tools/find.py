"""``find``: files and directories whose path matches a glob, .gitignore respected.

The pattern follows pi 1.6's rule: one without "/" matches names at any depth; one with
"/" is relative to the searched directory (``src/*.ts`` finds ``src/a.ts``, not
``pkg/src/b.ts``; ``**/src/*.ts`` finds both), a leading ``./`` is dropped, and an absolute
one matches absolute paths. An all-lowercase pattern ignores case (fd's smart case).
"""

from __future__ import annotations

from collections.abc import Callable

from pi_core.protocol.tools import Tool, ToolResult, ToolRun
from pi_plugins.tools.errors import ToolError, os_error
from pi_plugins.tools.lookup import environment_for
from pi_plugins.tools.truncation import MAX_BYTES, format_size, truncate_head

DEFAULT_LIMIT = 1000

DESCRIPTION = (
    "Find files by glob pattern, e.g. '*.py', '**/*.json' or 'src/**/*.test.ts'. A pattern "
    "with '/' is relative to the search directory; one without '/' matches file names at "
    "any depth. Returns paths relative to the searched "
    "directory (directories end in '/'). Respects .gitignore. Output stops at "
    f"{DEFAULT_LIMIT} results (change it with limit) or {MAX_BYTES // 1024}KB."
)

PARAMETERS = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "Glob relative to the search directory, e.g. 'src/**/*.ts'; without '/', e.g. '*.py', it matches file names at any depth"},
        "path": {"type": "string", "description": "Directory to search (default: the working directory)"},
        "limit": {"type": "integer", "minimum": 1, "description": f"Most results to return (default: {DEFAULT_LIMIT})"},
    },
    "required": ["pattern"],
}


def path_matcher(pattern: str, root: str) -> Callable[[str], bool]:
    """The test for a path relative to ``root``, as pi 1.6's find applies the pattern."""
    from pi_plugins.tools.walk import glob_matcher

    while pattern.startswith("./"):
        pattern = pattern[2:]
    ignore_case = pattern == pattern.lower()
    if pattern.startswith("/"):  # absolute: matched against the absolute path
        absolute = glob_matcher(pattern, ignore_case=ignore_case)
        base = root.rstrip("/")
        return lambda path: absolute(f"{base}/{path}".lstrip("/"))
    return glob_matcher(pattern, anchored=True, ignore_case=ignore_case)


async def execute(args: dict, run: ToolRun) -> ToolResult:
    from pi_plugins.tools.walk import walk

    if run.signal.aborted:
        raise ToolError("Operation aborted")
    pattern, where = args["pattern"], args.get("path") or "."
    limit = args.get("limit") or DEFAULT_LIMIT
    env = await environment_for(run)
    root = env.resolve(where)
    try:
        info = await env.stat(root)
        if info.kind != "directory":
            raise NotADirectoryError(root)
        matches = path_matcher(pattern, str(root))
        found: list[str] = []
        reached = False
        async for entry in walk(env, root):
            if run.signal.aborted:
                raise ToolError("Operation aborted")
            if matches(entry.path):
                if len(found) >= limit:
                    reached = True
                    break
                found.append(entry.path + "/" if entry.is_dir else entry.path)
    except NotADirectoryError:
        raise ToolError(f"{where} is not a directory; find searches directories. Use read for a file.") from None
    except OSError as exc:
        raise os_error(exc, where, "searching") from None
    if not found:
        return ToolResult.text(f"No files found matching {pattern}")
    cut = truncate_head("\n".join(found), max_lines=len(found) + 1)
    notes, details = [], {}
    if reached:
        notes.append(
            f"Stopped at {limit} results; there are more. Narrow the pattern, or call find with limit={limit * 2}"
        )
        details["resultLimitReached"] = limit
    if cut.truncated:
        notes.append(f"Output cut at the {format_size(MAX_BYTES)} budget; narrow the pattern to see the rest")
        details["truncation"] = cut.as_details()
    text = cut.content + ("\n\n[" + ". ".join(notes) + "]" if notes else "")
    return ToolResult.text(text, details or None)


find_tool = Tool(
    name="find",
    label="find",
    description=DESCRIPTION,
    parameters=PARAMETERS,
    function=execute,
    execution_mode="parallel",
    default_active=False,  # offered when asked for (--tools), as in pi
)
