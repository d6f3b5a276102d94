"""Budgets, as a plugin: before every model request, the AgentSession's budget
(:mod:`pi_core.app.budget`) may end the run without sending it (``request.stop``).

Loaded before compaction, so a run past its budget does not compact either."""

from __future__ import annotations

from pi_core import hookimpl


@hookimpl
async def prepare_request(request, ctx):
    harness = getattr(ctx, "harness", None)
    check = getattr(harness, "check_budget", None)
    return None if check is None else await check(request)
