"""The session tree as ``/tree`` lists it: one row per entry, drawn with branch lines.

A chain of single children stays in one column; where an entry has several children,
each child's subtree hangs off ``├─`` / ``└─`` one column further in, with ``│`` running
down past the branches still to come. The branch holding the current leaf is listed
first and its entries are marked ``•``. Filters (pi's: default, no-tools, user-only,
labeled-only, all) hide entries; a hidden entry's children hang from its nearest shown
ancestor, so the drawing stays a tree.
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any

from attrs import define, field
from rich.text import Text

from pi_core.protocol.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
)
from pi_core.protocol.messages import TextContent, ToolCall
from pi_core.session.tree import TreeNode

FILTERS = ("default", "no-tools", "user-only", "labeled-only", "all")
_BOOKKEEPING = (LabelEntry, CustomEntry, ModelChangeEntry, ThinkingLevelChangeEntry, SessionInfoEntry)


@define
class Row:
    node: TreeNode
    prefix: str
    active: bool  # on the path from the root to the leaf
    here: bool = False  # the leaf, or its nearest shown ancestor (labels and such are hidden)
    parent_id: str | None = None  # the nearest shown ancestor
    children_ids: list[str] = field(factory=list)  # the shown children (also of a folded row)
    folded: bool = False

    @property
    def entry(self):
        return self.node.entry


def _message(entry):
    return entry.message if isinstance(entry, MessageEntry) else None


def _text(content: Any, limit: int = 200) -> str:
    if isinstance(content, str):
        text = content
    else:
        text = "".join(c.text for c in content or [] if isinstance(c, TextContent))
    return " ".join(text.split())[:limit]


def shown(node: TreeNode, mode: str, leaf_id: str | None) -> bool:
    entry = node.entry
    if getattr(entry, "type", None) == "usage":
        return False  # spending outside the conversation (cache warming): never listed, as pi 1.6
    message = _message(entry)
    if message is not None and message.role == "assistant" and entry.id != leaf_id:
        if not _text(message.content) and message.stop_reason not in ("error", "aborted", "length"):
            return False  # only tool calls: the tool rows stand for it
    if mode == "all":
        return True
    if mode == "user-only":
        return message is not None and message.role == "user"
    if mode == "labeled-only":
        return node.label is not None
    if isinstance(entry, _BOOKKEEPING) or not hasattr(entry, "id"):
        return False
    if mode == "no-tools":
        return not (message is not None and message.role == "toolResult")
    return True


def rows(roots: list[TreeNode], leaf_id: str | None, mode: str = "default", query: str = "",
         tools: dict | None = None, folded: set[str] | frozenset = frozenset()) -> list[Row]:
    """The rows to list, top to bottom (iterative: a session may be 20,000 entries deep);
    the rows under a ``folded`` one are left out."""
    active = _active_path(roots, leaf_id)
    words = query.lower().split()
    tool_calls = tool_calls_by_id(roots, tools)

    def visible(node: TreeNode) -> bool:
        if not shown(node, mode, leaf_id):
            return False
        return not words or all(w in searchable(node, tool_calls).lower() for w in words)

    def visible_children(node_children: list[TreeNode]) -> list[TreeNode]:
        """Children as they appear: a hidden child is replaced by its own visible ones."""
        found, stack = [], list(reversed(node_children))
        while stack:
            child = stack.pop()
            if visible(child):
                found.append(child)
            else:
                stack.extend(reversed(child.children))
        found.sort(key=lambda n: n.entry.id not in active)  # the active branch first
        return found

    here = _nearest_shown(roots, leaf_id, visible)
    out: list[Row] = []
    tops = visible_children(roots)
    stack: list[tuple[TreeNode, str, str, str | None]] = []
    if len(tops) == 1:
        stack.append((tops[0], "", "", None))
    else:
        for index in reversed(range(len(tops))):
            stack.append((tops[index], "", "", None))
    while stack:
        node, lead, rest, parent_id = stack.pop()
        children = visible_children(node.children)
        entry_id = node.entry.id
        out.append(Row(node, lead, entry_id in active, entry_id == here, parent_id,
                       [c.entry.id for c in children], entry_id in folded))
        if entry_id in folded:
            continue
        if len(children) == 1:
            stack.append((children[0], rest, rest, entry_id))
            continue
        for index in reversed(range(len(children))):
            last = index == len(children) - 1
            stack.append((children[index], rest + ("└─ " if last else "├─ "), rest + ("   " if last else "│  "),
                          entry_id))
    return out


def foldable(row: Row, by_id: dict[str, Row]) -> bool:
    """As pi: a row with shown children that starts a root or a branch segment."""
    if not row.children_ids:
        return False
    parent = by_id.get(row.parent_id) if row.parent_id else None
    return parent is None or len(parent.children_ids) > 1


def segment_start(listed: list[Row], index: int, direction: str) -> int:
    """Where Ctrl+←/→ goes when there is nothing to fold or unfold: up to the start of
    this branch segment (or the one before), down to the next branch point's first
    child or the branch's end."""
    by_id = {row.entry.id: row for row in listed}
    position = {row.entry.id: i for i, row in enumerate(listed)}
    current = listed[index]
    if direction == "down":
        while True:
            children = [c for c in current.children_ids if c in by_id]
            if current.folded or not children:
                return position[current.entry.id]
            if len(current.children_ids) > 1:
                return position[children[0]]
            current = by_id[children[0]]
    while True:
        parent = by_id.get(current.parent_id) if current.parent_id else None
        if parent is None:
            return position[current.entry.id]
        if len(parent.children_ids) > 1 and position[current.entry.id] < index:
            return position[current.entry.id]
        current = parent


