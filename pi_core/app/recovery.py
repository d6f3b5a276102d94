"""Retries, backoff and overflow recovery: what the AgentSession does when a request fails.

As pi does it: a retryable failure (429, 5xx, overloaded, connection lost) gets
``1 + retry.maxRetries`` attempts with exponential backoff from ``retry.baseDelayMs``,
honouring retry-after, between ``auto_retry_start`` and ``auto_retry_end``; a context
overflow compacts and retries once. The failed assistant message stays in the session
file and leaves the context.

One heuristic of ours, for a discovered local server only (``Model.discovered``): an
answer with the same error body as the attempt before ends the retries, as a small
server that cannot take the request says so again and again.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from pi_core.protocol.events import AutoRetryEnd, AutoRetryStart
from pi_core.protocol.messages import AgentMessage, AssistantMessage

if TYPE_CHECKING:
    from pi_core.app.agent_session import AgentSession


class RetryPolicy:
    """The ``retry.*`` settings and the wait between attempts, which ``cancel`` cuts short."""

    def __init__(self, settings) -> None:
        self.enabled = bool(settings.get("retry.enabled", True))
        self.max_retries = int(settings.get("retry.maxRetries", 3))
        self.base_delay_ms = int(settings.get("retry.baseDelayMs", 2000))
        self.max_delay_ms = int(settings.get("retry.provider.maxRetryDelayMs", 60000))
        self._cancel: asyncio.Event | None = None
        #: The run under way: retries made, and whether an overflow was compacted.
        self.attempt, self.overflow_tried = 0, False

    def will_retry(self, failed: AssistantMessage | None, auto_compaction: bool) -> bool:
        """Whether the run will send ``failed``'s request again (pi 1.6's ``willRetry``):
        the same checks as :func:`with_recovery` makes before it does (a server's wait
        longer than allowed, found only then, aside)."""
        if failed is None or failed.failure is None:
            return False
        if failed.failure.kind == "overflow":
            return auto_compaction and not self.overflow_tried
        return failed.failure.kind == "retryable" and self.enabled and self.attempt < self.max_retries

    def cancel(self) -> None:
        if self._cancel is not None:
            self._cancel.set()

    async def wait(self, seconds: float) -> bool:
        """Sleep unless cancelled; True when the wait ran out."""
        self._cancel = asyncio.Event()
        try:
            await asyncio.wait_for(self._cancel.wait(), seconds)
            return False
        except TimeoutError:
            return True
        finally:
            self._cancel = None


async def with_recovery(harness: AgentSession, run) -> list[AgentMessage]:
    """Await a run; then retry retryable failures and compact-then-retry once on a
    context overflow. Returns every message the attempts produced."""
    policy, agent = harness.retry, harness.agent
    policy.attempt, policy.overflow_tried = 0, False
    produced = list(await run)
    attempt, overflow_tried, previous, first = 0, False, None, None
    while True:
        failed = last_failure(agent.messages)
        if failed is None:
            break
        kind = failed.failure.kind
        if kind == "retryable" and agent.model.discovered and same_answer(failed, previous):
            failed.error_message = f"{failed.error_message} (the same answer twice: not retried again)"
            break
        previous = failed.error_message
        first = first or failed
        if kind == "overflow" and not overflow_tried and harness.auto_compaction:
            overflow_tried = policy.overflow_tried = True
            agent.messages.pop()  # the failure stays in the file, not the context
            if await harness.compact(reason="overflow", will_retry=True) is None:
                break
            if last_failure(agent.messages) is not None:  # the rebuilt context ends in it
                agent.messages.pop()
            produced += await agent.continue_()
            continue
        if kind != "retryable" or not policy.enabled or attempt >= policy.max_retries:
            break
        attempt = policy.attempt = attempt + 1
        asked = failed.failure.retry_after_ms
        delay = asked or policy.base_delay_ms * 2 ** (attempt - 1)
        if policy.max_delay_ms and asked and asked > policy.max_delay_ms:  # the server's wait only
            status = f"{failed.failure.status}: " if failed.failure.status else ""
            failed.error_message = (
                f"{failed.error_message} ({status}the server asked to wait {delay / 1000:g} s before "
                f"trying again, more than retry.provider.maxRetryDelayMs ({policy.max_delay_ms / 1000:g} s) "
                "allows, so it was not retried)")
            break
        await harness.emit(AutoRetryStart(attempt=attempt, max_attempts=policy.max_retries,
                                          delay_ms=delay, error_message=failed.error_message or ""))
        agent.messages.pop()
        if not await policy.wait(delay / 1000):
            await harness.emit(AutoRetryEnd(success=False, attempt=attempt, final_error="retry cancelled"))
            return produced
        produced += await agent.continue_()
    if attempt:
        failed = last_failure(agent.messages)
        if failed is not None and went_away(failed, first):
            failed.error_message = f"{failed.error_message}; the first attempt ended: {first.error_message}"
        await harness.emit(AutoRetryEnd(success=failed is None, attempt=attempt,
                                        final_error=failed.error_message if failed else None))
    return produced


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
    return (previous is not None and failed.error_message == previous and failure.status is not None
            and failure.status >= 400 and failure.status not in _TRANSIENT_STATUS
            and failure.retry_after_ms is None)


def went_away(last: AssistantMessage, first: AssistantMessage | None) -> bool:
    """The retries ended on a server that no longer answers, after a first attempt that
    failed another way (a server that crashed on the request): the first failure is the
    one that says why, so it must not be lost."""
    return (first is not None and first is not last and first.error_message != last.error_message
            and last.failure.status is None and first.failure.status is None)
