"""``/trust`` (a chat command, as in pi: not a plugin command, so RPC clients do not list
it): save a project trust decision from the chat, for the next runs of pi-harness
and of pi 1.6 (both read ``<agent dir>/trust.json``; :mod:`pi_plugins.trust.policy`).

Like pi, the decision takes effect at the next start: what the project may load is
decided before anything of it loads.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pi_core.app.settings import project_allowed
from pi_plugins.trust.asking import trust_options
from pi_plugins.trust.policy import TrustStore, TrustStoreError, canonical


def _saved(found: tuple[str, bool] | None, here: str) -> str:
    if found is None:
        return "none"
    label = "trusted" if found[1] else "untrusted"
    return f"{label} ({found[0]})" if found[0] == here else f"{label} (inherited from {found[0]})"


def _is_saved(option: Any, saved: tuple[str, bool] | None) -> bool:
    """The answer whose saved entry is the one in force (pi 1.6's ``isSavedOption``)."""
    if saved is None or not option.updates:
        return False
    folder, decision = option.updates[0]
    return decision == saved[1] == option.trusted and canonical(folder) == saved[0]


#: ``ask(title, labels, selected)``: the chosen label or None; the chat passes one that
#: starts on ``selected`` (pi 1.6's selector starts on the saved answer).
Ask = Callable[[str, list[str], int], Awaitable[str | None]]


async def trust_command(args: str, ctx: Any, ask: Ask | None = None) -> None:
    here = canonical(ctx.cwd)
    store = TrustStore(ctx.agent_dir)
    try:
        saved = store.closest(here)
    except TrustStoreError as exc:
        ctx.ui.notify(f"Project trust: {exc}", "error")
        return
    current = "trusted" if project_allowed(ctx.settings, ctx.cwd, ctx.agent_dir) else "untrusted"
    options = trust_options(here, session_only=False)
    labels = [("✓ " if _is_saved(o, saved) else "  ") + o.label for o in options]  # pi's ✓ on the saved one
    selected = next((i for i, o in enumerate(options) if _is_saved(o, saved)), 0)
    title = f"Project trust\n{here}\n\nSaved decision: {_saved(saved, here)}\nCurrent session: {current}"
    chosen = await (ask(title, labels, selected) if ask else ctx.ui.select(title, labels))
    option = options[labels.index(chosen)] if chosen in labels else None
    if option is None:
        return
    try:
        store.set_many(list(option.updates))
    except TrustStoreError as exc:
        ctx.ui.notify(f"Project trust: {exc}", "error")
        return
    ctx.ui.notify(f"Saved trust decision: {'trusted' if option.trusted else 'untrusted'}. "
                  "Restart pi for this to take effect.", "info")

