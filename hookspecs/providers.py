"""Hooks of LLM providers and models."""

from hookspecs.markers import hookspec


@hookspec
def register_providers(ctx):
    """Kind: collect (by ``api``).

    At start-up. Return a list of providers (objects with ``api`` and ``stream()``, see
    :class:`pi_core.provider.Provider`). A later provider for the same api replaces an
    earlier one.
    """


@hookspec
def register_models(ctx):
    """Kind: collect (by ``provider/id``).

    At start-up. Return a list of :class:`pi_core.model.Model`; a later model with the
    same provider and id replaces the earlier one.
    """


@hookspec
def discover_models(settings, ctx):
    """Kind: collect (by ``provider/id``).

    At start-up, only when no model is configured (no ``--model``, no usable
    ``defaultModel``) and no provider has a key, or the setting ``localModels.enabled`` is
    true; never with ``--offline`` or ``PI_OFFLINE``. Return the
    :class:`pi_core.model.Model` s found, for example on servers of this machine, the one
    to use by default first; keep to a fraction of a second, pi is starting. ``settings``
    are the merged settings (:class:`pi_core.settings.Settings`). The models are listed as
    local and need no key.
    """


@hookspec
def before_provider_request(payload, model, ctx):
    """Kind: chain.

    The provider's native request body (a dict), just before it is sent to ``model``.
    Return a replacement payload, or ``None`` to send it as it is.
    """


@hookspec
def after_provider_response(event, ctx):
    """Kind: notify. The provider answered: ``event.status`` and ``event.headers``."""
