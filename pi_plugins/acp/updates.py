"""Harness events as ACP ``session/update`` notifications.

Streamed text and thinking become ``agent_message_chunk`` and ``agent_thought_chunk``. A
tool call is announced (``tool_call``, status pending) when it is about to be decided,
goes ``in_progress`` with its first output, and ends ``completed``, or ``failed`` when it
was blocked or failed (``tool_call_update``). write and edit are of kind ``edit`` and end
with a diff of the file on its absolute path; a new file's diff has no old text.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_core.protocol.messages import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    text_of,
)

if TYPE_CHECKING:  # acp is imported when the mode runs
    from acp.schema import (
        ContentToolCallContent,
        FileEditToolCallContent,
        TerminalToolCallContent,
        ToolKind,
    )

KINDS: dict[str, ToolKind] = {"read": "read", "write": "edit", "edit": "edit", "bash": "execute", "grep": "search",
         "find": "search", "ls": "search"}


def kind_of(tool_name: str) -> ToolKind:
    return KINDS.get(tool_name, "other")


def title_of(tool_name: str, arguments: Any) -> str:
    args = arguments if isinstance(arguments, dict) else {}
    detail = args.get("command") or args.get("path") or args.get("pattern") or ""
    detail = str(detail).splitlines()[0] if detail else ""
    return f"{tool_name} {detail}".strip() if len(detail) <= 120 else f"{tool_name} {detail[:117]}..."


def text_block(text: str):
    from acp import text_block as block

    return block(text)


class UpdateWriter:
    """Turns one session's events into updates; ``send(update)`` delivers one."""

    def __init__(self, cwd: str, send) -> None:
        self.cwd = cwd
        self.send = send
        self._before: dict[str, tuple[str, str | None]] = {}  # tool call id → (path, old text)

    def _path(self, arguments: Any) -> str | None:
        path = arguments.get("path") if isinstance(arguments, dict) else None
        if not isinstance(path, str) or not path:
            return None
        return os.path.normpath(os.path.join(self.cwd, os.path.expanduser(path)))

    async def event(self, event: Any) -> None:
        from acp.helpers import update_agent_message, update_agent_thought

        kind = event.type
        if kind == "message_update":
            stream = event.assistant_message_event
            if stream.type == "text_delta" and stream.delta:
                await self.send(update_agent_message(text_block(stream.delta)))
            elif stream.type == "thinking_delta" and stream.delta:
                await self.send(update_agent_thought(text_block(stream.delta)))
        elif kind == "tool_execution_start":
            await self.tool_started(event.tool_call_id, event.tool_name, event.args)
        elif kind == "tool_execution_update":
            await self.tool_progress(event.tool_call_id, event.partial_result)
        elif kind == "tool_execution_end":
            await self.tool_ended(event.tool_call_id, event.tool_name, event.result, event.is_error)

    async def tool_started(self, call_id: str, name: str, arguments: Any) -> None:
        from acp.schema import ToolCallLocation, ToolCallStart

        path = self._path(arguments)
        if kind_of(name) == "edit" and path is not None:
            try:
                old = Path(path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                old = None
            self._before[call_id] = (path, old)
        await self.send(ToolCallStart(
            session_update="tool_call", tool_call_id=call_id, title=title_of(name, arguments),
            kind=kind_of(name), status="pending", raw_input=arguments,
            locations=[ToolCallLocation(path=path)] if path else None))

    async def tool_progress(self, call_id: str, partial: Any) -> None:
        """Output so far (bash's accumulated output): the call is running."""
        from acp.schema import ToolCallProgress

        text = _result_text(partial)
        await self.send(ToolCallProgress(session_update="tool_call_update", tool_call_id=call_id,
                                         status="in_progress", content=[_content(text)] if text else None))

    async def tool_ended(self, call_id: str, name: str, result: Any, is_error: bool) -> None:
        from acp.helpers import tool_diff_content
        from acp.schema import ToolCallProgress

        content: list[ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent] = []
        text = _result_text(result)
        before = self._before.pop(call_id, None)
        if before is not None and not is_error:
            path, old = before
            try:
                new = Path(path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                new = None
            if new is not None:
                content.append(tool_diff_content(path, new, old))
        if text:
            content.append(_content(text))
        await self.send(ToolCallProgress(
            session_update="tool_call_update", tool_call_id=call_id,
            status="failed" if is_error else "completed", content=content or None,
            raw_output={"content": text, "isError": bool(is_error)}))

    # ------------------------------------------------------------ replaying a session

    async def replay(self, messages: list) -> None:
        """A loaded session's history: user chunks, assistant chunks, tool calls."""
        from acp.helpers import update_agent_message, update_agent_thought, update_user_message

        results = {m.tool_call_id: m for m in messages if isinstance(m, ToolResultMessage)}
        for message in messages:
            if isinstance(message, UserMessage):
                text = text_of(message.content)
                if text:
                    await self.send(update_user_message(text_block(text)))
            elif isinstance(message, AssistantMessage):
                for block in message.content:
                    if isinstance(block, TextContent) and block.text:
                        await self.send(update_agent_message(text_block(block.text)))
                    elif isinstance(block, ThinkingContent) and block.thinking:
                        await self.send(update_agent_thought(text_block(block.thinking)))
                    elif isinstance(block, ToolCall):
                        await self._replay_tool(block, results.get(block.id))

    async def _replay_tool(self, call, result: ToolResultMessage | None) -> None:
        from acp.schema import ToolCallLocation, ToolCallStart

        path = self._path(call.arguments)
        failed = result is None or result.is_error
        text = text_of(result.content) if result is not None else ""
        await self.send(ToolCallStart(
            session_update="tool_call", tool_call_id=call.id, title=title_of(call.name, call.arguments),
            kind=kind_of(call.name), status="failed" if failed else "completed", raw_input=call.arguments,
            locations=[ToolCallLocation(path=path)] if path else None,
            content=[_content(text)] if text else None))


def _result_text(result: Any) -> str:
    content = getattr(result, "content", None)
    if isinstance(content, (list, str)):
        return text_of(content)
    return ""


def _content(text: str):
    from acp.schema import ContentToolCallContent

    return ContentToolCallContent(type="content", content=text_block(text))
