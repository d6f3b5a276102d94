"""pi 1.6's context edits, written: what the model sees of an earlier message changes,
its entry stays (:mod:`pi_core.session.context` applies them)."""

from __future__ import annotations

from pi_core.protocol.entries import ContextEditEntry, CustomMessageEntry, MessageEntry
from pi_core.session import Session, SessionError

EDITABLE_ROLES = ("user", "assistant", "toolResult")


def append_context_edit(session: Session, target_id: str, replacement: dict | None) -> ContextEditEntry:
    """Leave ``target_id`` out of the context (``replacement`` None) or replace its
    content (``{"content": ...}``), checked as pi 1.6 does; a string for an assistant or
    tool result becomes one text block, as pi writes it."""
    content = replacement.get("content") if isinstance(replacement, dict) else None
    if replacement is not None and not isinstance(content, (str, list)):
        raise SessionError('a context edit\'s replacement is None or {"content": str or list}')
    target = session.entry(target_id)
    if target is None or target_id not in {e.id for e in session.path()}:
        raise SessionError(f"entry {target_id!r} is not on the session's branch")
    role = target.message.role if isinstance(target, MessageEntry) else None
    if role not in EDITABLE_ROLES and not isinstance(target, CustomMessageEntry):
        raise SessionError(f"entry {target_id!r} has no content the model sees to edit")
    if isinstance(content, str) and role in ("assistant", "toolResult"):
        replacement = {"content": [{"type": "text", "text": content}]}
    return session.append(ContextEditEntry(target_id=target_id, replacement=replacement))
