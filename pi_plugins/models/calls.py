"""Model calls from the registry, pi 1.6's ``ctx.modelRegistry.streamSimple()`` and
``complete()``: a plugin asks any model of the registry, its key, headers and provider
variables resolved as for the session's own requests, through the providers the plugins
register (an extension's too), so it needs no provider code of its own."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from typing import Any

import attrs

from pi_core.protocol.messages import AssistantMessage
from pi_core.protocol.model import Model
from pi_core.protocol.provider import LlmContext, StreamOptions
from pi_core.protocol.stream import AssistantMessageEvent, ErrorEvent


class ModelCalls:
    """The registry's calls (mixed into :class:`~pi_plugins.models.registry.ModelRegistry`)."""

    #: The plugins whose ``register_providers`` answer the calls (set by ``from_plugins``).
    call_plugins: Any = None
    _call_providers: dict[str, Any] | None = None

    async def _provider_for(self, model: Model) -> Any:
        if self._call_providers is None:
            found = await self.call_plugins.call("register_providers", ctx=None) if self.call_plugins else []
            self._call_providers = {p.api: p for p in found}
        return self._call_providers.get(model.api)

    async def _options(self, model: Model, options: StreamOptions | None) -> StreamOptions:
        """``options`` with what the caller left out resolved as for a session's request."""
        options = options or StreamOptions()
        key = options.api_key
        if not key:
            key = self.api_key(model)  # type: ignore[attr-defined]
            key = await key if inspect.isawaitable(key) else key
        headers = {**self.request_headers(model), **(options.headers or {})}  # type: ignore[attr-defined]
        env = {**self.request_env(model), **(options.env or {})}  # type: ignore[attr-defined]
        return attrs.evolve(options, api_key=key, headers=headers, env=env)

    async def stream_simple(self, model: Model, context: LlmContext,
                            options: StreamOptions | None = None) -> AsyncIterator[AssistantMessageEvent]:
        """pi's ``streamSimple``: the answer's stream events, ending with ``done`` or
        ``error`` (which carries the message). A failure to set up (no provider for the
        model's API, a key that cannot be had) is an ``error`` event, never raised."""
        failed = AssistantMessage(api=model.api, provider=model.provider, model=model.id, stop_reason="error")
        try:
            provider = await self._provider_for(model)
            if provider is None:
                raise LookupError(f"no provider for api {model.api!r} (model {model.key})")
            options = await self._options(model, options)
        except Exception as exc:
            failed.error_message = str(exc) or type(exc).__name__
            yield ErrorEvent(reason="error", error=failed)
            return
        async for event in provider.stream(model, context, options):
            yield event

    async def complete(self, model: Model, context: LlmContext,
                       options: StreamOptions | None = None) -> AssistantMessage:
        """pi's ``complete``: the final assistant message (stop reason ``error`` with its
        ``error_message`` when it failed)."""
        final: AssistantMessage | None = None
        async for event in self.stream_simple(model, context, options):
            if event.type == "done":
                final = event.message
            elif event.type == "error":
                final = event.error
        return final or AssistantMessage(api=model.api, provider=model.provider, model=model.id,
                                         stop_reason="error", error_message="the stream ended without a result")