def label_time(stamp: str | None, now: datetime | None = None) -> str:
    """A label's time as pi shows it: ``14:05`` today, ``3/7 14:05`` this year, else ``25/3/7 14:05``."""
    if not stamp:
        return ""
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone()
    except ValueError:
        return ""
    now = now or datetime.now().astimezone()
    time = when.strftime("%H:%M")
    if when.date() == now.date():
        return time
    if when.year == now.year:
        return f"{when.month}/{when.day} {time}"
    return f"{when.year % 100:02d}/{when.month}/{when.day} {time}"


def _ancestry(roots: list[TreeNode], leaf_id: str | None) -> list[TreeNode]:
    """The nodes from ``leaf_id`` up to its root."""
    if leaf_id is None:
        return []
    parent: dict[str, tuple[TreeNode, str | None]] = {}
    stack: list[tuple[TreeNode, str | None]] = [(r, None) for r in roots]
    while stack:
        node, up = stack.pop()
        parent[node.entry.id] = (node, up)
        stack.extend((c, node.entry.id) for c in node.children)
    path: list[TreeNode] = []
    current: str | None = leaf_id
    while current is not None and current in parent:
        node, current = parent[current]
        path.append(node)
    return path


def _active_path(roots: list[TreeNode], leaf_id: str | None) -> set[str]:
    return {node.entry.id for node in _ancestry(roots, leaf_id)}


def _nearest_shown(roots: list[TreeNode], leaf_id: str | None, visible) -> str | None:
    return next((node.entry.id for node in _ancestry(roots, leaf_id) if visible(node)), None)


class CallIndex(dict):
    """Tool calls by id, and the loaded tools by name (for their own summaries)."""

    tools: dict | None = None


def tool_calls_by_id(roots: list[TreeNode], tools: dict | None = None) -> dict[str, ToolCall]:
    calls = CallIndex()
    calls.tools = tools
    stack = list(roots)
    while stack:
        node = stack.pop()
        message = _message(node.entry)
        if message is not None and message.role == "assistant":
            for call in message.tool_calls:
                calls[call.id] = call
        stack.extend(node.children)
    return calls


def _short(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home):] if home not in ("", "/") and path.startswith(home) else path


def tool_call_text(name: str, args: dict, tools: dict | None = None) -> str:
    """A call as the tree lists it: ``[`` the tool's own one-line summary ``]``."""
    from pi_plugins.tools.presentation import summary_of

    summary = " ".join(summary_of(name, args, tools).split())
    return f"[{summary[:60]}{'...' if len(summary) > 60 else ''}]"


