"""One routing decision: the request the router sees (why it is made, what answered
before, what failed, the branch's router state), the router's answer checked against the
model registry, and the physical model and level the request goes to. Every failure is a
:class:`RouteError` worded for the user; the caller turns it into an error response."""

from __future__ import annotations

import inspect
from typing import Any

from pi_core.protocol.messages import AgentMessage, AssistantMessage, UserMessage
from pi_core.protocol.model import Model
from pi_plugins.models.virtual import (
    KEEP_STATE,
    STATE_ENTRY,
    Dispatch,
    Route,
    RouteReason,
    RouteRequest,
    VirtualModel,
    is_virtual,
)


class RouteError(Exception):
    """The router failed or chose a model that cannot take the request."""


def reason_for(messages: list[AgentMessage], failed: AssistantMessage | None) -> RouteReason:
    """``retry`` when the last failed answer left the context (the retries plugin
    dropped it to send again); ``user`` right after a message the user wrote; else
    ``continuation`` (tool results, plugins' messages)."""
    if failed is not None and not any(m == failed for m in messages):
        return "retry"
    last = messages[-1] if messages else None
    return "user" if isinstance(last, UserMessage) else "continuation"


def dispatch_of(message: AssistantMessage, registry: Any) -> Dispatch:
    """The physical model and level an assistant message records."""
    model = registry.find(message.provider, message.model) if registry is not None else None
    if model is None:  # not (or no longer) in the registry: what the message says
        model = Model(id=message.model, provider=message.provider, api=message.api)
    return Dispatch(model=model, thinking_level=message.extra.get("thinkingLevel"), message=message)


def previous_of(messages: list[AgentMessage], registry: Any) -> Dispatch | None:
    """The latest successful response in ``messages`` (pi's ``previous``)."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage) and message.stop_reason not in ("error", "aborted"):
            found = dispatch_of(message, registry)
            return Dispatch(model=found.model, thinking_level=found.thinking_level)
    return None


def branch_state(session: Any, model: Model) -> Any:
    """The router state last stored on the session's branch for ``model`` (None: none)."""
    if session is None:
        return None
    for entry in reversed(session.path()):
        data = getattr(entry, "data", None)
        if (getattr(entry, "custom_type", None) == STATE_ENTRY and isinstance(data, dict)
                and data.get("provider") == model.provider and data.get("modelId") == model.id):
            return data.get("state")
    return None


async def ask_router(virtual: VirtualModel, request: RouteRequest, ctx: Any) -> Route:
    """Call ``route``; its answer as a :class:`Route` (a dict is read too)."""
    if virtual.route is None:
        raise RouteError(f"Virtual model {virtual.key} has no route function.")
    try:
        answer = virtual.route(request, ctx)
        if inspect.isawaitable(answer):
            answer = await answer
    except Exception as exc:
        raise RouteError(f"Virtual model {virtual.key} failed to route: {type(exc).__name__}: {exc}") from exc
    if isinstance(answer, dict):
        level = answer.get("thinking_level", answer.get("thinkingLevel", "off"))
        answer = Route(model=answer.get("model"), thinking_level=level or "off",
                       state=answer.get("state", KEEP_STATE))
    if not isinstance(answer, Route):
        raise RouteError(f"Virtual model {virtual.key}: route returned {type(answer).__name__}, "
                         "not a Route or a dict with a model.")
    return answer


def physical_model(virtual: VirtualModel, chosen: Model | str | None, registry: Any) -> Model:
    """The registry's model ``chosen`` names, checked: known, physical, with credentials."""
    if chosen is None:
        raise RouteError(f"Virtual model {virtual.key} routed to no model.")
    key = chosen if isinstance(chosen, str) else chosen.key
    provider, _, model_id = key.partition("/")
    found = registry.find(provider, model_id) if registry is not None else None
    if found is None and registry is None and isinstance(chosen, Model):
        found = chosen  # no registry (a bare agent): take the model as given
    if found is None:
        raise RouteError(f"Virtual model {virtual.key} routed to {key}, which is not a known model. "
                         "Use --list-models to see available models.")
    if is_virtual(found):
        raise RouteError(f"Virtual model {virtual.key} routed to {key}, which is not a physical model.")
    if registry is not None and not registry.has_auth(found):
        raise RouteError(f"Virtual model {virtual.key} routed to {key}, which has no credentials "
                         f"(set its key or run /login).")
    return found


def clamp(model: Model, level: str | None) -> str:
    """The level clamped to what the physical model takes (pi clamps it)."""
    from pi_plugins.providers.thinking import clamp_level

    return clamp_level(model, level)
