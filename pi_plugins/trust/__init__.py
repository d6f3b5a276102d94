"""Project trust, as pi 1.6 has it (:mod:`.policy`): a folder's own code and
configuration load only once the user has trusted the folder.

``decide_project_trust`` is asked before anything of the project loads (first of this
plugin alone and quietly, :func:`pi_core.app.settings.quiet_trust`, then, when that is not
settled, of every plugin loaded without the project's, :func:`decide_trust`, which the
command line calls) and no answer is "untrusted"; this plugin answers with
pi's rules and carries the line a mode prints when it skipped the project. ``/trust``
(a chat command, :mod:`.command`) saves a decision for the next runs. The policy module
loads only when a decision is made.
"""

from __future__ import annotations

from typing import Any

from pi_core import hookimpl


@hookimpl
async def decide_project_trust(event: Any, ctx: Any) -> Any:
    from pi_plugins.trust import policy

    if event.quiet:  # nothing may be asked, no other plugin is loaded yet
        decision = policy.quiet_decision(event.cwd, event.agent_dir, event.global_settings,
                                         override=event.approve)
    else:
        decision = await policy.decide(
            event.cwd, event.agent_dir, override=event.approve,
            plugins=getattr(ctx, "plugins", None), ctx=ctx,
            ui=getattr(ctx, "ui", None) if event.can_ask else None,
            global_settings=event.global_settings)
    decision.notice = policy.notice(decision, event.cwd, chat=event.chat)
    return decision


async def decide_trust(plugins: Any, question: Any, ctx: Any) -> Any:
    """The decision of the plugins loaded so far (``decide_project_trust``), asked once
    the quiet answer is not settled (``pi``'s start), failing closed: no answer, or one
    from a plugin that raised, is "untrusted"."""
    from pi_core.app.settings import Untrusted, trust_answer

    if plugins is None or not plugins.has("decide_project_trust"):
        return Untrusted()
    return trust_answer(await plugins.call("decide_project_trust", event=question, ctx=ctx))


async def trust_command(args: str, ctx: Any, ask: Any = None) -> None:
    """``/trust`` (:func:`pi_plugins.trust.command.trust_command`)."""
    from pi_plugins.trust.command import trust_command as run

    await run(args, ctx, ask)
