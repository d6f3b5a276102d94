"""How the built-in tools present their calls and which files they touch: each tool's
``summarize(args)`` (one line: ``$ ls``, ``read notes.md:10-19``, ``grep /todo/ in src``)
and ``files(args)`` (``{"read": [...], "modified": [...]}``). The chat, the tree view,
the HTML export and compaction's file lists ask the tool, never its name, so a plugin's
own ``read`` (or a new tool) presents itself."""

from __future__ import annotations

import os
from typing import Any


def argument(args: Any, *names: str) -> Any:
    """The first of ``names`` the arguments give (a model may use another spelling)."""
    if not isinstance(args, dict):
        return None
    for name in names:
        if args.get(name) is not None:
            return args[name]
    return None


def short_path(path: str) -> str:
    """``path`` with the home folder written ``~`` (only a whole folder: not ``/home/mex``)."""
    home = os.path.expanduser("~")
    if home and home != "/" and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home):]
    return path


def _path(args: Any, default: str = "...") -> str:
    value = argument(args, "path", "file_path")
    return short_path(str(value)) if value is not None else default


def summarize_read(args: Any) -> str:
    text = f"read {_path(args)}"
    offset, limit = argument(args, "offset"), argument(args, "limit")
    if offset is not None or limit is not None:
        try:
            start = int(offset or 1)
            text += f":{start}" + (f"-{start + int(limit) - 1}" if limit is not None else "")
        except (TypeError, ValueError):
            pass
    return text


def summarize_write(args: Any) -> str:
    return f"write {_path(args)}"


def summarize_edit(args: Any) -> str:
    return f"edit {_path(args)}"


def summarize_bash(args: Any) -> str:
    command = argument(args, "command")
    text = f"$ {command if command is not None else '...'}"
    timeout = argument(args, "timeout")
    return f"{text} (timeout {timeout}s)" if timeout else text


def summarize_grep(args: Any) -> str:
    text = f"grep /{argument(args, 'pattern') or ''}/ in {_path(args, '.')}"
    glob = argument(args, "glob")
    return f"{text} ({glob})" if glob else text


def summarize_find(args: Any) -> str:
    return f"find {argument(args, 'pattern') or ''} in {_path(args, '.')}"


def summarize_ls(args: Any) -> str:
    return f"ls {_path(args, '.')}"


def reads(args: Any) -> dict:
    path = argument(args, "path", "file_path")
    return {"read": [path]} if isinstance(path, str) else {}


def modifies(args: Any) -> dict:
    path = argument(args, "path", "file_path")
    return {"modified": [path]} if isinstance(path, str) else {}


#: name → (summarize, files) of each built-in tool.
BUILTIN = {
    "read": (summarize_read, reads),
    "write": (summarize_write, modifies),
    "edit": (summarize_edit, modifies),
    "bash": (summarize_bash, None),
    "grep": (summarize_grep, None),
    "find": (summarize_find, None),
    "ls": (summarize_ls, None),
}


def dress(tool) -> Any:
    """Give a built-in tool its presentation and file effects (once)."""
    summarize, files = BUILTIN.get(tool.name, (None, None))
    if tool.summarize_function is None and summarize is not None:
        tool.summarize_function = summarize
    if tool.files_function is None and files is not None:
        tool.files_function = files
    return tool


def summary_of(name: str, args: Any, tools: dict | None = None) -> str:
    """The one line for a call of ``name``: its tool's own summary. When no such tool is
    loaded (a session from another run, a file exported on its own), pi's built-in
    presentation of that name if it has one, else a generic line."""
    from pi_core.protocol.tools import Tool

    tool = (tools or {}).get(name) or dress(Tool(name=name))
    try:
        return tool.summarize(args if isinstance(args, dict) else {})
    except Exception:  # a plugin's summarize must not break the view
        return Tool(name=name).summarize(args if isinstance(args, dict) else {})
