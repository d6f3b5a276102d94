"""The provider of the ``virtual`` wire API. A request made with a virtual model outside
the agent loop (a compaction summary: pi 1.6's ``direct`` reason) is routed here and
streamed by the physical model's provider; a request whose routing failed ends here with
an error response that says why (the loop's requests are routed by ``prepare_request``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import attrs

from pi_core.protocol.provider import LlmContext, StreamOptions
from pi_plugins.models.virtual import VIRTUAL_API, RouteRequest, is_virtual
from pi_plugins.providers.kit.builder import MessageBuilder
from pi_plugins.virtual_models.routing import RouteError, ask_router, clamp, physical_model

#: The compat key a failed routing leaves its error in, on the model the request names.
ROUTE_ERROR = "virtualRouteError"


class VirtualProvider:
    """Dispatches ``direct`` requests of virtual models; answers failed routings."""

    api = VIRTUAL_API

    def __init__(self, ctx: Any):
        self.ctx = ctx

    async def stream(self, model: Any, context: LlmContext, options: StreamOptions) -> AsyncIterator[Any]:
        error = (model.compat or {}).get(ROUTE_ERROR)
        if error is None and not is_virtual(model):
            error = f"Model {model.key} names the virtual API but is no virtual model."
        if error is None:
            try:
                async for event in self._direct(model, context, options):
                    yield event
                return
            except RouteError as exc:
                error = str(exc)
        builder = MessageBuilder(api=model.api, provider=model.provider, model=model.id)
        yield builder.start()
        yield builder.error(error)

    async def _direct(self, virtual: Any, context: LlmContext, options: StreamOptions) -> AsyncIterator[Any]:
        ctx, agent = self.ctx, getattr(self.ctx, "agent", None)
        registry = ctx.model_registry
        request = RouteRequest(model=virtual, thinking_level=options.thinking_level or "off", reason="direct",
                               messages=list(context.messages), signal=options.signal)
        route = await ask_router(virtual, request, ctx)  # direct requests keep no state
        physical = physical_model(virtual, route.model, registry)
        provider = agent.provider_for(physical) if agent is not None else None
        if agent is None or provider is None:
            raise RouteError(f"Virtual model {virtual.key} routed to {physical.key}, whose API "
                             f"{physical.api!r} no provider serves.")
        headers = dict(agent.get_headers(physical)) if agent.get_headers else {}
        options = attrs.evolve(options, api_key=await agent.api_key(physical), headers=headers,
                               thinking_level=clamp(physical, route.thinking_level))
        async for event in provider.stream(physical, context, options):
            yield event
