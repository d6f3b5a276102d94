"""What a tool call resolves to inside a script (pi 1.6's docs/codemode.md, "Call
tools"): ``read`` gives the file's text or an image block, ``bash`` a structured value
(also for non-zero exit codes), an MCP tool its whole ``CallToolResult`` (``isError``
included: it resolves), a tool whose details carry ``structuredContent`` (pi 1.6's
tools with an output schema, such as the MCP resource tools) that value, every other
tool its text output. A failed, blocked or
invalid call rejects with the tool's error text."""

from __future__ import annotations

import re
from typing import Any

from pi_core import ImageContent, TextContent, ToolResult

_EXIT = re.compile(r"(?:\n\n|^)Command exited with code (\d+)$")


def _text(result: ToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


def _bash(result: ToolResult, seconds: float) -> tuple[bool, Any]:
    text = _text(result)
    found = _EXIT.search(text)
    if result.is_error and found is None:
        return False, text  # timed out, aborted, killed, or could not start
    details = result.details if isinstance(result.details, dict) else {}
    value: dict[str, Any] = {
        "output": text[:found.start()] if found else text,
        "truncated": bool((details.get("truncation") or {}).get("truncated")),
        "exit_code": int(found.group(1)) if found else 0,
        "wall_time_seconds": round(seconds, 3),
    }
    if details.get("fullOutputPath"):
        value["full_output_path"] = details["fullOutputPath"]
    return True, value


def _sorted(value: Any) -> Any:
    """Keys in order at every level, as pi 1.6 hands a ``CallToolResult`` to scripts."""
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def mcp_result(result: ToolResult) -> dict | None:
    """The ``CallToolResult`` an MCP tool keeps in its details (``server``, ``tool``,
    ``result``; see pi_plugins/mcp/results.py), or None for any other result."""
    details = result.details
    if isinstance(details, dict) and {"server", "tool"} <= details.keys() and isinstance(details.get("result"), dict):
        return details["result"]
    return None


def script_value(name: str, result: ToolResult, seconds: float, tool: Any = None) -> tuple[bool, Any]:
    """``(ok, value)`` for the script: value JSON-able, or the error text when not ok. A tool
    with an ``output_schema`` gives its ``structured_content``, error or not (pi 1.6)."""
    if getattr(tool, "output_schema", None) is not None and result.structured_content is not None:
        return True, result.structured_content
    if name == "bash":
        return _bash(result, seconds)
    structured = result.details.get("structuredContent") if isinstance(result.details, dict) else None
    if isinstance(structured, dict):  # a tool with an output schema (the MCP resource tools): its value
        return True, structured
    called = mcp_result(result)
    if called is not None:
        return True, _sorted({"isError": False, **called})
    if result.is_error:
        return False, _text(result) or "The tool call failed"
    images = [block for block in result.content if isinstance(block, ImageContent)]
    if name == "read" and images:
        return True, {"type": "image", "data": images[0].data, "mimeType": images[0].mime_type,
                      "note": _text(result)}
    return True, _text(result)
