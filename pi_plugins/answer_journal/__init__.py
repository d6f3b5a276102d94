"""A partial answer survives a crash: while an answer streams, what the user has seen of
it (text, thinking, tool calls so far) is kept in a journal beside the session, in the
cache folder (:func:`pi_core.paths.session_side_file`, kind ``answer``), never in
the sessions folder, which holds pi's files alone.

- ``message_update``: the first delta of an answer opens its journal; each delta after
  it is counted, and what streamed is written at most every 100 ms (:mod:`.journal`);
- ``message_end`` (last in the chain): the answer is complete; its journal is removed
  once the session has saved it (if the disk refused the entry, the whole answer is
  written to the journal and kept);
- ``session_shutdown``: an answer still open is written out and its journal kept;
- ``session_start``: a journal left by a killed pi is offered back as the aborted
  assistant message pi writes when an answer is stopped (``stopReason: "aborted"``, the
  content so far), appended to the session through the message events, so a resumed
  session shows what the user saw; then the journal goes. A journal whose answer is in
  the session already is simply removed; a damaged one is ignored with a warning.

pi loses such an answer; it sends an aborted answer to no model, and neither does this
one (the next request skips it as pi's does). ``-builtin:answer_journal`` turns it off.
"""

from __future__ import annotations

import asyncio
import logging
import os
import weakref
from typing import TYPE_CHECKING, Any

from pi_core import AssistantMessage, MessageEntry, hookimpl
from pi_core.paths import session_side_file

if TYPE_CHECKING:  # (imported where there is a journal to write or read: not without a session file)
    from pi_plugins.answer_journal.journal import JournalWriter

log = logging.getLogger("pi.answer_journal")

KIND = "answer"
DELTAS = frozenset(("text_delta", "thinking_delta", "toolcall_delta"))

#: a ctx → (the answer streaming, its writer or None when this session keeps no journal)
_OPEN: weakref.WeakKeyDictionary[Any, tuple[AssistantMessage, JournalWriter | None]] = \
    weakref.WeakKeyDictionary()


def journal_path(session: Any) -> str | None:
    """Where ``session``'s journal lives (None: a session without a file, or no cache folder)."""
    file = getattr(session, "file", None)
    return session_side_file(file, KIND) if file is not None else None


#: The answer streaming now (ctx, message, writer): the per-delta path, without the
#: weak dictionary's cost; cleared when that answer ends.
_current: tuple[Any, AssistantMessage, JournalWriter | None] | None = None


@hookimpl
def message_update(event, ctx):
    global _current
    current = _current
    if current is None or current[1] is not event.message or current[0] is not ctx:
        kind = event.assistant_message_event.type
        if kind not in DELTAS:
            return
        opened = _OPEN.get(ctx)
        if opened is None or opened[0] is not event.message:
            if opened is not None and opened[1] is not None:
                opened[1].close(remove=False)  # (an answer that never ended: the next one replaces it)
            opened = _OPEN[ctx] = (event.message, _writer(ctx, event.message))
        current = _current = (ctx, *opened)
    writer = current[2]
    if writer is not None:
        stream_event = event.assistant_message_event
        if stream_event.type in DELTAS:
            writer.note(stream_event.delta)


def _writer(ctx, message: AssistantMessage) -> JournalWriter | None:
    session = ctx.session
    if session is None or session.read_only:
        return None
    path = journal_path(session)
    if path is None:
        return None
    from pi_plugins.answer_journal.journal import JournalWriter

    return JournalWriter(path, message, session.leaf_id, session.id)


def _forget(ctx) -> tuple[AssistantMessage, JournalWriter | None] | None:
    global _current
    if _current is not None and _current[0] is ctx:
        _current = None
    return _OPEN.pop(ctx, None)


@hookimpl(trylast=True)
def message_end(message, ctx):
    current = _forget(ctx)
    if current is None or current[1] is None:
        return None
    writer = current[1]
    session = ctx.session
    try:  # the harness saves the message right after this chain: settle the journal then
        asyncio.get_running_loop().call_soon(_settle, writer, session)
    except RuntimeError:
        _settle(writer, session)
    return None


def _settle(writer: JournalWriter, session: Any) -> None:
    """Saved: the journal goes. Refused by the disk: the journal, now holding the whole
    answer, may be its only copy once this process ends, so it stays."""
    if session is not None and session.unsaved:
        writer.flush()
        writer.close(remove=False)
    else:
        writer.close(remove=True)


@hookimpl
def session_shutdown(event, ctx):
    current = _forget(ctx)
    if current is not None and current[1] is not None:
        current[1].flush()  # the answer never ended: keep what it had for the next open
        current[1].close(remove=False)


@hookimpl
async def session_start(event, ctx):
    session = ctx.session
    if session is None or session.read_only:
        return
    path = journal_path(session)
    if path is None or not os.path.exists(path):
        return
    message = _left_behind(path, session)
    if message is not None:
        ctx.send_message(message)  # idle: the message events, then into the session
        await ctx.wait_for_idle()
        if not _in_session(session, message.timestamp):
            log.warning("the answer recovered from %s could not be saved; the journal is kept", path)
            return
    from pi_plugins.answer_journal.journal import remove_journal

    remove_journal(path)


def _left_behind(path: str, session: Any) -> AssistantMessage | None:
    """The answer a killed pi left in ``path``, if the session lacks it."""
    from pi_plugins.answer_journal.journal import JournalError, read_journal

    try:
        header, message, problem = read_journal(path)
    except (OSError, JournalError) as exc:
        log.warning("the answer journal %s is ignored: %s", path, exc)
        return None
    if header.get("sessionId") != session.id:
        log.warning("the answer journal %s belongs to another session; it is ignored", path)
        return None
    if problem is not None:
        log.warning("the answer journal %s: %s", path, problem)
    if not message.content or _in_session(session, message.timestamp, header.get("parentId")):
        return None
    return message


def _in_session(session: Any, timestamp: int, stop_at: str | None = None) -> bool:
    """Whether the branch holds the assistant message of ``timestamp`` (after ``stop_at``)."""
    unsaved = {id(entry) for entry in session.unsaved}
    for entry in reversed(session.path()):
        if entry.id == stop_at:
            return False
        if (isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage)
                and entry.message.timestamp == timestamp):
            return id(entry) not in unsaved
    return False
