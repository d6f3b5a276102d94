"""``grep``: search file contents, with ripgrep when the environment has it and a
Python search otherwise. Both respect .gitignore (in or out of a git repository; a file the
model's ``glob`` names explicitly is searched even if ignored, as ripgrep does), search
hidden files, skip ``.git`` and binary files, and format results alike:
``path:line: text`` for a match and ``path-line- text`` for a context line.
"""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING, Any

from pi_core.protocol.records import field, record
from pi_core.protocol.tools import Tool, ToolResult, ToolRun
from pi_plugins.tools.errors import ToolError, os_error
from pi_plugins.tools.lookup import environment_for
from pi_plugins.tools.truncation import (
    GREP_MAX_LINE_CHARS,
    MAX_BYTES,
    format_size,
    truncate_head,
    truncate_line,
)

if TYPE_CHECKING:
    from pi_core.protocol.environment import ExecutionEnvironment

DEFAULT_LIMIT = 100

DESCRIPTION = (
    "Search the contents of files for a regular expression (or, with literal=true, a plain "
    "string). Returns matching lines as path:line: text, paths relative to the searched "
    f"directory. Respects .gitignore. Output stops at {DEFAULT_LIMIT} matches (change it "
    f"with limit) or {MAX_BYTES // 1024}KB; lines longer than {GREP_MAX_LINE_CHARS} "
    "characters are cut."
)

PARAMETERS = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "The regular expression, or the literal text with literal=true"},
        "path": {"type": "string", "description": "Directory or file to search (default: the working directory)"},
        "glob": {"type": "string", "description": "Only search files matching this glob, e.g. '*.py' or 'src/**/*.ts'"},
        "ignoreCase": {"type": "boolean", "description": "Ignore upper/lower case (default: false)"},
        "literal": {"type": "boolean", "description": "Take pattern as plain text, not a regular expression (default: false)"},
        "context": {"type": "integer", "minimum": 0, "description": "Lines to show before and after each match (default: 0)"},
        "limit": {"type": "integer", "minimum": 1, "description": f"Most matches to return (default: {DEFAULT_LIMIT})"},
    },
    "required": ["pattern"],
}


@record
class _Results:
    """Rows found so far: (path, line number, text, is a match)."""

    limit: int
    rows: list[tuple[str, int, str, bool]] = field(factory=list)
    matches: int = 0
    limit_reached: bool = False  # a match past the limit was seen (pi 1.6 says so only then)
    notes: list[str] = field(factory=list)

    @property
    def full(self) -> bool:
        return self.matches >= self.limit


async def execute(args: dict, run: ToolRun) -> ToolResult:
    if run.signal.aborted:
        raise ToolError("Operation aborted")
    where = args.get("path") or "."
    env = await environment_for(run)
    root = env.resolve(where)
    try:
        info = await env.stat(root)
    except OSError as exc:
        raise os_error(exc, where, "searching") from None
    is_dir = info.kind == "directory"
    results = _Results(limit=args.get("limit") or DEFAULT_LIMIT)
    context = args.get("context") or 0
    rg = await env.which("rg")
    if rg:
        await _ripgrep(env, rg, root, is_dir, args, context, results, run)
    else:
        await _python(env, root, is_dir, args, context, results, run)
    return _report(results)


def _show_path(root: str, is_dir: bool, path: str) -> str:
    if is_dir:
        rel = os.path.relpath(path, root)
        if not rel.startswith(".."):
            return rel.replace(os.sep, "/")
    return os.path.basename(path)


def _report(results: _Results) -> ToolResult:
    if not results.rows:
        text = "No matches found"
        if results.notes:
            text += "\n\n[" + ". ".join(results.notes) + "]"
        return ToolResult.text(text)
    cut_lines = False
    lines = []
    for path, number, text, is_match in results.rows:
        text, cut = truncate_line(text)
        cut_lines = cut_lines or cut
        lines.append(f"{path}:{number}: {text}" if is_match else f"{path}-{number}- {text}")
    truncation = truncate_head("\n".join(lines), max_lines=len(lines) + 1)
    details: dict[str, Any] = {}
    notes = list(results.notes)
    if results.limit_reached:  # pi 1.6's notices, word for word
        notes.append(f"{results.limit} matches limit reached. Use limit={results.limit * 2} for more, or refine pattern")
        details["matchLimitReached"] = results.limit
    if truncation.truncated:
        notes.append(f"{format_size(MAX_BYTES)} limit reached")
        details["truncation"] = truncation.as_details()
    if cut_lines:
        notes.append(f"Some lines truncated to {GREP_MAX_LINE_CHARS} chars. Use read tool to see full lines")
        details["linesTruncated"] = True
    text = truncation.content
    if notes:
        text += "\n\n[" + ". ".join(notes) + "]"
    return ToolResult.text(text, details or None)


# ---------------------------------------------------------------- ripgrep


def _line(text: str) -> str:
    """A line without its terminator; a carriage return inside it is content, as pi 1.6 keeps it."""
    return text.removesuffix("\n").removesuffix("\r")


def _text(value: dict | None) -> str:
    if not value:
        return ""
    if "text" in value:
        return value["text"]
    import base64

    return base64.b64decode(value.get("bytes", "")).decode("utf-8", "replace")


