"""MCP tool results (wire JSON) as the model sees them, as pi 1.6 shows them: text and
images pass; embedded text resources are text, image resources images; a binary
resource is saved to a temp file named in the text; audio and links a short line. Text
over 20 KB keeps its start and end around a ``…N chars truncated…`` marker, and the full
text goes to a temp file the result names. ``details`` keeps the whole result
(``structuredContent`` and ``isError`` included) for programs, never for the model.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from pi_core import ImageContent, TextContent, ToolResult
from pi_plugins.tools.output_files import write_output_file

MAX_OUTPUT_BYTES = 20 * 1024
READ_RESOURCE_TOOL = "read_mcp_resource"


def save_output(data: str | bytes, extension: str) -> str:
    """A new output file only the user may read (pi's ``pi-mcp-<hex>`` names)."""
    return write_output_file("pi-mcp", extension, data)


def _size(n: int) -> str:
    if n < 1024:
        return f"{n}B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f}KB"
    return f"{n / 1024 / 1024:.1f}MB"


def _is_text_type(mime: str | None) -> bool:
    kind = (mime or "").split(";", 1)[0].strip().lower()
    return kind.startswith("text/") or kind == "application/json" or kind.endswith(("+json", "+xml"))


def _extension(uri: str) -> str:
    tail = uri.rsplit("/", 1)[-1]
    stem, dot, ext = tail.rpartition(".")
    return f".{ext}" if dot and stem and 1 <= len(ext) <= 8 and ext.isalnum() else ".bin"


def _block(server: str, block: dict, readable: bool) -> TextContent | ImageContent:
    kind = block.get("type")
    if kind == "text":
        return TextContent(str(block.get("text", "")))
    if kind == "image":
        return ImageContent(data=block.get("data", ""), mime_type=block.get("mimeType") or "image/png")
    if kind == "audio":
        return TextContent(f"[audio {block.get('mimeType')} omitted]")
    if kind == "resource_link":
        details = ", ".join(x for x in (block.get("mimeType"),
                                        None if block.get("size") is None else _size(block["size"])) if x)
        read = f'. Read it with {READ_RESOURCE_TOOL} (server "{server}")' if readable else ""
        about = f": {block['description']}" if block.get("description") else ""
        return TextContent(f'[Resource {block.get("uri")} "{block.get("title") or block.get("name")}"'
                           f'{f" ({details})" if details else ""}{about}{read}]')
    if kind == "resource":
        return resource_content(block.get("resource") or {})
    return TextContent(f"[unsupported MCP content {kind}]")


def resource_content(resource: dict) -> TextContent | ImageContent:
    """An embedded or read resource: its text, an image, or a line naming the temp file
    a binary one was saved to."""
    if "text" in resource:
        return TextContent(str(resource["text"]))
    mime = resource.get("mimeType")
    if mime and mime.startswith("image/"):
        return ImageContent(data=resource.get("blob", ""), mime_type=mime)
    data = base64.b64decode(resource.get("blob") or "")
    if _is_text_type(mime):
        return TextContent(data.decode("utf-8", "replace"))
    uri = resource.get("uri", "")
    what = f"{mime or 'unknown type'}, {_size(len(data))}"
    try:
        return TextContent(f"[Binary resource {uri} ({what}) saved to {save_output(data, _extension(uri))}]")
    except OSError as exc:
        return TextContent(f"[Binary resource {uri} ({what}) could not be saved: {exc}]")


def truncate_middle(text: str, max_bytes: int = MAX_OUTPUT_BYTES) -> tuple[str, int, int] | None:
    """(head…N chars truncated…tail, total bytes, total lines), or None when it fits."""
    data = text.encode()
    if len(data) <= max_bytes:
        return None
    head_end = max_bytes // 2
    while head_end > 0 and (data[head_end] & 0xC0) == 0x80:
        head_end -= 1
    tail_start = len(data) - (max_bytes - max_bytes // 2)
    while tail_start < len(data) and (data[tail_start] & 0xC0) == 0x80:
        tail_start += 1
    removed = len(data[head_end:tail_start].decode())
    lines = text.count("\n") + 1 - (1 if text.endswith("\n") else 0)
    cut = f"{data[:head_end].decode()}…{removed} chars truncated…{data[tail_start:].decode()}"
    return cut, len(data), lines


def limit(content: list) -> tuple[list, str | None]:
    """Content within 20 KB of text as it is; longer text cut in the middle, with the path
    of the file holding all of it, followed by the images."""
    combined = "\n".join(b.text for b in content if isinstance(b, TextContent))
    cut = truncate_middle(combined)
    if cut is None:
        return content, None
    text, total, lines = cut
    path = None
    try:
        path = save_output(combined, ".txt")
        where = f"\n\n[Full output: {path} (read it with offset/limit)]"
    except OSError as exc:
        where = f"\n\n[Could not save the full output: {exc}]"
    tokens = -(-total // 4)
    head = f"Warning: truncated output (original token count: {tokens})\nTotal output lines: {lines}\n\n"
    return [TextContent(head + text + where), *(b for b in content if isinstance(b, ImageContent))], path


def to_tool_result(server: str, tool: str, result: dict[str, Any], *, readable: bool = False) -> ToolResult:
    """The model's view of one ``tools/call`` result; ``isError`` makes an error result."""
    blocks = [b for b in result.get("content") or [] if isinstance(b, dict)]
    content: list = [_block(server, b, readable) for b in blocks]
    if not content and result.get("structuredContent") is not None:
        content = [TextContent(json.dumps(result["structuredContent"], indent=2, ensure_ascii=False))]
    is_error = bool(result.get("isError"))
    if is_error and not any(isinstance(b, TextContent) and b.text for b in content):
        content.append(TextContent(f"MCP tool {server}/{tool} returned an error"))
    content, full = limit(content)
    details: dict[str, Any] = {"server": server, "tool": tool}
    if full:
        details["fullOutputPath"] = full
    details["result"] = {k: v for k, v in result.items() if k != "_meta"}
    return ToolResult(content=content, details=details, is_error=is_error)
