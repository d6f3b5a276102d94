"""Virtual models, as pi 1.6 has them (its ``docs/virtual-models.md``): a selectable model
that sends each request to a physical model its ``route`` picks.

A plugin declares one by returning a :class:`~pi_plugins.models.virtual.VirtualModel`
from ``register_models`` (pi's ``registerVirtualModel``); it is listed, selected and
recorded (``model_change``) as the selection. This plugin does the dispatch:

- ``prepare_request``: before each request of the loop (a prompt, a tool follow-up, a
  retry), asks the router, stores the router state it returns on the branch (a
  ``pi.virtual-model-state`` custom entry, before the request is sent) and hands the
  request on to the physical model and its clamped level, so the later ``prepare_request``
  plugins (budget, compaction) see the limits of the model the request goes to;
- ``message_end``: the answer records the physical level it was sent with (``thinkingLevel``),
  and a failed answer is remembered, so the request after it is a ``retry``;
- ``register_providers``: the ``virtual`` API, for summaries (``direct``) and for the error
  response of a failed routing.

Drop it with ``-builtin:virtual_models``: virtual models are then listed but cannot answer.
"""

from __future__ import annotations

import json
import sys
import weakref

from pi_core import hookimpl
from pi_core.protocol.messages import AssistantMessage
from pi_core.protocol.model import Model

#: Each session's (its ctx's) last failed routed answer and the last dispatch.
_failed: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_dispatched: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@hookimpl
def register_providers(ctx):
    from pi_plugins.providers.builtin import Deferred

    def make():
        from pi_plugins.virtual_models.provider import VirtualProvider

        return VirtualProvider(ctx)

    return [Deferred("virtual", make)]


def is_virtual(model) -> bool:
    """Whether ``model`` is a virtual model, without importing the module that defines
    them: no virtual model exists before it is imported."""
    virtual = sys.modules.get("pi_plugins.models.virtual")
    return virtual is not None and virtual.is_virtual(model)


@hookimpl
async def prepare_request(request, ctx):
    if not is_virtual(request.model):
        return None
    from pi_plugins.virtual_models.provider import ROUTE_ERROR
    from pi_plugins.virtual_models.routing import RouteError

    virtual = request.model
    try:
        physical, level = await _route(request, ctx)
    except RouteError as exc:
        request.model = Model(id=virtual.id, provider=virtual.provider, api=virtual.api,
                              name=virtual.name, compat={ROUTE_ERROR: str(exc)})
        return request
    _dispatched[ctx] = (physical.key, level)
    request.model, request.thinking_level = physical, level
    return request


async def _route(request, ctx) -> tuple[Model, str]:
    from pi_plugins.models.virtual import KEEP_STATE, STATE_ENTRY, RouteRequest
    from pi_plugins.virtual_models.routing import (
        RouteError,
        ask_router,
        branch_state,
        clamp,
        dispatch_of,
        physical_model,
        previous_of,
        reason_for,
    )

    virtual, registry, session = request.model, ctx.model_registry, ctx.session
    failed = _failed.pop(ctx, None)
    reason = reason_for(request.messages, failed)
    state = branch_state(session, virtual)
    asked = RouteRequest(model=virtual, thinking_level=request.thinking_level, reason=reason,
                         messages=list(request.messages), previous=previous_of(request.messages, registry),
                         failed=dispatch_of(failed, registry) if reason == "retry" and failed else None,
                         state=state, signal=ctx.signal)
    route = await ask_router(virtual, asked, ctx)
    if route.state is not KEEP_STATE and route.state is not None and route.state is not state:
        try:
            json.dumps(route.state)
        except (TypeError, ValueError) as exc:
            raise RouteError(f"Virtual model {virtual.key}: its router state is not JSON: {exc}") from exc
        if session is not None:  # stored before the request is sent, kept if it fails
            ctx.append_entry(STATE_ENTRY, {"provider": virtual.provider, "modelId": virtual.id,
                                           "state": route.state})
    physical = physical_model(virtual, route.model, registry)
    return physical, clamp(physical, route.thinking_level)


@hookimpl
def message_end(message, ctx):
    if not isinstance(message, AssistantMessage):
        return None
    dispatched = _dispatched.pop(ctx, None)
    if dispatched is None or dispatched[0] != f"{message.provider}/{message.model}":
        return None
    message.extra["thinkingLevel"] = dispatched[1]  # the physical level, not the selection's
    if message.stop_reason == "error":
        _failed[ctx] = message
    return message

