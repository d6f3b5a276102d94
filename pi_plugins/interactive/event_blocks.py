"""The harness's events as the chat's blocks: a user message appears, the assistant's
message streams into its block, each tool call gets a block as its arguments stream and
fills in as it runs; compactions, retries and budgets say what they do in the working
line and the chat. One handler per event type.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from pi_core.protocol.messages import TextContent
from pi_plugins.interactive import render_hooks
from pi_plugins.interactive.blocks import (
    AssistantBlock,
    Block,
    CustomBlock,
    SummaryBlock,
    ToolBlock,
    UserBlock,
    View,
    user_text,
)
from pi_plugins.interactive.footer import git_branch
from pi_plugins.interactive.tool_views import ToolState

if TYPE_CHECKING:
    from pi_plugins.interactive.app import InteractiveApp

WORKING = "Working... (esc to interrupt)"
#: Events that bring something new into the chat after a run of cache refreshes.
_AFTER_CACHE_WARMS = frozenset(("agent_start", "message_start", "compaction_start", "auto_retry_start",
                                "budget_exceeded"))


def tools_by_name(harness) -> dict:
    """The agent's tools by name (each presents its own calls)."""
    return {t.name: t for t in harness.agent.tools or []}


class EventBlocks:
    def __init__(self, tui: InteractiveApp) -> None:
        self.tui = tui
        #: The assistant message streaming now, and the tool calls not finished yet.
        self.streaming: AssistantBlock | None = None
        self.tools: dict[str, ToolBlock] = {}
        from pi_plugins.interactive.terminal_progress import TerminalProgress

        self.progress = TerminalProgress(tui)  # OSC 9;4 while the agent works (pi 1.6)
        from pi_plugins.interactive.program_status import ProgramStatus, supported_by

        self.status = ProgramStatus(tui, supported_by(tui))  # OSC 7501: working, blocked, done …
        self._handlers = {
            "message_start": self._message_start, "message_update": self._message_update,
            "message_end": self._message_end, "tool_execution_start": self._tool_start,
            "tool_execution_update": self._tool_update, "tool_execution_end": self._tool_end,
            "agent_start": self._agent_start, "agent_end": self._agent_end,
            "queue_update": lambda event: self.tui.invalidate(),
            "compaction_start": self._compaction_start, "compaction_end": self._compaction_end,
            "budget_exceeded": self._budget_exceeded,
            "auto_retry_start": self._retry_start, "auto_retry_end": self._retry_end,
        }

    def on_event(self, event) -> None:
        kind = event.type
        if kind in _AFTER_CACHE_WARMS or kind == "entry_appended":
            from pi_plugins.interactive import cache_notices

            if kind != "entry_appended":  # something new comes: a growing "Cache warmed" line ends
                cache_notices.settle_cache_warming_notice(self.tui)
            elif getattr(event.entry, "kind", None) == "cache_warm":
                return cache_notices.add_cache_warming_notice(self.tui, event.entry)
            elif getattr(event.entry, "custom_type", None) in render_hooks.entry_renderers:
                self.tui.add(EntryBlock(event.entry))  # pi 1.6's registerEntryRenderer
                return
        self.progress.on_event(event)
        self.status.on_event(event)
        handler = self._handlers.get(event.type)
        if handler is not None:
            handler(event)

    def settle(self) -> None:
        """After a run: nothing is streaming any more."""
        if self.streaming is not None:
            self.streaming.final = True
            self.streaming.changed()
            self.streaming = None
        for block in self.tools.values():
            if not block.state.finished:
                block.state.finished = True
                block.changed()
        self.tools.clear()
        self.tui.branch = git_branch(self.tui.harness.ctx.cwd)
        self.tui.changed()

    def _tool_block(self, call_id: str, name: str, args) -> ToolBlock:
        """A new block for a tool call, added to the chat."""
        tool = tools_by_name(self.tui.harness).get(name)
        block = ToolBlock(ToolState(call_id, name, args, tool=tool))
        self.tui.add(block)
        return block

    # ---------------------------------------------------------------- messages

    def _message_start(self, event) -> None:
        message, tui = event.message, self.tui
        if message.role == "user":
            text = user_text(message)
            if text.strip():
                images = [c for c in message.content if getattr(c, "type", None) == "image"] \
                    if isinstance(message.content, list) else []
                tui.add(UserBlock(text, images))
        elif message.role == "assistant":
            self.streaming = AssistantBlock(message)
            tui.add(self.streaming)
        elif message.role == "custom" and message.display:
            tui.add(CustomBlock(message, tui.renderers.get(message.custom_type)))

    def _message_update(self, event) -> None:
        block = self.streaming
        if block is None:
            return
        block.message = event.message
        block.changed()
        if event.assistant_message_event.type.startswith("toolcall"):
            for call in event.message.tool_calls:  # a call shows while its arguments stream
                tool = self.tools.get(call.id)
                if tool is None:
                    self.tools[call.id] = self._tool_block(call.id, call.name, call.arguments)
                else:
                    tool.state.args = call.arguments
                    tool.changed()
        self.tui.invalidate()

    def _message_end(self, event) -> None:
        message = event.message
        if message.role != "assistant" or self.streaming is None:
            return
        block, self.streaming = self.streaming, None
        block.message, block.final = message, True
        block.changed()
        for call in message.tool_calls:
            tool = self.tools.get(call.id)
            if tool is None:
                tool = self.tools[call.id] = self._tool_block(call.id, call.name, call.arguments)
            tool.state.args = call.arguments
            if message.stop_reason in ("aborted", "error"):
                tool.state.content = [TextContent(text=message.error_message or "Operation aborted")]
                tool.state.is_error = tool.state.finished = True
            tool.changed()
        from pi_plugins.interactive.cache_notices import cache_miss_notice, dropped_reasoning_notice

        for line in (dropped_reasoning_notice(self.tui.harness, message), cache_miss_notice(self.tui.harness, message)):
            if line is not None:
                self.tui.add_text(line, "warning")
        self.tui.changed()

    # ---------------------------------------------------------------- tools

    def _tool_start(self, event) -> None:
        tool = self.tools.get(event.tool_call_id)
        if tool is None:
            tool = self.tools[event.tool_call_id] = self._tool_block(event.tool_call_id, event.tool_name,
                                                                     event.args)
        tool.state.started = True
        tool.state.started_at = time.monotonic()
        tool.changed()
        self.tui.invalidate()

    def _tool_update(self, event) -> None:
        tool = self.tools.get(event.tool_call_id)
        partial = event.partial_result
        if tool is not None and partial is not None:
            tool.state.content, tool.state.details = partial.content, partial.details
            tool.changed()
            self.tui.invalidate()

    def _tool_end(self, event) -> None:
        tool = self.tools.pop(event.tool_call_id, None)
        if tool is not None:
            result = event.result
            tool.state.content = getattr(result, "content", None) or []
            tool.state.details = getattr(result, "details", None)
            tool.state.is_error = event.is_error
            tool.state.duration_ms = event.duration_ms
            tool.state.finished = True
            tool.changed()
            self.tui.changed()

    # ---------------------------------------------------------------- runs

    def _agent_start(self, event) -> None:
        if self.tui.working is None:  # a run a plugin started (ctx.send_user_message)
            self.tui.set_working(WORKING)

    def _agent_end(self, event) -> None:
        if self.tui.run_task is None and not self.tui.busy:
            self.tui.set_working(None)
        self.settle()

    def _compaction_start(self, event) -> None:
        label = ("Compacting context..." if event.reason == "manual" else
                 ("Context overflow detected, auto-compacting..." if event.reason == "overflow"
                  else "Auto-compacting...")) + " (esc to cancel)"
        self.tui.set_working(label)

    def _compaction_end(self, event) -> None:
        tui = self.tui
        tui.set_working(WORKING if tui.run_task is not None else None)
        if event.aborted:
            tui.add_text("Compaction cancelled" if event.reason == "manual" else
                         "Auto-compaction cancelled", "error" if event.reason == "manual" else "dim")
        elif event.result is not None:
            # as pi: the chat is rebuilt from the new context, and the compaction's
            # collapsible block (ctrl+o shows the summary) closes it
            tui.rebuild_chat(summary_notices=False)  # its cost goes under the block that closes it
            tui.add(SummaryBlock("[compaction]", f"Compacted from {event.result.tokens_before:,} tokens",
                                 event.result.summary))
            from pi_plugins.interactive.cache_notices import shown, summary_cost_notice

            if event.result.usage is not None and shown(tui.harness):  # what the summary cost (pi 1.6)
                tui.add_text(summary_cost_notice("compaction", event.result.usage), "warning")
        elif event.error_message:
            tui.add_text(f"Compaction failed: {event.error_message}", "error")
        elif event.reason == "manual":
            tui.add_text("Nothing to compact", "dim")

    def _budget_exceeded(self, event) -> None:  # the run ended before a request (--max-cost …)
        self.tui.add_text(f"Budget reached: {event.describe()}", "error")

    def _retry_start(self, event) -> None:
        self.tui.set_working(f"Retrying ({event.attempt}/{event.max_attempts}) in "
                             f"{max(1, round(event.delay_ms / 1000))}s... (esc to cancel)")

    def _retry_end(self, event) -> None:
        tui = self.tui
        tui.set_working(WORKING if tui.run_task is not None else None)
        if not event.success:
            tui.add_text(f"Retry failed after {event.attempt} attempts: {event.final_error or 'unknown error'}",
                         "error")
        tui.invalidate()


class EntryBlock(Block):
    """A plugin's custom entry, drawn by the renderer it registered for its kind."""

    def __init__(self, entry) -> None:
        super().__init__()
        self.entry = entry

    def renderable(self, view: View, live: bool = False):
        return render_hooks.entry_renderable(self.entry, view.expand_tools, view.pad)