async def _ripgrep(
    env: ExecutionEnvironment, rg: str, root: str, is_dir: bool, args: dict, context: int,
    results: _Results, run: ToolRun,
) -> None:
    argv = [rg, "--no-config", "--json", "--line-number", "--color=never", "--hidden", "--no-require-git", "--glob", "!.git"]
    if args.get("ignoreCase"):
        argv.append("--ignore-case")
    if args.get("literal"):
        argv.append("--fixed-strings")
    if context:
        argv += ["--context", str(context)]
    if args.get("glob"):  # ripgrep never matches a leading ./ ("!" negates)
        argv += ["--glob", re.sub(r"^(!?)(?:\./)+", r"\1", args["glob"])]
    argv += ["--", args["pattern"], root]
    process = await env.spawn(argv, merge_stderr=False)
    stop_on_abort = run.signal.on_abort(process.kill)
    stopped = finished = False
    try:
        pending = b""
        # As pi 1.6: past the last allowed match only its trailing context is kept (a match
        # there shown as context), and only one more match proves the limit cut results off.
        window: tuple[str, int] | None = None  # the last allowed match's file and context end
        while not stopped:
            chunk = await process.read()
            if not chunk:
                break
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                kind, data = event.get("type"), event.get("data") or {}
                path, number = _text(data.get("path")), data.get("line_number")
                if kind not in ("match", "context") or not path or not isinstance(number, int):
                    continue
                row = (_show_path(root, is_dir, path), number, _line(_text(data.get("lines"))))
                if window is None:
                    results.rows.append((*row, kind == "match"))
                    if kind == "match":
                        results.matches += 1
                        if results.full:
                            window = (path, number + context)
                    continue
                in_window = path == window[0] and number <= window[1]
                if in_window:
                    results.rows.append((*row, False))
                results.limit_reached = results.limit_reached or kind == "match"
                if results.limit_reached and not (in_window and number < window[1]):
                    stopped = True
                    break
        if stopped:
            process.kill()
        code = await process.wait()
        errors = (await process.errors()).decode("utf-8", "replace").strip()
        finished = True
    finally:
        stop_on_abort()
        if not finished:  # cancelled or failed: rg must not run on
            process.kill()
        process.close()
    if run.signal.aborted:
        raise ToolError("Operation aborted")
    if stopped or code in (0, 1):
        return
    if not results.rows:
        raise ToolError(
            f"ripgrep failed: {errors or f'exit code {code}'}. If the pattern is meant as plain "
            "text, call grep again with literal=true."
        )
    first = errors.splitlines()[0] if errors else f"exit code {code}"
    results.notes.append(f"Some files could not be searched ({first})")


# ---------------------------------------------------------------- Python fallback


async def _python(
    env: ExecutionEnvironment, root: str, is_dir: bool, args: dict, context: int,
    results: _Results, run: ToolRun,
) -> None:
    from pi_plugins.tools.walk import glob_matcher, walk

    pattern = re.escape(args["pattern"]) if args.get("literal") else args["pattern"]
    try:
        regex = re.compile(pattern, re.IGNORECASE if args.get("ignoreCase") else 0)
    except re.error as exc:
        raise ToolError(
            f"Invalid regular expression {args['pattern']!r}: {exc}. Escape special characters, "
            "or call grep again with literal=true."
        ) from None
    if not is_dir:
        await _search_file(env, root, os.path.basename(root), regex, context, results)
        return
    wanted = glob_matcher(args["glob"]) if args.get("glob") else None
    rescue = wanted if wanted is not None and not args["glob"].startswith("!") else None
    skipped = 0
    async for found in walk(env, root, wanted=rescue):
        if run.signal.aborted:
            raise ToolError("Operation aborted")
        if found.is_dir or found.is_link or (wanted is not None and not wanted(found.path)):
            continue
        try:
            await _search_file(env, found.full, found.path, regex, context, results)
        except OSError:
            skipped += 1
        if results.limit_reached:
            break
    if skipped:
        results.notes.append(f"{skipped} file(s) could not be read and were skipped")


async def _search_file(
    env: ExecutionEnvironment, full: str, shown: str, regex: Any, context: int, results: _Results
) -> None:
    data = await env.read_bytes(full)
    if b"\0" in data:
        return  # binary
    lines = [_line(line) for line in data.decode("utf-8", "replace").split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    hits: list[int] = []
    for number, line in enumerate(lines):
        if regex.search(line):
            if results.matches + len(hits) >= results.limit:
                results.limit_reached = True  # one more match than the limit allows
                break
            hits.append(number)
    if not hits:
        return
    is_hit = set(hits)
    shown_up_to = -1
    for hit in hits:
        for number in range(max(hit - context, shown_up_to + 1), min(hit + context, len(lines) - 1) + 1):
            results.rows.append((shown, number + 1, lines[number], number in is_hit))
            shown_up_to = number
    results.matches += len(hits)


grep_tool = Tool(
    name="grep",
    label="grep",
    description=DESCRIPTION,
    parameters=PARAMETERS,
    function=execute,
    execution_mode="parallel",
    default_active=False,  # offered when asked for (--tools), as in pi
)
