"""Virtual models' vocabulary: what a plugin author writes to declare one (pi 1.6's
``registerVirtualModel`` definition) and what its ``route`` callback receives and returns,
in Python spelling. The model registry lists them; the built-in ``virtual_models`` plugin
dispatches their requests.

A :class:`VirtualModel` is a :class:`~pi_core.protocol.model.Model`, so a plugin returns it
from ``register_models`` like any model: it is listed (``--list-models``, ``/model``),
resolved (``--model router/auto:high``) and recorded in ``model_change`` entries as the
selection. The ``virtual_models`` plugin sends each request made with it to the physical
model ``route`` picks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pi_core.protocol.messages import AgentMessage, AssistantMessage
from pi_core.protocol.model import Model
from pi_core.protocol.provider import THINKING_LEVELS
from pi_core.protocol.records import field, record

#: The wire API of every virtual model: no provider serves it; the plugin dispatches.
VIRTUAL_API = "virtual"

#: Why a request is made (pi 1.6's ``reason``).
RouteReason = Literal["user", "continuation", "retry", "direct"]

#: The custom entry pi 1.6 keeps router state in: ``{provider, modelId, state}``.
STATE_ENTRY = "pi.virtual-model-state"


class _Keep:
    """The ``state`` of a :class:`Route` that keeps the current state (``undefined`` in pi)."""

    def __repr__(self) -> str:
        return "KEEP_STATE"


KEEP_STATE: Any = _Keep()


@record
class Dispatch:
    """A physical model and the thinking level a request was sent with (pi's
    ``previous``; ``failed`` has the failed assistant ``message`` too)."""

    model: Model
    thinking_level: str | None = None
    message: AssistantMessage | None = None


@record
class RouteRequest:
    """What ``route(request, ctx)`` receives before each request made with the model."""

    #: The selected virtual model and thinking level.
    model: Model
    thinking_level: str
    reason: RouteReason
    #: The conversation for this request (system messages included).
    messages: list[AgentMessage] = field(factory=list)
    #: The physical model and level of the latest successful response in ``messages``.
    previous: Dispatch | None = None
    #: For ``retry``: the request that failed (``failed.message`` has ``stop_reason`` and
    #: ``error_message``); the message is no longer in ``messages``.
    failed: Dispatch | None = None
    #: Router state last returned on this session branch (None: none yet, or ``direct``).
    state: Any = None
    #: The request's abort signal.
    signal: Any = None


@record
class Route:
    """What ``route`` returns: the physical model (a :class:`Model` of the registry, or
    ``"provider/id"``), its thinking level (clamped to the model's), and optionally new
    router state (``KEEP_STATE``, None or ``request.state`` itself keep the current one).
    A dict with the same keys (or pi's ``thinkingLevel``) works too."""

    model: Model | str | None
    thinking_level: str = "off"
    state: Any = KEEP_STATE


def _levels_map(levels: list[str]) -> dict[str, str | None]:
    return {level: (level if level in levels else None) for level in THINKING_LEVELS}


@record
class VirtualModel(Model):
    """A selectable model that picks a physical model for each request.

    ``VirtualModel(provider="router", id="auto", name="Auto", route=my_router,
    thinking_levels=["low", "high"])``: ``thinking_levels`` are the levels offered for
    selection (default only ``off``); ``context_window`` and ``max_tokens`` are shown
    before the first response (0: unknown); ``input`` defaults to text and images.
    ``route(request, ctx)`` (plain or async) returns a :class:`Route` or its dict.
    """

    api: str = VIRTUAL_API
    input: list[str] = field(factory=lambda: ["text", "image"])
    context_window: int = 0
    max_tokens: int = 0
    route: Callable[[RouteRequest, Any], Any] | None = field(
        default=None, kw_only=True, eq=False, metadata={"transient": True})
    thinking_levels: list[str] = field(factory=lambda: ["off"], kw_only=True, eq=False,
                                       metadata={"transient": True})

    def __attrs_post_init__(self) -> None:
        levels = [level for level in self.thinking_levels if level in THINKING_LEVELS] or ["off"]
        self.thinking_levels = levels
        # the shell offers and clamps levels from these (as for a physical model)
        self.reasoning = levels != ["off"]
        self.thinking_level_map = _levels_map(levels) if self.reasoning else None


def is_virtual(model: Any) -> bool:
    return isinstance(model, VirtualModel)


def settle_virtual_models(models: list, errors: list[str]) -> list:
    """The plugins' virtual models as pi 1.6's registry takes them: one on a physical
    model's key is refused (in 1.6's words, added to ``errors``); the same key twice keeps
    the later."""
    physical = {m.key for m in models if m.api != "virtual"}
    for key in dict.fromkeys(m.key for m in models if m.api == "virtual" and m.key in physical):
        errors.append(f"Virtual model {key} conflicts with a physical model.")
    latest = {m.key: m for m in models if m.api == "virtual"}
    return [m for m in models if m.api != "virtual" or (m.key not in physical and latest[m.key] is m)]
