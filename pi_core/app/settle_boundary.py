"""pi 1.6's ``agent_before_settle``, the last point where a prompt's work can go on: the
plugins' chain proposes entries (pi's JSON drafts) and one more request; the whole proposal
is checked before anything is written (a bad draft leaves the session as it was), then
the entries are appended and, unless the run was aborted, one request is sent."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pi_core.app.context_edits import append_context_edit
from pi_core.app.session_events import EntryAppended
from pi_core.protocol.records import field, record

if TYPE_CHECKING:
    from pi_core.app.harness import Harness
    from pi_core.protocol.signal import AbortSignal

#: The draft types pi 1.6 allows, and the fields each must have.
REQUIRED = {"custom": ("customType",), "custom_message": ("customType", "content"),
            "context_edit": ("targetId",), "compaction": ("summary", "firstKeptEntryId")}


@record
class BeforeSettle:
    """What ``agent_before_settle`` handlers see and return (``attrs.evolve``)."""

    type: str = field(default="agent_before_settle", init=False)
    messages: list = field(factory=list)  # what the prompt produced
    entries: list[dict] = field(factory=list)  # the drafts proposed so far
    continue_run: bool = False  # pi's ``continue``: one more request


def problems(harness: Harness, drafts: list) -> list[str]:
    """What is wrong with the drafts, one line each (none: they can be appended)."""
    found = []
    branch = {e.id for e in harness.session.path()}
    for index, draft in enumerate(drafts):
        kind = draft.get("type") if isinstance(draft, dict) else None
        if kind not in REQUIRED:
            found.append(f"entry {index}: the type is not one of {', '.join(REQUIRED)}: {kind!r}")
            continue
        missing = [name for name in REQUIRED[kind] if draft.get(name) is None]
        if missing:
            found.append(f"entry {index} ({kind}) lacks {', '.join(missing)}")
        elif kind == "context_edit" and draft["targetId"] not in branch:
            found.append(f"entry {index} (context_edit): {draft['targetId']!r} is not on the branch")
        elif kind == "compaction" and not isinstance(draft.get("tokensBefore", 0), int):
            found.append(f"entry {index} (compaction): tokensBefore is not a whole number")
    return found


def append(harness: Harness, draft: dict) -> Any:
    session, kind = harness.session, draft["type"]
    if kind == "custom":
        return session.append_custom(draft["customType"], draft.get("data"))
    if kind == "custom_message":
        return session.append_custom_message(draft["customType"], draft["content"],
                                             draft.get("display", True), draft.get("details"))
    if kind == "context_edit":
        return append_context_edit(session, draft["targetId"], draft.get("replacement"))
    return session.append_compaction(draft["summary"], draft["firstKeptEntryId"], draft.get("tokensBefore", 0),
                                     draft.get("details"), from_hook=True)


async def before_settle(harness: Harness, produced: list, signal: AbortSignal) -> bool:
    """Ask the plugins; append what they proposed; whether to send one more request."""
    if not harness.plugins.has("agent_before_settle"):
        return False
    event = await harness.plugins.call("agent_before_settle", event=BeforeSettle(messages=list(produced)),
                                       ctx=harness.ctx)
    wrong = problems(harness, event.entries)
    if wrong:
        harness.plugins.report("agent_before_settle", "agent_before_settle",
                               ValueError("the proposal was dropped: " + "; ".join(wrong)))
        return False
    for draft in event.entries:
        entry = append(harness, draft)
        await harness.emit(EntryAppended(entry=entry))
    if event.entries:
        harness.agent.messages = list(harness.session.build_context().messages)
    if not event.continue_run or signal.aborted:
        return False
    last = harness.agent.messages[-1] if harness.agent.messages else None
    if last is None or last.role == "assistant":  # the loop sends nothing after its own answer
        harness.plugins.report("agent_before_settle", "agent_before_settle", ValueError(
            "continue_run needs a message after the last answer (a custom_message entry)"))
        return False
    return True
