"""The provider contract: one plugin per wire API turns a unified request into a native
one and the native stream back into :mod:`pi_core.protocol.stream` events."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Literal, Protocol

from pi_core.protocol.messages import AgentMessage, Message
from pi_core.protocol.model import Model
from pi_core.protocol.records import field, record
from pi_core.protocol.signal import AbortSignal
from pi_core.protocol.stream import AssistantMessageEvent

ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh"]
THINKING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")


@record
class ToolSpec:
    """A tool as the model sees it."""

    name: str
    description: str
    parameters: dict


@record
class LlmContext:
    """What one request sends: the system prompt, LLM messages, tool specs (and the transcript)."""

    system_prompt: str = ""
    messages: list[Message] = field(factory=list)
    tools: list[ToolSpec] = field(factory=list)
    transcript: list[AgentMessage] = field(factory=list, eq=False, repr=False)


@record
class RequestContext:
    """What ``prepare_request`` handlers see and may change before each request."""

    system_prompt: str
    messages: list[AgentMessage]
    tools: list[Any]
    model: Model
    thinking_level: str = "off"
    stop: bool = False  # set by a handler (a budget): the run ends, nothing is sent


@record
class StreamOptions:
    signal: AbortSignal = field(factory=AbortSignal)
    api_key: str | None = None
    thinking_level: str = "off"
    max_tokens: int | None = None
    temperature: float | None = None
    session_id: str | None = None
    headers: dict[str, str] = field(factory=dict)
    #: Providers pass their native payload through this before sending it (the
    #: ``before_provider_request`` hook); it returns the payload to send.
    on_payload: Callable[[dict], Awaitable[dict]] | None = None
    #: ... and their request headers through this (``before_provider_headers``; None drops one).
    on_headers: Callable[[dict], Awaitable[dict]] | None = None
    #: Providers report the response status and headers here (``after_provider_response``).
    on_response: Callable[[int, dict], Awaitable[None]] | None = None
    on_stream_event: Callable[[Any], Awaitable[Any]] | None = None  # each parsed event (provider_stream_event)
    #: How often the provider itself sends a request again after a transient failure
    #: (the setting ``retry.provider.maxRetries``); ``None``: the provider's default.
    max_retries: int | None = None
    #: The longest wait a server may ask for (``Retry-After``) before the request fails at once
    #: instead of being sent again (``retry.provider.maxRetryDelayMs``; ``0``: no cap; ``None``: 60,000).
    max_retry_delay_ms: int | None = None
    #: pi's ``thinkingBudgets`` (level: tokens, budget-based APIs) and ``retry.provider.timeoutMs``.
    thinking_budgets: dict[str, int] | None = None
    timeout_ms: int | None = None
    #: pi 1.6's ``httpIdleTimeoutMs``: the longest silence while waiting for the response's
    #: headers or the next part of its body; ``0``: none; ``None``: 300,000 (pi's default).
    idle_timeout_ms: int | None = None
    #: pi 1.6's ``websocketConnectTimeoutMs``: a WebSocket's time to open (0: no limit; None: 15,000).
    connect_timeout_ms: int | None = None
    #: Variables the model's stored credential carries (pi 1.6's ``env`` of an auth.json
    #: key), over the process environment for this provider (Cloudflare's account id…).
    env: dict[str, str] = field(factory=dict)
    disable_continuation: bool = False  # pi 1.6's disableContinuation: a warm-up, outside any thread
    tool_choice: str | dict | None = None  # pi's toolChoice, for a caller that asks (the agent never does)

    async def prepare_payload(self, payload: dict) -> dict:
        return await self.on_payload(payload) if self.on_payload else payload

    async def response(self, status: int, headers: dict) -> None:
        if self.on_response:
            await self.on_response(status, headers)


class Provider(Protocol):
    """A wire API. ``stream`` never raises for request or model failures: it ends with
    an ``error`` event whose message carries ``error_message``."""

    api: str

    def stream(
        self, model: Model, context: LlmContext, options: StreamOptions
    ) -> AsyncIterator[AssistantMessageEvent]: ...


async def complete(provider: Provider, model: Model, context: LlmContext, options: StreamOptions):
    """Run one request to its end and return the final assistant message (a summary,
    a title…). Failures come back as a message with stop reason ``error``."""
    from pi_core.protocol.messages import AssistantMessage

    final, error = None, "the stream ended without a result"
    try:
        async for event in provider.stream(model, context, options):
            if event.type == "done":
                final = event.message
            elif event.type == "error":
                final = event.error
    except Exception as exc:  # a provider that broke its contract
        final, error = None, f"{type(exc).__name__}: {exc}"
    return final or AssistantMessage(api=model.api, provider=model.provider, model=model.id,
                                     stop_reason="error", error_message=error)
