"""The page's commands beyond pi's RPC: ``navigate_tree``, what ``/tree`` does in the
terminal chat (pi 1.6's RPC has ``get_tree`` but no way to move in it).

``{"type": "navigate_tree", "entryId": ID, "summarize": bool, "instructions": str?}``
moves the session's leaf through the harness's ``navigate_tree``, as the chat's /tree
does: a user message is left to its parent and its text comes back as ``editorText``
(to edit and send again), any other entry becomes the leaf itself; ``summarize`` hangs a
summary of the branch left behind where the new one starts. Every client of the session
then gets a ``tree_navigated`` frame and shows the conversation at the new leaf. Where
workspace checkpoints are on, ``restoreFiles`` also puts the files back as they were at
the entry chosen (the chat's "Restore the files to that point too?", whose list of files
``plan_restore`` gives first).

``{"type": "set_label", "entryId": ID, "label": str|null}`` sets or clears (empty or
null) an entry's label, a ``label`` entry in the session file as pi's /tree writes it;
every client gets a ``label_changed`` frame.
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


#: The chat's /tree filters (pi 1.6's ``treeFilterMode`` values), in the order they cycle.
TREE_FILTERS = ("default", "no-tools", "user-only", "labeled-only", "all")


class ServeCommands(BrowserToolCommands, Commands):
    """pi's RPC commands, and the page's own, for one client of ``served``."""

    def __init__(self, served: Any, send: Any, client: Any = None) -> None:
        super().__init__(served.app, send)
        self.served = served
        self.client = client  # the page that offers browser tools, if it does

    async def cmd_get_tree(self, c: dict) -> Any:
        """pi's ``get_tree``, whether to skip the summary question
        (``branchSummary.skipPrompt``) and the filter to start with (``treeFilterMode``),
        as the chat's /tree reads them."""
        tree = await super().cmd_get_tree(c)
        settings = self.harness.ctx.settings
        tree["skipSummaryPrompt"] = bool(settings.get("branchSummary.skipPrompt", False))
        mode = settings.get("treeFilterMode", "default")
        tree["filterMode"] = mode if mode in TREE_FILTERS else "default"
        return tree

    async def cmd_set_label(self, c: dict) -> Any:
        entry_id, label = c.get("entryId"), c.get("label")
        if not isinstance(entry_id, str) or not entry_id:
            raise CommandError("entryId must be an entry's id")
        if label is not None and not isinstance(label, str):
            raise CommandError("label must be a string, or null to clear it")
        if self.harness.session.entry(entry_id) is None:
            raise CommandError(f"Entry not found: {entry_id}")
        label = (label or "").strip() or None
        self.harness.ctx.set_label(entry_id, label)
        self.served.emit({"type": "label_changed", "entryId": entry_id, "label": label})
        return {"entryId": entry_id, "label": label}

    async def cmd_plan_restore(self, c: dict) -> Any:
        """The files a restore to ``entryId`` would change (none where checkpoints are
        off or none is at or before it): the chat asks only when there are some."""
        entry_id = c.get("entryId")
        if not isinstance(entry_id, str) or not entry_id:
            raise CommandError("entryId must be an entry's id")
        try:
            files = await (await self.harness.checkpointer()).plan(entry_id)
        except Exception:  # checkpoints off, or none at or before that point (as the chat)
            files = []
        return {"files": list(files or [])}

    async def cmd_navigate_tree(self, c: dict) -> Any:
        entry_id = c.get("entryId")
        summarize = c.get("summarize", False)
        instructions = c.get("instructions")
        restore = c.get("restoreFiles", False)
        if not isinstance(restore, bool):
            raise CommandError("restoreFiles must be true or false")
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
        result: dict = {"cancelled": not moved, "leafId": session.leaf_id,
                        "editorText": editor_text if moved else None}
        if moved:
            self.served.emit({"type": "tree_navigated", "oldLeafId": old_leaf, "leafId": session.leaf_id})
            if restore:
                result.update(await self._restore(entry_id))
        return result

    async def _restore(self, entry_id: str) -> dict:
        """The files put back as at ``entry_id`` after the move; a failure is reported,
        the move stands (as the chat's)."""
        try:
            done = await self.harness.restore_checkpoint(entry_id)
        except Exception as exc:
            return {"restoreError": str(exc) or type(exc).__name__}
        return {"restored": done.to_json()}
