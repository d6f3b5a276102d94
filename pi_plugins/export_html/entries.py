"""One entry of the session as HTML: its css class, title and body (messages, tool calls
and their results, shell commands, summaries, plugin messages, and what the harness
records beside them). Every value is escaped (:mod:`.markup`)."""

from __future__ import annotations

import contextvars
import json
from typing import Any

from pi_core.protocol.codec import to_json
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
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UnknownContent,
    UnknownMessage,
    UserMessage,
)
from pi_plugins.export_html import texts
from pi_plugins.export_html.markup import escape, folded_json, folded_pre, image, markdown_div, text_div

#: The tools whose own ``summarize`` heads each call on the page (set per export).
_TOOLS: contextvars.ContextVar[dict | None] = contextvars.ContextVar("export_tools", default=None)


def _tools() -> dict:
    tools = _TOOLS.get()
    if tools is None:  # a file exported on its own: the built-in tools present their calls
        from pi_plugins.tools import builtin_tools

        tools = {t.name: t for t in builtin_tools()}
        _TOOLS.set(tools)
    return tools


def use_tools(tools: list) -> None:
    """Head each call on the page with these tools' own summaries (set per export)."""
    _TOOLS.set({t.name: t for t in tools})


def render_entry(entry: Entry) -> tuple[str, str, str]:
    """(css class, escaped title, escaped body) of one entry in the conversation."""
    if isinstance(entry, MessageEntry):
        return _render_message(entry.message)
    if isinstance(entry, CompactionEntry):
        return ("compaction", "Compaction",
                f'<details class="summary"><summary>{texts.tokens(texts.number(entry.tokens_before))} tokens '
                f"before this point were summarised</summary>{markdown_div(entry.summary)}</details>")
    if isinstance(entry, BranchSummaryEntry):
        return ("branch-summary", "Branch summary", markdown_div(entry.summary))
    if isinstance(entry, CustomMessageEntry):
        return _render_custom(entry.custom_type, entry.content, entry.display)
    if isinstance(entry, ModelChangeEntry):
        return ("meta", "Model", f'<span class="meta-text">{escape(entry.provider)}/'
                                 f"{escape(entry.model_id)}</span>")
    if isinstance(entry, ThinkingLevelChangeEntry):
        return ("meta", "Thinking level", f'<span class="meta-text">{escape(entry.thinking_level)}</span>')
    if isinstance(entry, LabelEntry):
        what = (f"“{escape(entry.label)}” on" if entry.label else "cleared from")
        return ("meta", "Label", f'<span class="meta-text">{what} '
                                 f'<a href="#e-{escape(entry.target_id)}">{escape(entry.target_id)}</a></span>')
    if isinstance(entry, SessionInfoEntry):
        return ("meta", "Session name", f'<span class="meta-text">{escape(entry.name or "(cleared)")}</span>')
    if isinstance(entry, CustomEntry):
        return ("meta", "Plugin data", f'<span class="meta-text">{escape(entry.custom_type)}</span>'
                                       + folded_json(entry.data, "data"))
    if isinstance(entry, UnknownEntry):
        return ("meta unknown", "Entry", f'<span class="meta-text">of type {escape(entry.type or "?")}'
                                         "</span>" + folded_json(entry.data, "as stored"))
    return ("meta unknown", "Entry", "")


def render_unreadable(entry: Entry, error: Exception) -> tuple[str, str, str]:
    """An entry holding values of types nobody expects (a hand-edited or damaged file)."""
    try:
        stored: Any = entry.data if isinstance(entry, UnknownEntry) else to_json(entry)
    except Exception:
        stored = repr(entry)
    return ("meta unknown", "Entry", f'<span class="meta-text">of type {escape(entry.type or "?")}, '
            f"not readable here ({escape(type(error).__name__)}: {escape(error)})</span>"
            + folded_json(stored, "as stored"))


def _render_message(message: Any) -> tuple[str, str, str]:
    if isinstance(message, UserMessage):
        return ("user", "User", _content(message.content, markdown=True))
    if isinstance(message, AssistantMessage):
        return ("assistant", "Assistant", _assistant(message))
    if isinstance(message, ToolResultMessage):
        state = "error" if message.is_error else "ok"
        title = f'Result of <span class="tool-name">{escape(message.tool_name)}</span>'
        if message.is_error:
            title += ' <span class="error-mark">error</span>'
        return (f"tool-result {state}", title, _content(message.content, fold=True) + _nested(message.nested_calls))
    if isinstance(message, BashExecutionMessage):
        return ("bash", "Shell", _bash(message))
    if isinstance(message, CustomMessage):
        return _render_custom(message.custom_type, message.content, message.display)
    if isinstance(message, BranchSummaryMessage):
        return ("branch-summary", "Branch summary", markdown_div(message.summary))
    if isinstance(message, CompactionSummaryMessage):
        return ("compaction", "Compaction summary", markdown_div(message.summary))
    if isinstance(message, SystemMessage):  # pi 1.6's prompt sections and tools, or a change of them
        return ("meta system", "System prompt", folded_json(to_json(message), "sections and tools"))
    if isinstance(message, UnknownMessage):
        return ("meta unknown", "Message", f'<span class="meta-text">with role '
                f"{escape(message.role or '?')}</span>" + folded_json(message.data, "as stored"))
    return ("meta unknown", "Message", "")


def _render_custom(custom_type: str, content: Any, display: bool) -> tuple[str, str, str]:
    title = f'Plugin message <span class="tool-name">{escape(custom_type)}</span>'
    if display:
        return ("custom", title, _content(content))
    return ("custom hidden-message", title + ' <span class="meta-text">(not displayed in pi)</span>',
            f"<details><summary>content</summary>{_content(content)}</details>")


