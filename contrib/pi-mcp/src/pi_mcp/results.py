"""MCP tool results (as wire JSON) to pi tool results, and MCP tool names to pi's.

Text stays text; images become image blocks; a resource's text is shown with its URI; a
binary resource, audio or a resource link is named in a line of text (the model cannot
take them as they are). ``structuredContent`` goes to ``details`` (and to the text when
the server sent nothing else); ``isError`` marks the result as an error.
"""

from __future__ import annotations

import json
import re

from pi_core import ImageContent, TextContent, ToolResult

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
MAX_NAME = 64  # what the providers accept for a tool name


def tool_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>``, with what providers reject replaced by ``_``."""
    name = f"mcp__{_UNSAFE.sub('_', server)}__{_UNSAFE.sub('_', tool)}"
    return name[:MAX_NAME]


def _block(item: dict):
    kind = item.get("type")
    if kind == "text":
        return TextContent(str(item.get("text", "")))
    if kind == "image" and isinstance(item.get("data"), str):
        return ImageContent(data=item["data"], mime_type=item.get("mimeType") or "image/png")
    if kind == "audio":
        size = len(item.get("data") or "") * 3 // 4
        return TextContent(f"[audio {item.get('mimeType', '')}, {size} bytes, not shown]")
    if kind == "resource":
        resource = item.get("resource") or {}
        uri = resource.get("uri", "")
        if isinstance(resource.get("text"), str):
            return TextContent(f"[resource {uri}]\n{resource['text']}")
        size = len(resource.get("blob") or "") * 3 // 4
        return TextContent(f"[resource {uri} ({resource.get('mimeType', 'binary')}, {size} bytes), not shown]")
    if kind == "resource_link":
        what = item.get("description") or item.get("name") or ""
        return TextContent(f"[resource link {item.get('uri', '')}]" + (f" {what}" if what else ""))
    return TextContent(json.dumps(item, ensure_ascii=False))


def to_tool_result(result: dict, server: str, tool: str) -> ToolResult:
    content = [_block(item) for item in result.get("content") or [] if isinstance(item, dict)]
    structured = result.get("structuredContent")
    if not content and structured is not None:
        content = [TextContent(json.dumps(structured, ensure_ascii=False, indent=2))]
    if not content:
        content = [TextContent("(no output)")]
    details = {"server": server, "tool": tool}
    if structured is not None:
        details["structuredContent"] = structured
    return ToolResult(content=content, details=details, is_error=bool(result.get("isError")))
