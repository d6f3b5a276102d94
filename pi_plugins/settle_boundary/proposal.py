"""What ``agent_before_settle`` handlers see and propose, checked and appended
(:mod:`pi_plugins.settle_boundary`); imported when a plugin implements that hook."""

from __future__ import annotations

from typing import Any

from pi_core.app.context_edits import append_context_edit
from pi_core.protocol.records import field, record
from pi_core.session import Session

#: The draft types pi 1.6 allows, and the fields each must have.
REQUIRED = {"custom": ("customType",), "custom_message": ("customType", "content"),
            "context_edit": ("targetId",), "compaction": ("summary", "firstKeptEntryId")}
NO_CONTEXT = "agent_before_settle requested continuation without runnable model context"  # pi 1.6's words


@record
class SettleContext:
    """pi 1.6's ``event.context``: the branch's entries and messages with the drafts
    applied, the messages as the model would get them, what is queued, and whether one
    more request could be sent from it."""

    context_entries: list = field(factory=list)
    context_messages: list = field(factory=list)
    llm_messages: list = field(factory=list)
    pending_messages: list = field(factory=list)
    can_continue: bool = False


@record
class BeforeSettle:
    """What ``agent_before_settle`` handlers see and return (``attrs.evolve``)."""

    type: str = field(default="agent_before_settle", init=False)
    messages: list = field(factory=list)  # what the prompt produced
    entries: list[dict] = field(factory=list)  # the drafts proposed so far
    continue_run: bool = False  # pi's ``continue``: one more request
    outcome: str = "completed"  # how the last answer ended: "completed" or "error"
    preview: Any = field(default=None, repr=False, eq=False)  # drafts -> SettleContext

    @property
    def context(self) -> SettleContext | None:
        return self.preview(self.entries) if self.preview is not None else None


def problems(session: Session, drafts: list) -> list[str]:
    """What is wrong with the drafts, one line each (none: they can be appended)."""
    found = []
    branch = {e.id for e in session.path()}
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


def append(session: Session, draft: dict) -> Any:
    kind = draft["type"]
    if kind == "custom":
        return session.append_custom(draft["customType"], draft.get("data"))
    if kind == "custom_message":
        return session.append_custom_message(draft["customType"], draft["content"],
                                             draft.get("display", True), draft.get("details"))
    if kind == "context_edit":
        return append_context_edit(session, draft["targetId"], draft.get("replacement"))
    return session.append_compaction(draft["summary"], draft["firstKeptEntryId"], draft.get("tokensBefore", 0),
                                     draft.get("details"), from_hook=True)


def outcome_of(messages: list) -> str:
    last = next((m for m in reversed(messages) if getattr(m, "role", None) == "assistant"), None)
    return "error" if last is not None and last.stop_reason == "error" else "completed"


def previewer(ctx: Any) -> Any:
    """``drafts -> SettleContext``: the branch copied into a session never written, the
    valid drafts appended to the copy, its context built."""

    def preview(drafts: list) -> SettleContext:
        session: Session = ctx.session
        copy = Session.in_memory(session.cwd)
        copy.take_entries(session.path(), write=False)
        if not problems(copy, drafts):
            for draft in drafts:
                append(copy, draft)
        messages = list(copy.build_context().messages)
        llm = [m for m in _llm(ctx, messages) if getattr(m, "role", None) != "system"]
        pending = [*ctx.agent.steering.messages, *ctx.agent.follow_up_queue.messages]
        last = llm[-1].role if llm else None
        return SettleContext(context_entries=copy.path(), context_messages=messages, llm_messages=llm,
                             pending_messages=pending,
                             can_continue=bool(llm) and last != "assistant" or last == "assistant" and bool(pending))

    return preview


def _llm(ctx: Any, messages: list) -> list:
    """The messages as the model gets them: the built-in conversion, as pi 1.6 previews
    with its own ``convertToLlm`` (a sync property cannot await the hook)."""
    from pi_plugins.app_messages import convert_to_llm

    return convert_to_llm(messages, ctx)
