"""Retries and overflow recovery, as a plugin: what happens when a request fails.

As pi does it: a retryable failure (429, 5xx, overloaded, connection lost) gets
``1 + retry.maxRetries`` attempts with exponential backoff from ``retry.baseDelayMs``,
honouring retry-after up to ``retry.provider.maxRetryDelayMs``, between
``auto_retry_start`` and ``auto_retry_end``; a context overflow compacts (``ctx.compact``)
and retries once. The failed answer stays in the session file and leaves the context
(a ``context_edit`` that omits it, as pi 1.6 writes).
Providers retry inside a request only when ``retry.provider.maxRetries`` asks them to (pi
1.6's default is 0); both levels follow the one retry policy
(:mod:`pi_plugins.retries.policy`).

- ``after_agent_run``: decides, waits, and asks the harness to run the request again;
- ``agent_end``: pi 1.6's ``willRetry``, set before anyone else sees the event;
- ``turn_end`` / ``tool_execution_start``: a retried request that was answered ends the
  retries (``auto_retry_end``) before the turn's end, or before its first tool runs when
  the answer calls tools, where pi 1.6 sends it;
- ``settings_problems``: a ``retry.*`` number of the wrong type (``"3"`` counts as 3, as
  in pi 1.6; ``"x"`` is warned about and the default used);
- ``configuration_problems``: ``httpIdleTimeoutMs`` / ``websocketConnectTimeoutMs`` that
  are neither milliseconds nor ``"disabled"`` stop the start, as in pi 1.6.

Drop it with ``-builtin:retries``; a plugin of your own can decide on ``after_agent_run``.
"""

from __future__ import annotations

import weakref

from pi_core import hookimpl

#: Each session's retries under way (its ctx → :class:`pi_plugins.retries.policy.Attempts`).
_attempts: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _of(ctx):
    from pi_plugins.retries.policy import Attempts

    found = _attempts.get(ctx)
    if found is None:
        found = _attempts[ctx] = Attempts()
    return found


@hookimpl
def agent_end(event, ctx):
    from pi_plugins.retries.policy import will_retry

    event.will_retry = will_retry(ctx, _of(ctx), event.messages)


@hookimpl
async def turn_end(event, ctx):
    """A retried request that was answered ends the retries here, as in pi 1.6."""
    from pi_plugins.retries.policy import answered

    await answered(ctx, _of(ctx), event.message)


@hookimpl
async def tool_execution_start(event, ctx):
    """A retried request answered with tool calls ends the retries before they run (pi 1.6)."""
    from pi_plugins.retries.policy import answered

    messages = ctx.agent.messages
    await answered(ctx, _of(ctx), messages[-1] if messages else None)


@hookimpl
def settings_problems(settings, ctx):
    """``retry.*`` numbers that are not numbers: said, and the defaults used."""
    from pi_plugins.retries.policy import NUMBERS, number_problems

    return number_problems(settings, NUMBERS)


@hookimpl
def configuration_problems(ctx):
    """pi 1.6 refuses to start with a request timeout it cannot read: so do we."""
    import json

    from pi_core.loop import idle_timeout_ms

    return [f"Invalid {key} setting: {value if isinstance(value, str) else json.dumps(value)}" for key in ("httpIdleTimeoutMs", "websocketConnectTimeoutMs")
            if (value := ctx.settings.get(key)) is not None and idle_timeout_ms(value) is None
            and not (isinstance(value, str) and not value.strip())]


@hookimpl
async def after_agent_run(event, ctx):
    from pi_plugins.retries.policy import recover

    if not await recover(ctx, _of(ctx), event):
        return None
    from pi_core.protocol.events import RunDecision

    return RunDecision(run_again=True)
