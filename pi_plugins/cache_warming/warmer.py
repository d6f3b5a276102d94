"""One session's cache warmer: keeps the prompt cache entry of the last request alive by
sending that request again, capped at one output token, shortly before the entry
expires, for as long as the conversation still extends it and a refresh pays.

A new request replaces the run; the run ends when the conversation moves on (another
model, a compaction, a branch), when the mode says so (``cacheWarming``), at pi's safety
limits (an hour from the request while a run streams, 30 minutes while idle), when a
refresh would come too late to find the entry alive, or when the decision (pi's or a
plugin's ``cache_warming_decision``) says stop. Each refresh that the provider answers is
a ``usage`` entry of kind ``cache_warm``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import attrs

from pi_core import AbortSignal, UsageEntry
from pi_core.protocol.records import record
from pi_plugins.cache_warming import economics
from pi_plugins.cache_warming.economics import (
    MAX_IDLE_AGE_MS,
    MAX_STREAMING_AGE_MS,
    Decision,
    Phase,
    cache_ttl_ms,
    evaluate,
    last_prompt_tokens,
    replayable,
)

log = logging.getLogger("pi.cache_warming")


def _now_ms() -> float:
    return time.monotonic() * 1000


@record(eq=False)
class SentRequest:
    """The loop's ``last_request``: a session request as it was handed to the provider,
    and the messages it was built from."""

    model: Any
    context: Any
    options: Any
    messages: list

    @classmethod
    def of(cls, sent: tuple) -> SentRequest:
        return cls(*sent)


@record(eq=False)
class Run:
    """The request being kept warm, and where its schedule stands."""

    request: SentRequest
    ttl_ms: int
    delay_ms: int
    started_at: float = attrs.field(factory=_now_ms)
    phase: Phase = "streaming"
    next_warm_at: float = 0.0
    deadline_at: float = 0.0  # a refresh later than this would likely pay a full cache write
    signal: AbortSignal = attrs.field(factory=AbortSignal)
    timer: asyncio.TimerHandle | None = None
    task: asyncio.Task | None = None
    extension_override: bool = False


class Warmer:
    """The schedule of one session's refreshes (``mode`` and ``decide`` are read each time)."""

    def __init__(self, ctx: Any, mode: Callable[[], str],
                 decide: Callable[[Decision], Awaitable[str]], on_warmed: Callable[[UsageEntry], Awaitable[None]],
                 delay_for: Callable[[int], int | None] | None = None) -> None:
        self.ctx = ctx  # its session and agent: what the refresh repeats and records
        self.mode, self.decide, self.on_warmed = mode, decide, on_warmed
        #: when a refresh is due, from the entry's lifetime (pi's rule unless given)
        self.delay_for = delay_for or (lambda ttl_ms: economics.warm_delay_ms(ttl_ms))
        self.run: Run | None = None
        self.reason = "waiting for first request"  # why no run is scheduled (pi's /session wording)
        self.started_from: Any = None  # the request the last run started from
        #: the decision that stopped the last run, and whether a plugin made it (for /session)
        self.stopped_by: tuple[Decision | None, bool] = (None, False)

    # ------------------------------------------------------------ what starts and stops a run

    def start(self, sent: tuple) -> None:
        """Keep warm the cache entry the loop's last request (``sent``) writes."""
        self.started_from = sent
        self._clear()
        request = SentRequest.of(sent)
        if self.mode() == "off":
            return self._stop("cache warming disabled")
        if not replayable(request.model, request.options):
            return self._stop("request cannot be replayed safely")
        ttl = cache_ttl_ms(request.model, request.options)
        delay = self.delay_for(ttl) if ttl is not None else None
        if ttl is None or delay is None:
            return self._stop("request disabled prompt caching" if ttl is None and _retention_off(request)
                              else "cache lifetime unavailable")
        self.run = Run(request, ttl, delay)
        self._schedule(self.run)

    def settled(self) -> None:
        """The agent's work is done: go on warming while idle, or stop (``streaming``)."""
        run = self.run
        if run is None:
            return
        if self.mode() == "streaming":
            return self._stop("agent run settled")
        run.phase = "idle"
        deadline = run.started_at + MAX_IDLE_AGE_MS
        if run.next_warm_at > deadline or _now_ms() >= deadline:
            self._stop("30-minute idle safety limit reached")

    def cancel(self, reason: str = "inactive") -> None:
        self._stop(reason)

    def status(self) -> tuple[str, str | None, Decision | None, bool, float | None]:
        """(state: ``inactive``/``scheduled``/``refreshing``, why inactive, the decision,
        whether a plugin overrode it, when the next decision is due): pi's ``/session`` status."""
        if self.mode() == "off":
            return "inactive", "cache warming disabled", None, False, None
        run = self.run
        if run is None:
            decision, override = self.stopped_by
            return "inactive", self.reason, decision, override, None
        if not self._current(run):
            return "inactive", "conversation context changed", None, False, None
        decision = self.evaluate(run)
        refreshing = run.timer is None
        if not decision.economics_available and not refreshing:
            return "inactive", "cache economics unavailable", None, False, None
        return ("refreshing" if refreshing else "scheduled"), None, decision, run.extension_override, run.next_warm_at

    # ------------------------------------------------------------ the schedule

    def _schedule(self, run: Run) -> None:
        run.extension_override = False
        now = _now_ms()
        run.next_warm_at = now + run.delay_ms
        # keep half the margin before expiry for a late timer and the request's dispatch
        run.deadline_at = run.next_warm_at + (run.ttl_ms - run.delay_ms) // 2
        limit = run.started_at + (MAX_IDLE_AGE_MS if run.phase == "idle" else MAX_STREAMING_AGE_MS)
        if run.next_warm_at > limit or now >= limit:
            return self._stop("30-minute idle safety limit reached" if run.phase == "idle"
                              else "one-hour safety limit reached")
        loop = asyncio.get_running_loop()
        run.timer = loop.call_later(run.delay_ms / 1000, self._fire, run)

    def _fire(self, run: Run) -> None:
        run.timer = None
        if self.run is run:
            run.task = asyncio.ensure_future(self._refresh(run))

    async def _refresh(self, run: Run) -> None:
        if not self._valid(run) or self._too_late(run):
            return
        decision = self.evaluate(run)
        action: str = decision.action
        try:
            action = await self.decide(decision)
        except Exception:  # a plugin that raises leaves pi's decision standing
            log.warning("cache_warming_decision failed; keeping pi's decision", exc_info=True)
        if not self._valid(run) or self._too_late(run):
            return
        override = action != decision.action
        if action == "stop":
            reason = ("stopped by extension" if override else "expected savings below threshold"
                      if decision.economics_available else "cache economics unavailable")
            return self._stop(reason, decision, override)
        run.extension_override = override
        try:
            answer = await self._send(run)
            if self._valid(run) and answer is not None and answer.stop_reason not in ("error", "aborted"):
                entry = self.ctx.session.append(UsageEntry(
                    kind="cache_warm", provider=answer.provider,
                    model=getattr(answer, "response_model", None) or answer.model, usage=answer.usage,
                    note="extension override" if override else None))
                await self.on_warmed(entry)
        except asyncio.CancelledError:
            raise
        except Exception:  # best effort: a failed refresh never touches the session's run
            log.debug("cache refresh failed", exc_info=True)
        if self.run is run:
            self._schedule(run)

    async def _send(self, run: Run) -> Any:
        """The request again, as sent, capped at one output token, without retries and
        outside the conversation's provider thread; its final message."""
        request = run.request
        provider = self.ctx.agent.provider_for(request.model)
        if provider is None:
            return None
        options = attrs.evolve(request.options, max_tokens=1, disable_continuation=True, max_retries=0,
                               signal=run.signal)
        final = None
        stream = provider.stream(request.model, request.context, options)
        try:
            async for event in stream:
                if event.type == "done":
                    final = event.message
                elif event.type == "error":
                    final = event.error
        finally:
            if hasattr(stream, "aclose"):
                await stream.aclose()
        return final

    # ------------------------------------------------------------ checks

    def evaluate(self, run: Run) -> Decision:
        return evaluate(run.request.model, last_prompt_tokens(self.ctx.session.path()), run.phase)

    def _valid(self, run: Run) -> bool:
        if self.run is not run:
            return False
        mode = self.mode()
        reason = ("cache warming disabled" if mode == "off" else
                  "agent run settled" if mode == "streaming" and run.phase == "idle" else
                  None if self._current(run) else "conversation context changed")
        if reason is None:
            return True
        self._stop(reason)
        return False

    def _current(self, run: Run) -> bool:
        """The selected model is still the request's and the conversation still begins
        with the messages the request was built from."""
        agent, sent = self.ctx.agent, run.request
        if agent.model.provider != sent.model.provider or agent.model.id != sent.model.id:
            return False
        messages = agent.messages
        return len(sent.messages) <= len(messages) and all(a is b for a, b in zip(sent.messages, messages, strict=False))

    def _too_late(self, run: Run) -> bool:
        if _now_ms() <= run.deadline_at:
            return False
        self._stop("cache refresh deadline missed")
        return True

    def _clear(self) -> None:
        run, self.run = self.run, None
        if run is None:
            return
        if run.timer is not None:
            run.timer.cancel()
        run.signal.abort()
        if run.task is not None and run.task is not _current_task():
            run.task.cancel()

    def _stop(self, reason: str, decision: Decision | None = None, override: bool = False) -> None:
        self._clear()
        self.reason, self.stopped_by = reason, (decision, override)


def _current_task() -> asyncio.Task | None:
    try:
        return asyncio.current_task()
    except RuntimeError:
        return None


def _retention_off(request: Any) -> bool:
    from pi_plugins.cache_warming.economics import cache_retention

    return cache_retention(request.options) == "none"
