"""The one retry policy: when a failed request is sent again, after how long, and what
the user is told (pi's, with the ``retry.*`` settings), at both of pi's levels: the
session's (:mod:`pi_plugins.retries`) and inside a provider, as pi's provider SDKs do
(the provider kit uses the functions at the end).

One heuristic of ours, for a discovered local server only (``Model.discovered``): an
answer with the same error body as the attempt before ends the retries, as a small
server that cannot take the request says so again and again.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pi_core.protocol import events
from pi_core.protocol.messages import AssistantMessage
from pi_core.protocol.records import record


@record
class Attempts:
    """A prompt's retries so far: ``active`` while a retried request is under way."""

    attempt: int = 0
    overflow_tried: bool = False
    previous: str | None = None
    first: AssistantMessage | None = None
    active: bool = False


@record
class Policy:
    """The ``retry.*`` settings."""

    enabled: bool
    max_retries: int
    base_delay_ms: int
    max_delay_ms: int
    max_agent_delay_ms: int = 60000  # pi 1.6's cap on the session's own backoff

    @classmethod
    def of(cls, settings: Any) -> Policy:
        return cls(bool(settings.get("retry.enabled", True)),
                   *(number_setting(settings, key, default) for key, default in NUMBERS.items()))

    def backoff_ms(self, attempt: int) -> int:
        """The session's wait before ``attempt`` (1 for the first retry): doubling from
        ``retry.baseDelayMs``, never more than ``retry.maxAgentDelayMs``."""
        return min(self.base_delay_ms * 2 ** max(attempt - 1, 0), self.max_agent_delay_ms)


#: The ``retry.*`` numbers and pi 1.6's defaults, in :class:`Policy`'s order.
NUMBERS = {"retry.maxRetries": 3, "retry.baseDelayMs": 2000, "retry.provider.maxRetryDelayMs": 60000,
           "retry.maxAgentDelayMs": 60000}


def number_setting(settings: Any, key: str, default: int) -> int:
    """A numeric setting pi 1.6 uses as it is, so JavaScript coerces it: a number, or a
    numeric string (``"3"``), counts as that number. Anything else (``"x"``, ``true``, a
    list) is the default here, and :func:`number_problems` says so at start-up; pi 1.6
    would compute with ``NaN`` (with ``retry.maxRetries: "x"`` it retries forever)."""
    value = _number(settings.get(key))
    return default if value is None else value


def number_problems(settings: Any, numbers: dict[str, int]) -> list[str]:
    """A warning for each of these settings that is set but not a number."""
    return [f"{key}: expected a number, not {json.dumps(settings.get(key))}; the default ({default}) is used"
            for key, default in numbers.items()
            if settings.get(key) is not None and _number(settings.get(key)) is None]


def _number(value: Any) -> int | None:
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value or abs(value) == float("inf"):
        return None
    return int(value)


def will_retry(ctx: Any, state: Attempts, messages: list) -> bool:
    """Whether the run will send the failed request again (pi 1.6's ``willRetry``): the
    checks :func:`recover` makes before it does (a server's wait longer than allowed,
    found only then, aside)."""
    failed = last_failure(ctx.agent.messages)
    if failed is None or failed.failure is None:
        return False
    attempt, overflow_tried = (state.attempt, state.overflow_tried) if state.active else (0, False)
    if failed.failure.kind == "overflow":
        return bool(ctx.settings.get("compaction.enabled", True)) and not overflow_tried
    policy = Policy.of(ctx.settings)
    return failed.failure.kind == "retryable" and policy.enabled and attempt < policy.max_retries


async def recover(ctx: Any, state: Attempts, event: Any) -> bool:
    """After a run: True to send the request again (after the wait, or after compacting
    an overflow); otherwise the retries end, with ``auto_retry_end`` if there were any."""
    if event.continued == 0:  # a new prompt's first failure
        state.attempt, state.overflow_tried, state.previous, state.first = 0, False, None, None
    again = await _step(ctx, state, last_failure(ctx.agent.messages), event.signal)
    state.active = again
    if not again and state.attempt:
        failed = last_failure(ctx.agent.messages)
        if failed is not None and state.first is not None and went_away(failed, state.first):
            failed.error_message = f"{failed.error_message}; the first attempt ended: {state.first.error_message}"
        await ctx.emit(events.AutoRetryEnd(success=failed is None, attempt=state.attempt,
                                    final_error=failed.error_message if failed else None))
        state.attempt = 0
    return again


async def answered(ctx: Any, state: Attempts, message: Any) -> None:
    """A retried request was answered: ``auto_retry_end`` (success) at once, before the
    turn ends, where pi 1.6 sends it (not after the run); :func:`recover` then has no
    retries left to end."""
    if (state.active and state.attempt and isinstance(message, AssistantMessage)
            and message.stop_reason not in ("error", "aborted")):
        await ctx.emit(events.AutoRetryEnd(success=True, attempt=state.attempt, final_error=None))
        state.attempt = 0


