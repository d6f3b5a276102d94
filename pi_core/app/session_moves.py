"""The harness's session moves: new, resume, fork, clone, ``/tree`` and ``/reload``, each
asking the plugins first (``session_before_*``) as pi does."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pi_core.app.compacting import take_summary_usage
from pi_core.loop import AgentBusyError
from pi_core.plugins import flag
from pi_core.protocol import events
from pi_core.protocol.events import ForkPosition, SessionShutdown, SessionStart
from pi_core.protocol.messages import text_of

if TYPE_CHECKING:
    from pi_core.app.harness import Harness


class SessionMoves:
    def __init__(self, harness: Harness) -> None:
        self.harness = harness

    async def new_session(self, parent_session: str | None = None) -> bool:
        """Leave this session for a new, empty one (False when a plugin said no)."""
        if await self._vetoed("session_before_switch", events.SwitchEvent("new", None)):
            return False
        from pi_core.session import Session

        h = self.harness
        if h.session.file is None:
            fresh = Session.in_memory(h.ctx.cwd)
        else:
            fresh = Session.create(h.ctx.cwd, h.session.sessions_dir, parent_session=parent_session)
        await self._replace_session(fresh, "new")
        return True

    async def switch_session(self, path: str) -> bool:
        """Resume another session file (False when a plugin said no)."""
        if await self._vetoed("session_before_switch", events.SwitchEvent("resume", str(path))):
            return False
        from pi_core.session import Session

        h = self.harness
        await self._replace_session(Session.open(path, h.session.sessions_dir, cwd=h.ctx.cwd), "resume")
        return True

    def fork_messages(self) -> list[tuple[str, str]]:
        """(entry id, text) of the user messages on the current branch: the fork points."""
        from pi_core.protocol.entries import MessageEntry
        from pi_core.protocol.messages import UserMessage

        return [(e.id, text_of(e.message.content)) for e in self.harness.session.path()
                if isinstance(e, MessageEntry) and isinstance(e.message, UserMessage)]

    async def fork(self, entry_id: str, position: ForkPosition = "before") -> tuple[str, bool]:
        """A new session holding the branch up to the user message ``entry_id`` (``before``,
        its text returned for the editor) or any entry, itself included (``at``); and
        whether a plugin cancelled."""
        if position not in ("before", "at"):
            raise ValueError(f"position must be 'before' or 'at', not {position!r}")
        session = self.harness.session
        entry = session.entry(entry_id)
        if entry is None:
            what = "a user message" if position == "before" else "an entry"
            raise ValueError(f"{entry_id!r} is not {what} of this session")
        message = getattr(entry, "message", None)
        text = text_of(message.content) if message is not None and hasattr(message, "content") \
            and isinstance(message.content, (str, list)) else ""
        if position == "before" and (message is None or message.role != "user"):
            raise ValueError(f"{entry_id!r} is not a user message of this session")
        if await self._vetoed("session_before_fork", events.ForkEvent(entry_id, position)):
            return text, True
        from pi_core.app.forks import fork

        await self._replace_session(fork(session, entry.parent_id if position == "before" else entry.id), "fork")
        return text, False

    async def clone(self) -> bool:
        """A new session holding the current branch, to go on from its leaf."""
        if await self._vetoed("session_before_fork", events.ForkEvent(self.harness.session.leaf_id, "at")):
            return False
        from pi_core.app.forks import clone

        await self._replace_session(clone(self.harness.session), "fork")
        return True

    async def navigate_tree(self, target_id: str | None, *, summarize: bool = False,
                            instructions: str | None = None) -> bool:
        """Move the leaf to ``target_id``; with ``summarize``, hang a summary of the
        branch left behind where the new branch starts. False when a plugin cancelled."""
        h = self.harness
        session = h.session
        if h.agent.is_running:
            raise AgentBusyError("wait for the agent to finish before moving in the tree")
        old_leaf = session.leaf_id
        target_path = {e.id for e in session.path(target_id)} if target_id else set()
        left = []
        for entry in reversed(session.path(old_leaf) if old_leaf else []):
            if entry.id in target_path:
                break
            left.append(entry)
        left.reverse()
        event = events.BeforeTreeEvent(target_id=target_id, old_leaf_id=old_leaf, entries=left,
                                summarize=summarize, instructions=instructions)
        decision = await h.plugins.call("session_before_tree", event=event, ctx=h.ctx)
        if decision is not None and decision.cancel:
            return False
        summary_entry = None
        if summarize and left and decision is not None:
            summary, details = decision.summary, decision.details
            if summary is None and decision.generate is not None:
                with h.abortable():
                    summary, details = await decision.generate()
            if summary:
                summary_entry = session.branch_with_summary(
                    target_id, summary, details, from_hook=bool(decision.from_hook),
                    usage=take_summary_usage(h))
        if summary_entry is None:
            if target_id is None:
                session.reset_leaf()
            else:
                session.branch(target_id)
        h.agent.messages = list(session.build_context().messages)
        await h.notify(events.SessionTreeEvent(old_leaf_id=old_leaf, new_leaf_id=session.leaf_id,
                                        summary_entry=summary_entry))
        return True

    async def reload(self) -> None:
        """pi's /reload: ``session_shutdown``, the plugins loaded again (when the app
        said how), tools and providers collected again, then ``session_start`` (reason
        reload), on which resource plugins read their files again."""
        h = self.harness
        if h.is_running:
            raise AgentBusyError("wait for the agent to finish before reloading")
        await h.notify(SessionShutdown(reason="reload"))
        if h.plugin_loader is not None:
            fresh = h.plugin_loader()
            fresh.error_listeners = h.plugins.error_listeners  # the UI still hears of errors
            h.plugins = h.agent.plugins = h.ctx.plugins = fresh
        await h.agent.collect_again()
        await h.notify(SessionStart(reason="reload"))  # resource plugins forget their finds

    async def _vetoed(self, hook: str, event: Any) -> bool:
        h = self.harness
        if h.is_running:
            raise AgentBusyError("wait for the agent to finish (or abort it) first")
        return flag(await h.plugins.call(hook, event=event, ctx=h.ctx), "cancel")

    async def _replace_session(self, session, reason: Literal["new", "resume", "fork"]) -> None:
        h = self.harness
        previous = h.session.file
        await h.close(reason)
        h.session = session
        h.agent.messages = []
        h.agent.clear_queues()
        await h.start(reason, previous_session_file=str(previous) if previous else None)
