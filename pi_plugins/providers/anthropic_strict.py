"""Claude's limits on strict tools (pi 1.6): a request whose strict tools are past them
(seen: 20 strict tools, 16 optional or union-typed parameters across them) is refused
with a 400 ``invalid_request_error`` whose message says so (:data:`LIMIT_MESSAGES`).

Where such a refusal answers a request that sent pi's constrained tools strict
(``compat.supportsStrictTools``, "strict where possible"), the request is built and sent
again with those tools not strict (the ``before_provider_request`` hooks see it again),
the answer records why in its diagnostics (``anthropic_strict_tools_fallback``), and the
session's later requests send them not strict from the start: the tools seldom change
between turns, and going back to strict would only be refused again and rewrite the
cached tool definitions. At most :data:`MAX_SESSIONS` sessions are remembered; a session
that ends is forgotten. A refusal of a stream already started is the answer's, as is any
other error.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Any

from pi_core.protocol.model import Model
from pi_core.protocol.provider import LlmContext, StreamOptions

LIMIT_MESSAGES = ("The compiled grammar is too large", "Too many strict tools (",
                  "Schemas contains too many parameters with union types (")
MAX_SESSIONS = 10_000


class OverLimits:
    """The sessions whose strict tools Claude refused (oldest forgotten first)."""

    def __init__(self) -> None:
        self._sessions: OrderedDict[str, None] = OrderedDict()

    def mark(self, session_id: str | None) -> None:
        if not session_id:
            return
        self._sessions[session_id] = None
        while len(self._sessions) > MAX_SESSIONS:
            self._sessions.popitem(last=False)

    def __contains__(self, session_id: object) -> bool:
        return bool(session_id) and session_id in self._sessions

    def forget(self, session_id: str | None = None) -> None:
        if session_id is None:
            self._sessions.clear()
        else:
            self._sessions.pop(session_id, None)


def past_limits(failure_status: int | None, said: str) -> bool:
    """Whether a refused request's answer (``400 {json}``, as pi 1.6's SDK words it) says
    its strict tools are past Claude's limits."""
    if failure_status != 400:
        return False
    try:
        body = json.loads(said.split(" ", 1)[1])
    except (IndexError, ValueError):
        return False
    error = body.get("error") if isinstance(body, dict) else None
    kind = error.get("type") if isinstance(error, dict) else None
    return kind == "invalid_request_error" and any(text in said for text in LIMIT_MESSAGES)


class StrictToolLimits:
    """Mixed in before the provider's other stream layers: sends a request refused for its
    strict tools again without them strict. The provider's ``build_request`` asks
    :meth:`relaxed` whether its constrained tools may go strict, and calls :meth:`sent_strict`
    with what it built."""

    over_limits = OverLimits()  # one per process, as pi 1.6 keeps it
    _relaxing: dict[int, bool] = {}  # a request's signal -> its strict tools are off (the resend)
    _strict: dict[int, bool] = {}  # a request's signal -> it sent pi's constrained tools strict

    def relaxed(self, options: StreamOptions) -> bool:
        return options.session_id in self.over_limits or self._relaxing.get(id(options.signal), False)

    def sent_strict(self, options: StreamOptions, body: dict) -> None:
        added = [block["tool"].get("definition") or {} for message in body.get("messages") or ()
                 if isinstance(message.get("content"), list) for block in message["content"]
                 if isinstance(block, dict) and block.get("type") == "tool_addition"]
        self._strict[id(options.signal)] = any(t.get("strict") is True for t in [*(body.get("tools") or ()), *added])

    async def stream(self, model: Model, context: LlmContext, options: StreamOptions) -> AsyncIterator[Any]:
        key = id(options.signal)
        try:
            inner = super().stream(model, context, options)  # type: ignore[misc]
            first = await anext(inner)
            if not self._refused_for_limits(first, options):  # an error event is the last one
                yield first
                async for event in inner:
                    yield event
                return
            await inner.aclose()
            self.over_limits.mark(options.session_id)
            note = {"type": "anthropic_strict_tools_fallback", "timestamp": int(time.time() * 1000),
                    "error": {"message": first.error.error_message},
                    "details": {"reason": "strict_tool_limits_exceeded"}}
            self._relaxing[key] = True
            async for event in super().stream(model, context, options):  # type: ignore[misc]
                message = getattr(event, "partial", None) or getattr(event, "message", None) \
                    or getattr(event, "error", None)
                if message is not None and not any(d is note for d in message.extra.get("diagnostics") or ()):
                    message.extra["diagnostics"] = [*(message.extra.get("diagnostics") or []), note]
                yield event
        finally:
            self._relaxing.pop(key, None)
            self._strict.pop(key, None)

    def _refused_for_limits(self, event: Any, options: StreamOptions) -> bool:
        """A refused request (no stream started) that sent strict tools the first time."""
        key = id(options.signal)
        if event.type != "error" or options.signal.aborted or self._relaxing.get(key) or not self._strict.get(key):
            return False
        failure = event.error.failure
        return past_limits(failure.status if failure is not None else None, event.error.error_message or "")
