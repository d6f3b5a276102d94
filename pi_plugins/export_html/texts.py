"""Plain text for the page: one line naming each entry in the sidebar tree (and a
branch's title), and tokens, times and numbers written as pi's export writes them."""

from __future__ import annotations

from typing import Any

from pi_core.protocol.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    Entry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
    UnknownEntry,
)
from pi_core.protocol.messages import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ImageContent,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

SUMMARY_CHARS = 90  # one line of the sidebar tree


def summary(entry: Entry) -> tuple[str, str]:
    """(css class, one line of plain text) naming ``entry`` in the sidebar tree."""
    if isinstance(entry, MessageEntry):
        message = entry.message
        if isinstance(message, UserMessage):
            return "t-user", "user: " + summary_text(text_of(message.content))
        if isinstance(message, AssistantMessage):
            text = message.text.strip()
            if text:
                return "t-assistant", "assistant: " + summary_text(text)
            calls = message.tool_calls
            if calls:
                return "t-assistant", "assistant: → " + summary_text(
                    ", ".join(_call_summary(c) for c in calls))
            if message.stop_reason in ("error", "aborted"):
                return "t-assistant", f"assistant: ({message.stop_reason})"
            return "t-assistant", "assistant: (thinking only)" if message.content else "assistant: (empty)"
        if isinstance(message, ToolResultMessage):
            state = "error" if message.is_error else "result"
            return "t-tool", f"{message.tool_name} {state}: " + summary_text(text_of(message.content))
        if isinstance(message, BashExecutionMessage):
            return "t-tool", "$ " + summary_text(message.command)
        if isinstance(message, CustomMessage):
            return "t-custom", f"[{message.custom_type}] " + summary_text(text_of(message.content))
        if isinstance(message, BranchSummaryMessage):
            return "t-summary", "branch summary: " + summary_text(message.summary)
        if isinstance(message, CompactionSummaryMessage):
            return "t-summary", "compaction summary: " + summary_text(message.summary)
        return "t-meta", f"message ({getattr(message, 'role', '?')})"
    if isinstance(entry, BranchSummaryEntry):
        return "t-summary", "branch summary: " + summary_text(entry.summary)
    if isinstance(entry, CompactionEntry):
        return "t-summary", f"compaction: {tokens(number(entry.tokens_before))} tokens summarised"
    if isinstance(entry, CustomMessageEntry):
        return "t-custom", f"[{entry.custom_type}] " + summary_text(text_of(entry.content))
    if isinstance(entry, ModelChangeEntry):
        return "t-meta", f"model: {entry.provider}/{entry.model_id}"
    if isinstance(entry, ThinkingLevelChangeEntry):
        return "t-meta", f"thinking: {entry.thinking_level}"
    if isinstance(entry, LabelEntry):
        return "t-meta", f"label: {entry.label or '(cleared)'}"
    if isinstance(entry, SessionInfoEntry):
        return "t-meta", f"name: {entry.name or '(cleared)'}"
    if isinstance(entry, CustomEntry):
        return "t-meta", f"plugin data: {entry.custom_type}"
    return "t-meta", f"entry: {entry.type or '?'}"


def _call_summary(call: ToolCall) -> str:
    args = call.arguments if isinstance(call.arguments, dict) else {}
    for key in ("command", "path", "pattern"):
        if isinstance(args.get(key), str):
            return f"{call.name} {args[key]}"
    return call.name


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    texts = [b.text for b in content or () if isinstance(b, TextContent)]
    if texts:
        return "\n".join(texts)
    return "(image)" if any(isinstance(b, ImageContent) for b in content or ()) else ""


def summary_text(text: str) -> str:
    """The start of ``text`` on one line, cut at :data:`SUMMARY_CHARS`."""
    head = " ".join(text[: SUMMARY_CHARS * 4].split())
    return head if len(head) <= SUMMARY_CHARS else head[: SUMMARY_CHARS - 1] + "…"


def timestamp(entry: Entry) -> str:
    stamp = entry.data.get("timestamp") if isinstance(entry, UnknownEntry) else entry.timestamp
    return stamp if isinstance(stamp, str) else ""


def short_time(stamp: str) -> str:
    """``2026-11-30T04:04:56.423Z`` as ``2026-11-30 04:04:56`` (pi's stamps are UTC)."""
    if len(stamp) >= 19 and stamp[10] == "T":
        return f"{stamp[:10]} {stamp[11:19]}"
    return stamp


def number(value: Any) -> float:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def tokens(count: float) -> str:
    """Token counts as pi's export writes them: 999, 1.2k, 12k, 1.2M."""
    count = int(count)
    if count < 1000:
        return str(count)
    if count < 10_000:
        return f"{count / 1000:.1f}k"
    if count < 1_000_000:
        return f"{round(count / 1000)}k"
    return f"{count / 1_000_000:.1f}M"
