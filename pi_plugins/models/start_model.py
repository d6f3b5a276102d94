"""Which model a start uses, and whether to look for models on local servers first:
``pi``, ``pi --list-models``, the SDK and ``pi batch`` all choose here."""

from __future__ import annotations

import os

from pi_core.app.preflight import NO_MODEL
from pi_plugins.models.registry import ModelNotFoundError


def choose_model(registry, settings, *, pattern: str | None = None, provider: str | None = None):
    """(model, thinking level or None, explicit?, warning): ``pattern``, else the
    settings' ``defaultModel``, else pi's default among the models with a key
    (:mod:`pi_plugins.models.default_models`); raises :class:`ModelNotFoundError`."""
    if pattern:
        found = registry.resolve(pattern, provider)
        return found.model, found.thinking_level, True, found.warning
    default = settings.get("defaultModel")
    if default:
        found = registry.resolve(default, provider or settings.get("defaultProvider"))
        return found.model, found.thinking_level, False, found.warning
    candidates = registry.available()
    if provider:
        candidates = [m for m in candidates if m.provider == provider]
    if not candidates:
        raise ModelNotFoundError(NO_MODEL)
    from pi_plugins.models.default_models import initial_model

    return initial_model(candidates), None, False, None


def wants_local_models(registry, settings, *, pattern: str | None = None, provider: str | None = None,
                       api_key: str | None = None, offline: bool = False, env=None) -> bool:
    """Whether to look for models on local servers (``discover_models``): never offline
    or with ``localModels.enabled`` false; with a model named, only when it is not known;
    else when no model is usable yet, or always with ``localModels.enabled`` true."""
    env = os.environ if env is None else env
    if offline or env.get("PI_OFFLINE", "").strip().lower() not in ("", "0", "false", "no"):
        return False
    config = settings.get("localModels")
    enabled = config.get("enabled") if isinstance(config, dict) else None
    if enabled is False:
        return False
    if pattern:
        return not _known(registry, pattern, provider)
    default = settings.get("defaultModel")
    if default and _known(registry, default, provider or settings.get("defaultProvider")):
        return False
    return enabled is True or not (api_key or registry.available())


def _known(registry, pattern: str, provider: str | None) -> bool:
    """``pattern`` names a model of the registry (not a custom id of a known provider)."""
    try:
        return not registry.resolve(pattern, provider).warning
    except ModelNotFoundError:
        return False


async def find_local_models(registry, plugins, settings, **wish) -> bool:
    """Add the models of local servers to ``registry`` when :func:`wants_local_models`
    says to look (``wish``: its keywords); whether it looked."""
    if not wants_local_models(registry, settings, **wish):
        return False
    await registry.discover(plugins, settings)
    return True
