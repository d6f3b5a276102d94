"""Compaction, as a plugin: when the context nears the model's window, summarise the
older part of the branch and keep going.

- ``prepare_request``: before every request (so a long tool run compacts mid-run and
  goes on), compact when the context's tokens exceed ``window - reserveTokens``;
  reserve and keep-recent budgets are held to a quarter of the window
  (:func:`pi_core.app.tokens.fit_budget`), so
  a small local model answers first and compacts only when it must;
- ``session_before_compact``: offers the built-in summariser as a deferred decision, so a
  plugin later in load order that supplies its own summary (or cancels) costs nothing;
- ``session_before_tree``: the same for branch summaries when moving in the tree.

The AgentSession runs manual (``/compact``) and overflow compactions through the same hook.
"""

from __future__ import annotations

import attrs

from pi_core import hookimpl
from pi_core.app.tokens import context_tokens, fit_budget
from pi_core.protocol.events import CompactionDecision, CompactionResult, TreeDecision

# The planning and summary modules load when a compaction or a branch summary runs, not
# with every pi start.


def _harness(ctx):
    return getattr(ctx, "harness", None)


@hookimpl
async def prepare_request(request, ctx):
    harness = _harness(ctx)
    if harness is None or not harness.auto_compaction or request.stop:
        return None
    window = request.model.context_window
    reserve = fit_budget(int(ctx.settings.get("compaction.reserveTokens", 16384)), window)
    if context_tokens(request.messages) <= window - reserve:
        return None
    if await harness.compact(reason="threshold") is None:
        return None
    return attrs.evolve(request, messages=list(harness.agent.messages))


@hookimpl
def session_before_compact(event, ctx):
    """The built-in summariser, on exactly the plan the event carries."""
    plan = event.preparation
    if plan is None:
        return None  # the branch is empty or already ends in a compaction

    async def generate():
        from pi_plugins.compaction.summary import summarize_compaction

        summary, details = await summarize_compaction(plan, ctx.summarize, event.reserve_tokens,
                                                      event.instructions)
        return CompactionResult(summary=summary, first_kept_entry_id=plan.first_kept_entry_id,
                                tokens_before=plan.tokens_before, details=details)

    return CompactionDecision(generate=generate, from_hook=False)


@hookimpl
def session_before_tree(event, ctx):
    if not event.summarize or not event.entries:
        return None
    reserve = fit_budget(int(ctx.settings.get("branchSummary.reserveTokens", 16384)),
                         ctx.agent.model.context_window)

    async def generate():
        from pi_plugins.compaction.prepare import branch_messages
        from pi_plugins.compaction.summary import summarize_branch

        budget = max(ctx.agent.model.context_window - reserve, 0)
        messages, file_ops = branch_messages(event.entries, budget)
        return await summarize_branch(messages, file_ops, ctx.summarize, reserve, event.instructions)

    return TreeDecision(generate=generate, from_hook=False)
