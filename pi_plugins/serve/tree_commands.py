"""The page's commands beyond pi's RPC: ``navigate_tree``, what ``/tree`` does in the
terminal chat (pi 1.6's RPC has ``get_tree`` but no way to move in it).

``{"type": "navigate_tree", "entryId": ID, "summarize": bool, "instructions": str?}``
moves the session's leaf through the harness's ``navigate_tree``, as the chat's /tree
does: a user message is left to its parent and its text comes back as ``editorText``
(to edit and send again), any other entry becomes the leaf itself; ``summarize`` hangs a
summary of the branch left behind where the new one starts. Every client of the session
then gets a ``tree_navigated`` frame and shows the conversation at the new leaf.
"""

from __future__ import annotations

from typing import Any

from pi_core.protocol.entries import CustomMessageEntry, MessageEntry
from pi_core.protocol.messages import TextContent, UserMessage
from pi_plugins.rpc.commands import Commands
from pi_plugins.rpc.protocol import CommandError
from pi_plugins.serve.browser_tools import BrowserToolCommands


def editor_text_for(entry: Any) -> str | None:
    """A user (or plugin) message's text: choosing it goes to its parent, as pi's /tree."""
    content: Any
    if isinstance(entry, MessageEntry) and isinstance(entry.message, UserMessage):
        content = entry.message.content
    elif isinstance(entry, CustomMessageEntry):
        content = entry.content
    else:
        return None
    if isinstance(content, str):
        return content
    return "\n".join(block.text for block in content if isinstance(block, TextContent))


class ServeCommands(BrowserToolCommands, Commands):
    """pi's RPC commands, and the page's own, for one client of ``served``."""

    def __init__(self, served: Any, send: Any, client: Any = None) -> None:
        super().__init__(served.app, send)
        self.served = served
        self.client = client  # the page that offers browser tools, if it does

    async def cmd_get_tree(self, c: dict) -> Any:
        """pi's ``get_tree``, and whether to skip the summary question
        (``branchSummary.skipPrompt``, as the chat's /tree reads it)."""
        tree = await super().cmd_get_tree(c)
        tree["skipSummaryPrompt"] = bool(self.harness.ctx.settings.get("branchSummary.skipPrompt", False))
        return tree

    async def cmd_navigate_tree(self, c: dict) -> Any:
        entry_id = c.get("entryId")
        summarize = c.get("summarize", False)
        instructions = c.get("instructions")
        if not isinstance(entry_id, str) or not entry_id:
            raise CommandError("entryId must be an entry's id")
        if not isinstance(summarize, bool):
            raise CommandError("summarize must be true or false")
        if instructions is not None and not isinstance(instructions, str):
            raise CommandError("instructions must be a string")
        session = self.harness.session
        entry = session.entry(entry_id)
        if entry is None:
            raise CommandError(f"Entry not found: {entry_id}")
        editor_text = editor_text_for(entry)
        target = entry.parent_id if editor_text is not None else entry_id
        old_leaf = session.leaf_id
        moved = await self.harness.navigate_tree(target, summarize=summarize,
                                                 instructions=(instructions or "").strip() or None)
        if moved:
            self.served.emit({"type": "tree_navigated", "oldLeafId": old_leaf, "leafId": session.leaf_id})
        return {"cancelled": not moved, "leafId": session.leaf_id,
                "editorText": editor_text if moved else None}