def _assistant(message: AssistantMessage) -> str:
    parts = []
    meta = [f"{message.provider}/{message.model}"] if message.model else []
    usage = message.usage
    if texts.number(usage.input) or texts.number(usage.output):
        meta.append(f"↑{texts.tokens(texts.number(usage.input))} ↓{texts.tokens(texts.number(usage.output))}")
    if texts.number(usage.cost.total):
        meta.append(f"${texts.number(usage.cost.total):.4f}")
    if meta:
        parts.append(f'<div class="message-meta">{escape(" · ".join(meta))}</div>')
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text.strip():
                parts.append(markdown_div(block.text))
        elif isinstance(block, ThinkingContent):
            if block.redacted:
                parts.append('<details class="thinking"><summary>Thinking (redacted by the '
                             "provider)</summary></details>")
            elif block.thinking.strip():
                parts.append(f'<details class="thinking"><summary>Thinking</summary>'
                             f"{text_div(block.thinking)}</details>")
        elif isinstance(block, ToolCall):
            parts.append(_tool_call(block))
        elif isinstance(block, ImageContent):
            parts.append(image(block))
        elif isinstance(block, UnknownContent):
            parts.append(folded_json(block.data, f"{block.type or 'unknown'} block"))
    if message.stop_reason == "error":
        parts.append(f'<div class="error-text">Error: {escape(message.error_message or "unknown error")}</div>')
    elif message.stop_reason == "aborted":
        parts.append('<div class="error-text">Aborted</div>')
    elif message.stop_reason == "length":
        parts.append('<div class="error-text">Stopped at the output token limit</div>')
    return "".join(parts)


def _tool_call(call: ToolCall) -> str:
    """A call headed by its tool's own one-line summary; its body by what the arguments
    hold (written content, edits, else the arguments), whatever the tool is called."""
    from pi_plugins.tools.presentation import summary_of

    args = call.arguments if isinstance(call.arguments, dict) else {"arguments": call.arguments}
    head = (f'<span class="tool-name">{escape(call.name)}</span> '
            f'<span class="path">{escape(summary_of(call.name, args, _tools()))}</span>')
    if isinstance(args.get("content"), str):
        body = folded_pre(args["content"], "content")
    elif isinstance(args.get("edits"), list) or "oldText" in args:
        body = _edits(args)
    elif args and call.name not in _tools():  # no tool to summarise it: all the arguments
        body = folded_pre(json.dumps(args, indent=2, ensure_ascii=False, default=str), "arguments")
    else:
        body = ""
    return (f'<div class="tool-call" data-call="{escape(call.id)}"><div class="tool-head">'
            f"→ {head}</div>{body}</div>")


def _edits(args: dict) -> str:
    edits = args.get("edits")
    if not isinstance(edits, list):
        edits = [args] if "oldText" in args or "newText" in args else []
    out = []
    for edit in edits:
        if not isinstance(edit, dict):
            continue
        out.append(folded_pre(str(edit.get("oldText", "")), "removed", css="del"))
        out.append(folded_pre(str(edit.get("newText", "")), "added", css="ins"))
    return f'<div class="edits">{"".join(out)}</div>' if out else ""


def _nested(nested: Any) -> str:
    """pi 1.6's list of the calls a tool made (a codemode script's): status, name,
    arguments, duration and error of each, never their results."""
    calls = [c for c in (nested or {}).get("calls") or () if isinstance(c, dict)] if isinstance(nested, dict) else []
    if not calls:
        return ""
    lines = [f"Nested calls: {len(calls)}{'' if nested.get('complete') else ' (incomplete record)'}"]
    for c in calls:
        args = json.dumps(c["arguments"], ensure_ascii=False, separators=(",", ":")) if "arguments" in c \
            else f"[arguments omitted, {c.get('argumentsBytes')} bytes]"
        took = f" {c['durationMs']}ms" if c.get("durationMs") is not None else ""
        error = "\n    " + str(c["error"]).replace("\n", "\n    ") if c.get("error") else ""
        lines.append(f"{_NESTED_MARKS.get(str(c.get('status')), '?')} {c.get('name')} {args}{took}{error}")
    return folded_pre("\n".join(lines), "nested calls", "nested-calls")


_NESTED_MARKS = {"ok": "✓", "error": "✗", "unfinished": "…"}


def _bash(message: BashExecutionMessage) -> str:
    notes = []
    if message.cancelled:
        notes.append("cancelled")
    elif message.exit_code not in (0, None):
        notes.append(f"exit code {message.exit_code}")
    if message.truncated:
        notes.append("output truncated" + (f"; full output in {message.full_output_path}"
                                           if message.full_output_path else ""))
    if message.exclude_from_context:
        notes.append("not sent to the model")
    note = f'<div class="meta-text">{escape("; ".join(notes))}</div>' if notes else ""
    output = folded_pre(message.output, "output") if message.output else ""
    return f'<pre class="command">$ {escape(message.command)}</pre>{output}{note}'


def _content(content: Any, fold: bool = False, markdown: bool = False) -> str:
    as_text = markdown_div if markdown else text_div
    if isinstance(content, str):
        return folded_pre(content, "output") if fold else as_text(content)
    parts = []
    for block in content or ():
        if isinstance(block, TextContent):
            parts.append(folded_pre(block.text, "output") if fold else as_text(block.text))
        elif isinstance(block, ImageContent):
            parts.append(image(block))
        elif isinstance(block, UnknownContent):
            parts.append(folded_json(block.data, f"{block.type or 'unknown'} block"))
    return "".join(parts)
