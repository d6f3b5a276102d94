"""A plugin that overrules pi 1.6's prompt-cache warming (``cache_warming_decision``): it
never keeps a cache warm for one provider, and always does while a run streams. Load it
as any plugin file (``-e`` with its path, or settings.json's ``extensions``).
"""

from pi_core import hookimpl

NEVER_WARMED = "my-provider"


@hookimpl
def cache_warming_decision(event, ctx):
    # event.warm_cost: this refresh's price; event.miss_cost: what losing the entry adds to
    # the next request; event.continuation_probability: pi's guess of a request in time;
    # event.action: pi's own decision, "warm" or "stop".
    if ctx.model is not None and ctx.model.provider == NEVER_WARMED:
        return {"action": "stop"}  # warming ends until the next real request
    if not ctx.is_idle():
        return {"action": "warm"}
    return None  # pi's decision stands
