"""Hooks of LLM providers and models."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hookspecs.markers import chain, collect, hookspec, notify

if TYPE_CHECKING:
    from pi_core.protocol.ctx import Ctx
    from pi_core.protocol.events import ProviderResponseEvent
    from pi_core.protocol.model import Model
    from pi_core.protocol.provider import Provider
    from pi_core.protocol.shell import Settings


@hookspec
@collect(key="api")
def register_providers(ctx: Ctx) -> Provider | list[Provider] | None:
    """Kind: collect (by ``api``).

    At start-up. Return a list of providers (objects with ``api`` and ``stream()``, see
    :class:`pi_core.protocol.provider.Provider`). A later provider for the same api replaces an
    earlier one.
    """


@hookspec
@collect(key="key")
def register_models(ctx: Ctx) -> Model | list[Model] | None:
    """Kind: collect (by ``provider/id``).

    At start-up. Return a list of :class:`pi_core.protocol.model.Model`; a later model with the
    same provider and id replaces the earlier one.
    """


@hookspec
@collect(key="key")
def discover_models(settings: Settings, ctx: Ctx) -> Model | list[Model] | None:
    """Kind: collect (by ``provider/id``).

    At start-up (of ``pi``, ``pi batch``, the SDK's ``create_harness`` without a
    :class:`pi_core.protocol.model.Model`), only when no model is configured (no ``--model``,
    no usable ``defaultModel``) and no provider has a key, when the model named is not
    known (one found on a server in an earlier run), or when the setting
    ``localModels.enabled`` is true; never with ``--offline`` or ``PI_OFFLINE``. Return the
    :class:`pi_core.protocol.model.Model` s found, for example on servers of this machine, the one
    to use by default first; keep to a fraction of a second, pi is starting. ``settings``
    are the merged settings (:class:`pi_core.protocol.shell.Settings`). The models are listed as
    local and need no key. A plugin module may also define ``probed_endpoints(settings)``,
    the addresses it tries: ``pi --list-models`` names them when nothing was found.
    """


@hookspec
@chain("payload")
def before_provider_request(payload: dict, model: Model, ctx: Ctx) -> dict | None:
    """Kind: chain.

    The provider's native request body (a dict), just before it is sent to ``model``.
    Return a replacement payload, or ``None`` to send it as it is.
    """


@hookspec
@chain("headers")
def before_provider_headers(headers: dict, model: Model, ctx: Ctx) -> dict | None:
    """Kind: chain.

    pi 1.6: the HTTP headers of a request to ``model`` (a dict of the headers the model
    and the caller add; the provider's own auth and content headers come on top), before
    the request is built. Return a replacement dict (a value ``None`` removes that
    header), or ``None`` to keep them.
    """


@hookspec
@notify
def after_provider_response(event: ProviderResponseEvent, ctx: Ctx) -> None:
    """Kind: notify. The provider answered: ``event.status`` and ``event.headers``."""


@hookspec
@notify
def provider_stream_event(data: Any, model: Model, ctx: Ctx) -> None:
    """Kind: notify. pi 1.6: each parsed event of a streaming answer from ``model``,
    before it becomes pi's events (``data``: the event's JSON as parsed, else its text).
    Read it, never change it; handlers are awaited in stream order, so keep them quick.
    Not stored. The HTTP providers (server-sent events) report it."""
