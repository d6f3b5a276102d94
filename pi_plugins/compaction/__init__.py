"""Compaction, as a plugin: when the context nears the model's window, summarise the
older part of the branch and keep going. The whole feature is here; the harness gives
the primitive (``ctx.compact``: the events, the hooks, the entry, the rebuilt context).

- ``prepare_request``: before every request (so a long tool run compacts mid-run and
  goes on), compact when the context's tokens exceed ``window - reserveTokens``, unless
  ``compaction.enabled`` is off; reserve and keep-recent budgets are held to a quarter of
  the window (:func:`pi_plugins.compaction.token_settings.fit_budget`), so a small local model
  answers first and compacts only when it must;
- ``configuration_problems``: ``compaction.reserveTokens`` / ``keepRecentTokens`` (and
  their ``modelOverrides``) of the wrong type stop the start, as pi 1.6 stops
  (:mod:`pi_plugins.compaction.token_settings`);
- ``prepare_compaction``: plans every compaction (manual, threshold, overflow):
  :mod:`pi_plugins.compaction.plan`;
- ``session_before_compact``: offers the built-in summariser as a deferred decision, so a
  plugin later in load order that supplies its own summary (or cancels) costs nothing;
- ``session_before_tree``: the same for branch summaries when moving in the tree.

A summary request that fails in a transient way is sent again under the ``retry.*``
policy, with pi 1.6's ``summarization_retry_*`` events (:mod:`pi_plugins.compaction.retry`).

Drop it with ``-builtin:compaction`` and a plugin of your own can do all of this.
"""

from __future__ import annotations

import attrs

from pi_core import hookimpl
from pi_core.app.tokens import context_tokens
from pi_core.protocol import events

# The planning and summary modules load when a compaction or a branch summary runs, not
# with every pi start.


def _budget(ctx, key: str, default: int) -> int:
    from pi_plugins.compaction.token_settings import fit_budget, token_setting
    from pi_plugins.retries.policy import number_setting

    section, _, field = key.partition(".")
    if section == "compaction":  # pi 1.6's rules, compaction.modelOverrides included
        tokens = token_setting(ctx.settings, field, ctx.model.key)
    else:
        tokens = number_setting(ctx.settings, key, default)
    return fit_budget(tokens, _context_window(ctx))


def _context_window(ctx) -> int:
    """The model's window; for a virtual model (pi 1.6's docs/virtual-models.md), the
    window of the real model that gave the latest answer, else the one it declares."""
    from pi_plugins.virtual_models import is_virtual

    model = ctx.model
    registry = ctx.model_registry
    if not is_virtual(model) or registry is None:
        return model.context_window
    for message in reversed(ctx.agent.messages):
        if getattr(message, "role", None) == "assistant":
            found = registry.find(message.provider, message.model)
            if found is not None and not is_virtual(found):
                return found.context_window
    return model.context_window


@hookimpl
def settings_problems(settings, ctx):
    from pi_plugins.retries.policy import number_problems

    return number_problems(settings, {"branchSummary.reserveTokens": 16384})


@hookimpl
def configuration_problems(ctx):
    """A compaction token setting of the wrong type stops the start, in pi 1.6's words."""
    from pi_plugins.compaction.token_settings import problems

    return problems(ctx.settings, ctx.model.key if ctx.model is not None else None)


@hookimpl
async def prepare_request(request, ctx):
    if not ctx.settings.get("compaction.enabled", True) or request.stop or ctx.session is None:
        return None
    limit = request.model.context_window - _budget(ctx, "compaction.reserveTokens", 16384)
    # a context that fits by the bound fits by the estimate: the tokenizer is not loaded
    if context_tokens(request.messages, at_most=True) <= limit or context_tokens(request.messages) <= limit:
        return None
    if await ctx.compact(reason="threshold") is None:
        return None
    return attrs.evolve(request, messages=list(ctx.agent.messages))


@hookimpl
def prepare_compaction(event, ctx):
    """The plan (what is summarised, where the kept part starts) and the budgets."""
    from pi_plugins.compaction.plan import prepare_compaction as plan
    from pi_plugins.compaction.plan import to_event

    keep = _budget(ctx, "compaction.keepRecentTokens", 20000)
    preparation = plan(event.entries, keep, context=list(ctx.agent.messages), tools=ctx.agent.tools or ())
    return attrs.evolve(event, reserve_tokens=_budget(ctx, "compaction.reserveTokens", 16384),
                        keep_recent_tokens=keep, preparation=to_event(preparation))


@hookimpl
def session_before_compact(event, ctx):
    """The built-in summariser, on exactly the plan the event carries."""
    plan = event.preparation
    if plan is None:
        return None  # the branch is empty or already ends in a compaction

    async def generate():
        from pi_plugins.compaction.retry import retrying
        from pi_plugins.compaction.summary import summarize_compaction

        summarize = retrying(ctx.summarize, ctx, "compaction", event.reason)
        summary, details = await summarize_compaction(plan, summarize, event.reserve_tokens, event.instructions)
        return events.CompactionResult(summary=summary, first_kept_entry_id=plan.first_kept_entry_id,
                                tokens_before=plan.tokens_before, details=details)

    return events.CompactionDecision(generate=generate, from_hook=False)


@hookimpl
def session_before_tree(event, ctx):
    if not event.summarize or not event.entries:
        return None
    reserve = _budget(ctx, "branchSummary.reserveTokens", 16384)

    async def generate():
        from pi_plugins.compaction.prepare import branch_messages
        from pi_plugins.compaction.retry import retrying
        from pi_plugins.compaction.summary import summarize_branch

        budget = max(_context_window(ctx) - reserve, 0)
        messages, file_ops = branch_messages(event.entries, budget)
        summarize = retrying(ctx.summarize, ctx, "branchSummary")
        return await summarize_branch(messages, file_ops, summarize, reserve, event.instructions)

    return events.TreeDecision(generate=generate, from_hook=False)
