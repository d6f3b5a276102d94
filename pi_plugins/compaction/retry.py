"""Summaries that survive a transient failure, as pi 1.6 has them: a summary request
(compaction or branch summary) that fails in a retryable way (429, 5xx, a lost
connection) is sent again under the ``retry.*`` policy the agent's own retries use
(:class:`pi_plugins.retries.policy.Policy`), and the wire hears about it:

- ``summarization_retry_scheduled`` (``attempt``, ``maxAttempts``, ``delayMs``,
  ``errorMessage``) before each wait;
- ``summarization_retry_attempt_start`` (``source``: ``"compaction"`` with its
  ``reason``, or ``"branchSummary"``) when the wait is over and the request goes again;
- ``summarization_retry_finished`` once, when a retried summary ends however it ends.

Each summary request has a budget of its own (a split turn's two summaries each get
``retry.maxRetries``), as in pi 1.6. An abort during the wait ends it at once.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from attrs import define, field

from pi_plugins.compaction.summary import Summarizer


@define
class SummarizationRetryScheduled:
    type: Literal["summarization_retry_scheduled"] = field(default="summarization_retry_scheduled", init=False)
    attempt: int = 1
    max_attempts: int = 3
    delay_ms: int = 0
    error_message: str = ""


@define
class SummarizationRetryAttemptStart:
    type: Literal["summarization_retry_attempt_start"] = field(default="summarization_retry_attempt_start",
                                                               init=False)
    source: Literal["compaction", "branchSummary"] = "compaction"
    reason: str | None = None  # a compaction's: manual, threshold or overflow


@define
class SummarizationRetryFinished:
    type: Literal["summarization_retry_finished"] = field(default="summarization_retry_finished", init=False)


def retrying(summarize: Summarizer, ctx: Any, source: Literal["compaction", "branchSummary"],
             reason: str | None = None) -> Summarizer:
    """``summarize`` with pi 1.6's summary retries, announced through ``ctx.emit``."""

    async def call(system_prompt: str, text: str, max_tokens: int) -> str:
        from pi_plugins.retries.policy import Policy

        policy = Policy.of(ctx.settings)
        budget = policy.max_retries if policy.enabled else 0
        attempt = 0
        while True:
            try:
                answer = await summarize(system_prompt, text, max_tokens)
            except Exception as exc:
                if attempt >= budget or not _retryable(exc):
                    if attempt:
                        await ctx.emit(SummarizationRetryFinished())
                    raise
                attempt += 1
                delay = policy.backoff_ms(attempt)
                await ctx.emit(SummarizationRetryScheduled(
                    attempt=attempt, max_attempts=budget, delay_ms=delay,
                    error_message=str(exc) or "Unknown error"))
                if not await _wait(delay / 1000, getattr(ctx, "signal", None)):
                    await ctx.emit(SummarizationRetryFinished())
                    raise
                await ctx.emit(SummarizationRetryAttemptStart(source=source, reason=reason))
                continue
            if attempt:
                await ctx.emit(SummarizationRetryFinished())
            return answer

    return call


def _retryable(exc: BaseException) -> bool:
    """A failed summary worth sending again: the provider called the failure transient
    (an abort or a refused request is final)."""
    answer = getattr(exc, "answer", None)
    failure = getattr(answer, "failure", None)
    return getattr(answer, "stop_reason", None) == "error" and getattr(failure, "kind", None) == "retryable"


async def _wait(seconds: float, signal: Any) -> bool:
    """Sleep unless the user aborts; True when the wait ran out."""
    if signal is None:
        await asyncio.sleep(seconds)
        return True
    if signal.aborted:
        return False
    try:
        await asyncio.wait_for(signal.wait(), seconds)
        return False
    except TimeoutError:
        return True