def entry_text(node: TreeNode, tool_calls: dict[str, ToolCall]) -> Text:
    """How one entry reads in the list."""
    entry = node.entry
    message = _message(entry)
    if message is not None:
        role = message.role
        if role == "user":
            return Text.assemble(("user: ", "accent"), _text(message.content))
        if role == "assistant":
            text = _text(message.content)
            if text:
                return Text.assemble(("assistant: ", "success"), text)
            if message.stop_reason == "aborted":
                return Text.assemble(("assistant: ", "success"), ("(aborted)", "muted"))
            if message.error_message:
                return Text.assemble(("assistant: ", "success"), (" ".join(message.error_message.split())[:80], "error"))
            return Text.assemble(("assistant: ", "success"), ("(no content)", "muted"))
        if role == "toolResult":
            call = tool_calls.get(message.tool_call_id)
            return Text(tool_call_text(call.name, call.arguments, getattr(tool_calls, "tools", None))
                        if call else f"[{message.tool_name or 'tool'}]",
                        style="muted")
        if role == "bashExecution":
            return Text(f"[bash]: {' '.join(message.command.split())}", style="dim")
        return Text(f"[{role}]", style="dim")
    if isinstance(entry, CustomMessageEntry):
        return Text.assemble((f"[{entry.custom_type}]: ", "custom.label"), _text(entry.content))
    if isinstance(entry, CompactionEntry):
        return Text(f"[compaction: {round(entry.tokens_before / 1000)}k tokens]", style="border.accent")
    if isinstance(entry, BranchSummaryEntry):
        return Text.assemble(("[branch summary]: ", "warning"), " ".join(entry.summary.split())[:200])
    if isinstance(entry, ModelChangeEntry):
        return Text(f"[model: {entry.model_id}]", style="dim")
    if isinstance(entry, ThinkingLevelChangeEntry):
        return Text(f"[thinking: {entry.thinking_level}]", style="dim")
    if isinstance(entry, CustomEntry):
        return Text(f"[custom: {entry.custom_type}]", style="dim")
    if isinstance(entry, LabelEntry):
        return Text(f"[label: {entry.label or '(cleared)'}]", style="dim")
    if isinstance(entry, SessionInfoEntry):
        return Text(f"[title: {entry.name or 'empty'}]", style="dim")
    return Text(f"[{getattr(entry, 'type', 'entry')}]", style="dim")


def searchable(node: TreeNode, tool_calls: dict[str, ToolCall]) -> str:
    return f"{node.label or ''} {entry_text(node, tool_calls).plain}"


def row_label(row: Row, tool_calls: dict[str, ToolCall], *, can_fold: bool = False,
              label_times: bool = False) -> Text:
    prefix = row.prefix
    if prefix and (row.folded or can_fold):  # the connector shows the fold: ⊞ folded, ⊟ foldable
        prefix = prefix[:-2] + ("⊞ " if row.folded else "⊟ ")
    label = Text(prefix, style="dim")
    if row.folded and not row.prefix:
        label.append("⊞ ", style="accent")
    if row.active:
        label.append("• ", style="accent")
    if row.node.label:
        label.append(f"[{row.node.label}] ", style="label")
        if label_times and row.node.label_timestamp:
            label.append(f"{label_time(row.node.label_timestamp)} ", style="muted")
    label.append_text(entry_text(row.node, tool_calls))
    if row.here:
        label.append("  ← active", style="muted")
    return label


def editor_text_for(entry) -> str | None:
    """Selecting a user (or plugin) message goes to its parent and offers its text again."""
    message = _message(entry)
    if message is not None and message.role == "user":
        content = message.content
        if isinstance(content, str):
            return content
        return "\n".join(c.text for c in content if isinstance(c, TextContent))
    if isinstance(entry, CustomMessageEntry):
        return entry.content if isinstance(entry.content, str) else _text(entry.content, 10_000)
    return None
