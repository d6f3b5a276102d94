"""pi 1.6's ``agent_before_settle``, the last point where a prompt's work can go on.

The core asks ``run_settling`` once nothing is retried or queued and the run was not
aborted; this plugin answers it by running the ``agent_before_settle`` chain. Each handler
sees the entries proposed before it (pi's JSON drafts) and ``event.context``, the context
as those drafts would leave it (rebuilt on each look, so a later handler sees an earlier
one's drafts). The whole proposal is checked before anything is written (a bad draft
leaves the session as it was), then appended in order. ``continue_run`` (pi's
``continue``) sends one more request, as does a message queued meanwhile, but only when
the context can take one: pi 1.6 reports a request asked for after the model's own last
answer, with nothing after it, and settles.
"""

from __future__ import annotations

from typing import Any

from pi_core import hookimpl
from pi_core.app import session_events
from pi_core.protocol.events import AfterRunEvent


@hookimpl
async def run_settling(event: AfterRunEvent, ctx: Any) -> bool | None:
    """Ask the plugins; append what they proposed; whether to send one more request."""
    plugins, session = ctx.plugins, ctx.session
    if not plugins.has("agent_before_settle") or session is None:
        return None
    from pi_plugins.settle_boundary.proposal import (
        NO_CONTEXT,
        BeforeSettle,
        append,
        outcome_of,
        previewer,
        problems,
    )

    preview = previewer(ctx)
    first = BeforeSettle(messages=list(event.messages), outcome=outcome_of(event.messages), preview=preview)
    proposal = await plugins.call("agent_before_settle", event=first, ctx=ctx)
    wrong = problems(session, proposal.entries)
    if wrong:
        plugins.report("agent_before_settle", "agent_before_settle",
                       ValueError("the proposal was dropped: " + "; ".join(wrong)))
        return False
    for draft in proposal.entries:
        await ctx.emit(session_events.EntryAppended(entry=append(session, draft)))
    if proposal.entries:
        ctx.agent.messages = list(session.build_context().messages)
    if event.signal is not None and event.signal.aborted:
        return False
    wanted = proposal.continue_run or ctx.has_pending_messages()
    if wanted and not preview([]).can_continue:
        if proposal.continue_run:
            plugins.report("agent_before_settle", "agent_before_settle", ValueError(NO_CONTEXT))
        return False
    return wanted