async def _step(ctx: Any, state: Attempts, failed: AssistantMessage | None, signal: Any) -> bool:
    if failed is None or failed.failure is None:
        return False
    failure = failed.failure
    kind = failure.kind
    if kind == "retryable" and ctx.model.discovered and same_answer(failed, state.previous):
        failed.error_message = f"{failed.error_message} (the same answer twice: not retried again)"
        return False
    state.previous = failed.error_message
    state.first = state.first or failed
    if kind == "overflow" and not state.overflow_tried and ctx.settings.get("compaction.enabled", True):
        state.overflow_tried = True
        _leave_out(ctx, failed)
        return await ctx.compact(reason="overflow", will_retry=True) is not None
    policy = Policy.of(ctx.settings)
    if kind != "retryable" or not policy.enabled or state.attempt >= policy.max_retries:
        return False
    state.attempt += 1
    asked = failure.retry_after_ms
    delay = asked or policy.backoff_ms(state.attempt)
    if asked and waits_too_long(asked, policy.max_delay_ms):  # the server's wait only
        status = f"{failure.status}: " if failure.status else ""
        failed.error_message = (
            f"{failed.error_message} ({status}the server asked to wait {delay / 1000:g} s before "
            f"trying again, more than retry.provider.maxRetryDelayMs ({policy.max_delay_ms / 1000:g} s) "
            "allows, so it was not retried)")
        return False
    await ctx.emit(events.AutoRetryStart(attempt=state.attempt, max_attempts=policy.max_retries,
                                  delay_ms=delay, error_message=failed.error_message or ""))
    _leave_out(ctx, failed)
    if not await _wait(delay / 1000, signal):
        await ctx.emit(events.AutoRetryEnd(success=False, attempt=state.attempt, final_error="retry cancelled"))
        state.attempt = 0
        return False
    return True


def _leave_out(ctx: Any, failed: AssistantMessage) -> None:
    """The failed answer leaves the context but stays in the file: pi 1.6 writes a
    ``context_edit`` that omits it (``replacement: null``), so a resumed session (ours or
    1.6's) sends the retried request's context, not the failure."""
    session = ctx.session
    entry = next((e for e in reversed(session.path()) if getattr(e, "message", None) is failed),
                 None) if session is not None else None
    if entry is None:
        ctx.agent.messages.pop()
    else:
        ctx.append_context_edit(entry.id, None)


async def _wait(seconds: float, signal: Any) -> bool:
    """Sleep unless the user aborts; True when the wait ran out."""
    if signal is None:
        await asyncio.sleep(seconds)
        return True
    try:
        await asyncio.wait_for(signal.wait(), seconds)
        return False
    except TimeoutError:
        return True


def last_failure(messages: list) -> AssistantMessage | None:
    """The failed assistant message the context ends in, if it does."""
    last = messages[-1] if messages else None
    if isinstance(last, AssistantMessage) and last.stop_reason == "error" and last.failure:
        return last
    return None


#: Statuses that mean "later", whatever the body says: the same body twice proves nothing.
_TRANSIENT_STATUS = frozenset({408, 425, 429, 503, 529})


def same_answer(failed: AssistantMessage, previous: str | None) -> bool:
    """An HTTP error answered with the same body as the attempt before (and no sign
    that waiting would help): the server would say it a third time."""
    failure = failed.failure
    return (previous is not None and failure is not None and failed.error_message == previous
            and failure.status is not None
            and failure.status >= 400 and failure.status not in _TRANSIENT_STATUS
            and failure.retry_after_ms is None)


def went_away(last: AssistantMessage, first: AssistantMessage) -> bool:
    """The retries ended on a server that no longer answers, after a first attempt that
    failed another way (a server that crashed on the request): the first failure is the
    one that says why, so it must not be lost."""
    return (first is not last and first.error_message != last.error_message
            and last.failure is not None and last.failure.status is None
            and first.failure is not None and first.failure.status is None)


# ---------------------------------------------------------------- inside a provider
# pi 1.6 can also send a transient failure again inside the provider, before the session
# sees it, as its OpenAI and Anthropic SDKs would; but only when ``retry.provider.maxRetries``
# asks for it: unset, it is 0 for every provider (Codex's and Google's too), so the
# session's retries above, with their ``auto_retry_*`` events, handle every transient
# failure. The provider kit (:mod:`pi_plugins.providers.http`) uses these.

#: pi 1.6's default for ``retry.provider.maxRetries``.
PROVIDER_MAX_RETRIES = 0


def provider_retries(configured: int | None) -> int:
    """How often a provider sends a failed request again itself: ``retry.provider.maxRetries``
    when set (the loop reads it into ``StreamOptions.max_retries``), else pi 1.6's 0."""
    return PROVIDER_MAX_RETRIES if configured is None else max(configured, 0)


#: The statuses the provider SDKs send again.
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504}) | frozenset(range(505, 600))

#: pi's default for ``retry.provider.maxRetryDelayMs``.
MAX_RETRY_DELAY_MS = 60_000


def waits_too_long(asked_ms: int | None, cap_ms: int | None) -> bool:
    """The server asked to wait longer than ``retry.provider.maxRetryDelayMs`` (``cap_ms``;
    None: pi's default, ``0``: no cap): the request fails now, at every level, instead of
    being sent again."""
    cap = MAX_RETRY_DELAY_MS if cap_ms is None else cap_ms
    return asked_ms is not None and cap > 0 and asked_ms > cap


def too_long_note(asked_ms: int, cap_ms: int | None) -> str:
    cap = MAX_RETRY_DELAY_MS if cap_ms is None else cap_ms
    return (f"; the server asked to wait {asked_ms / 1000:g} s before trying again, more than "
            f"retry.provider.maxRetryDelayMs ({cap / 1000:g} s) allows, so "
            "it was not retried (try later, or raise the setting; 0 lifts the cap)")


def sdk_retry_delay(attempt: int, asked_ms: int | None) -> float:
    """Seconds before retry ``attempt + 1``: the server's wait when under a minute, else
    0.5 s doubling up to 8 s, less up to a quarter at random (the OpenAI and Anthropic
    SDKs' backoff)."""
    import random

    if asked_ms is not None and 0 < asked_ms <= 60_000:
        return asked_ms / 1000
    return min(0.5 * 2 ** attempt, 8.0) * (1 - random.random() * 0.25)
