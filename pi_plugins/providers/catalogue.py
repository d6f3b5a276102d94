"""The built-in model catalogue: every provider and model of pi 1.6 (``catalogue.json``,
in models.json's schema plus each provider's ``apiKeyEnv`` (and ``apiKeyEnvs``/``bearerEnv``), and the image and classifier
models by id under ``otherModels``; ``scripts/regenerate_catalogue.py`` writes it from
pi's package), with the catalogues ``pi update --models`` and the background refresh
(:mod:`.background_refresh`, started here at start-up in the chat and RPC, as pi 1.6)
stored in the agent dir's ``models-store.json`` laid over it (:mod:`.models_store`).

Loaded once, on first use: a start that never asks for a model never reads it. Users add
or override models in ``<agent dir>/models.json``; the registry applies it on top of
what this plugin registers.
"""

from __future__ import annotations

import gc
import sys
from functools import lru_cache
from pathlib import Path

import orjson

from pi_core import hookimpl
from pi_core.paths import agent_dir
from pi_core.protocol.model import Model, ModelCost
from pi_core.session.reader import gc_paused

CATALOGUE = Path(__file__).with_name("catalogue.json")
#: pi 1.6's file of refreshed catalogues in the agent dir (:mod:`.models_store`).
STORE = "models-store.json"


#: The base URL of a provider that has none in the catalogue (Azure: its provider takes
#: the resource from the environment when a request is made). Not empty: an empty base
#: URL means an in-process provider, which needs no key.
NO_BASE_URL = "unset://from-the-environment"


def _store_key() -> tuple[str, int | None, int | None]:
    """Which store the catalogue is built with: its path and when it and models.json last
    changed (two stats: a store that ``pi update --models`` rewrote is read again, and a
    Radius gateway taken out of models.json stops being listed)."""
    home = agent_dir()
    path = home / STORE  # the store's module is imported only when there is one
    try:
        changed = path.stat().st_mtime_ns
    except OSError:
        return str(path), None, None
    try:
        return str(path), changed, (home / "models.json").stat().st_mtime_ns
    except OSError:
        return str(path), changed, None


@lru_cache(maxsize=2)
def _document(store: tuple[str, int | None, int | None]) -> dict:
    document = orjson.loads(CATALOGUE.read_bytes())  # a third of json.loads's time
    if store[1] is None:
        return document
    from pi_plugins.providers.models_store import overlay, read_store

    entries = read_store(Path(store[0]))
    return overlay(document, entries, Path(store[0]).parent) if entries else document


@lru_cache(maxsize=2)
def _catalogue(store: tuple[str, int | None, int | None]) -> tuple[Model, ...]:
    with gc_paused():  # ~1,700 models at once, kept for the process: no collection meanwhile
        models = tuple(_models(_document(store)))
        gc.freeze()  # nor one that walks them again later
        return models


def _models(document: dict) -> list[Model]:
    """The catalogue's models, built directly: the data is ours and checked by the tests,
    so models.json's validation and merging (a third of the time, on every start) is
    not done again. What models.json's reader would make of it, field for field.

    Each made with its fields in order, not by keyword: ~1,700 keyword calls (their
    names matched to the fields one call at a time) cost as much as the models
    themselves. :data:`_FIELDS` is that order, which a test holds to ``Model``'s."""
    models = []
    for name, provider in document["providers"].items():
        api, key_env = provider["api"], provider.get("apiKeyEnv")
        key_envs, bearer_env = provider.get("apiKeyEnvs"), provider.get("bearerEnv")
        base, shared = provider.get("baseUrl") or NO_BASE_URL, provider.get("compat")
        for raw in provider["models"]:
            cost, compat = raw.get("cost") or {}, raw.get("compat")
            models.append(Model(
                raw["id"], name, raw.get("api") or api, raw.get("name") or raw["id"],
                raw.get("baseUrl") or base, bool(raw.get("reasoning")), raw.get("input") or ["text"],
                ModelCost(cost.get("input", 0), cost.get("output", 0), cost.get("cacheRead", 0),
                          cost.get("cacheWrite", 0)),
                int(raw.get("contextWindow") or 128_000), int(raw.get("maxTokens") or 16_384),
                raw.get("headers") or None, {**shared, **(compat or {})} if shared else compat,
                raw.get("thinkingLevelMap"), key_env, key_envs, bearer_env, False, None, None,
                raw.get("promptCache"), ((raw.get("inputLimits") or {}).get("images") or {}).get("resize")))
    return models


#: ``Model``'s fields in the order :func:`_models` gives them.
_FIELDS = ("id", "provider", "api", "name", "base_url", "reasoning", "input", "cost", "context_window",
           "max_tokens", "headers", "compat", "thinking_level_map", "api_key_env", "api_key_envs",
           "bearer_env", "discovered", "sampling_params", "sampling_params_by_thinking_level",
           "prompt_cache", "image_resize")


def builtin_models() -> list[Model]:
    """The catalogue's models, built once per process and shared: a caller changes one
    with ``attrs.evolve``, as the registry applies models.json (a copy of all ~1,700 on
    every call cost as much again as building them)."""
    return list(_catalogue(_store_key()))


def other_model_kind(provider: str, model_id: str) -> str | None:
    """``"image"`` or ``"classifier"`` for a model pi 1.6 lists that is no chat model
    (we run none of those), else None."""
    kinds = _document(_store_key()).get("otherModels", {}).get(provider) or {}
    return kinds.get(model_id)


def provider_names() -> dict[str, str]:
    """pi 1.6's display name of each built-in provider ("Anthropic", "xAI" …), as /login lists them."""
    return dict(_document(_store_key()).get("providerNames") or {})


def generated_at() -> str:
    """When pi generated the shipped catalogue (a pi.dev catalogue must be newer to count)."""
    return orjson.loads(CATALOGUE.read_bytes())["generatedAt"]


@hookimpl
def register_models():
    return builtin_models()


#: The modes (``ctx.mode``) pi 1.6 refreshes the catalogues in at start-up: the chat and RPC.
REFRESHING_MODES = ("tui", "rpc")


@hookimpl
def session_start(event, ctx):
    """pi 1.6's refresh at start-up, in the background (:mod:`.background_refresh`)."""
    if event.reason == "startup" and getattr(ctx, "mode", None) in REFRESHING_MODES:
        from pi_plugins.providers import background_refresh

        background_refresh.refresh_in_background(ctx.model_registry, delay=background_refresh.START_DELAY_SECONDS)


@hookimpl
async def session_shutdown(event, ctx):
    """A refresh still under way when the process leaves is dropped (nothing half-written:
    the store is replaced whole)."""
    refreshing = sys.modules.get("pi_plugins.providers.background_refresh")  # none began without it
    if event.reason == "quit" and refreshing is not None:
        await refreshing.stop(ctx.model_registry)
