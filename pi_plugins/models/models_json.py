"""``<agent dir>/models.json`` (pi's schema): providers and models of the user's own,
overrides of base URLs, headers, ``compat`` and single model fields."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from pi_core.protocol.model import Model, ModelCost
from pi_core.protocol.records import field, record
from pi_plugins.models.auth import resolve_config_value


@record
class ProviderConfig:
    """What models.json says about a provider besides its models."""

    api_key: str | None = field(default=None, repr=False)
    headers: dict[str, str] | None = None
    auth_header: bool = False
    custom: bool = False  # defines models of its own


def _merge_compat(base: dict | None, override: dict | None) -> dict | None:
    if not override:
        return base
    merged = {**(base or {}), **override}
    for nested in ("openRouterRouting", "vercelGatewayRouting"):
        if (base or {}).get(nested) or override.get(nested):
            merged[nested] = {**((base or {}).get(nested) or {}), **(override.get(nested) or {})}
    return merged


def _cost(raw: dict | None, base: ModelCost | None = None) -> ModelCost:
    base = base or ModelCost()
    raw = raw or {}
    return ModelCost(
        input=raw.get("input", base.input), output=raw.get("output", base.output),
        cache_read=raw.get("cacheRead", base.cache_read), cache_write=raw.get("cacheWrite", base.cache_write),
    )


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


def _validate(config: Any) -> None:
    _check(isinstance(config, dict) and isinstance(config.get("providers"), dict),
           'the top level must be an object with a "providers" object')
    for name, provider in config["providers"].items():
        _check(isinstance(provider, dict), f"providers.{name} must be an object")
        for key in ("baseUrl", "apiKey", "api", "name"):
            _check(provider.get(key) is None or isinstance(provider[key], str) and provider[key] != "",
                   f"providers.{name}.{key} must be a non-empty string")
        for key in ("headers", "compat", "modelOverrides"):
            _check(provider.get(key) is None or isinstance(provider[key], dict), f"providers.{name}.{key} must be an object")
        models = provider.get("models", [])
        _check(isinstance(models, list), f"providers.{name}.models must be an array")
        for n, model in enumerate(models):
            where = f"providers.{name}.models[{n}]"
            _check(isinstance(model, dict), f"{where} must be an object")
            _check(isinstance(model.get("id"), str) and model["id"] != "", f"{where}.id must be a non-empty string")
            for key in ("contextWindow", "maxTokens"):
                value = model.get(key)
                _check(value is None or (isinstance(value, (int, float)) and value > 0),
                       f"{where}.{key} must be a positive number")
            _check(model.get("input") is None or (isinstance(model["input"], list) and
                   all(kind in ("text", "image") for kind in model["input"])),
                   f'{where}.input must be a list of "text" and "image"')


def models_from_config(
    config: dict, builtin: Iterable[Model] = (), env: Mapping[str, str] | None = None
) -> tuple[list[Model], dict[str, ProviderConfig]]:
    """A models.json document (pi's schema; the catalogue's too, with ``apiKeyEnv``)
    applied to ``builtin`` models: all models, and each provider's key and headers.
    Raises :class:`ValueError` saying why the document does not fit the schema."""
    _validate(config)
    models = list(builtin)
    given = list(models)  # as they came, before the changes below
    # Of the providers the document names only (a catalogue has ~1,700 models of others):
    by_provider: dict[str, list[int]] = {}  # provider -> its models' indexes
    where: dict[tuple[str, str], int] = {}  # (provider, id) -> the first such model's index
    named = config["providers"]
    for i, model in enumerate(models):
        if model.provider in named:
            by_provider.setdefault(model.provider, []).append(i)
            where.setdefault((model.provider, model.id), i)
    settings: dict[str, ProviderConfig] = {}
    for name, provider in config["providers"].items():
        defs = provider.get("models") or []
        known = name in by_provider
        if defs and not known:
            _check(bool(provider.get("baseUrl")), f'provider {name}: "baseUrl" is required when defining models')
        elif not defs:
            _check(any(provider.get(k) for k in ("baseUrl", "headers", "compat", "modelOverrides")),
                   f'provider {name}: give "baseUrl", "headers", "compat", "modelOverrides" or "models"')
        headers = {k: resolve_config_value(v, env) or "" for k, v in (provider.get("headers") or {}).items()}
        settings[name] = ProviderConfig(api_key=provider.get("apiKey"), headers=headers or None,
                                        auth_header=bool(provider.get("authHeader")), custom=bool(defs) and not known)
        overrides = provider.get("modelOverrides") or {}
        for i in by_provider.get(name, ()):
            model = changed = models[i]
            if provider.get("baseUrl") or provider.get("compat") or headers:
                changed = attrs.evolve(
                    changed, base_url=(None if provider.get("oauth") == "radius"  # that baseUrl is the gateway's
                                       else provider.get("baseUrl")) or changed.base_url,
                    compat=_merge_compat(changed.compat, provider.get("compat")),
                    headers={**(changed.headers or {}), **headers} or None,
                )
            override = overrides.get(model.id)
            if isinstance(override, dict):
                changed = _apply_override(changed, override, env)
            models[i] = changed
        defaults = given[by_provider[name][0]] if known else None
        for raw in defs:
            api = raw.get("api") or provider.get("api") or (defaults.api if defaults else "")
            _check(bool(api), f'provider {name}, model {raw["id"]}: no "api" (set it on the provider or the model)')
            base_url = raw.get("baseUrl") or provider.get("baseUrl") or (defaults.base_url if defaults else "")
            model_headers = {k: resolve_config_value(v, env) or "" for k, v in (raw.get("headers") or {}).items()}
            model = Model(
                id=raw["id"], provider=name, api=api, name=raw.get("name") or raw["id"], base_url=base_url,
                reasoning=bool(raw.get("reasoning", False)), input=list(raw.get("input") or ["text"]),
                cost=_cost(raw.get("cost")), context_window=int(raw.get("contextWindow") or 128_000),
                max_tokens=int(raw.get("maxTokens") or 16_384),
                headers={**headers, **model_headers} or None,
                compat=_merge_compat(provider.get("compat"), raw.get("compat")),
                thinking_level_map=raw.get("thinkingLevelMap"),
                api_key_env=raw.get("apiKeyEnv") or provider.get("apiKeyEnv"),
                api_key_envs=raw.get("apiKeyEnvs") or provider.get("apiKeyEnvs"),
                bearer_env=raw.get("bearerEnv") or provider.get("bearerEnv"),
                sampling_params=_mapping(raw, "samplingParams"),
                sampling_params_by_thinking_level=_mapping(raw, "samplingParamsByThinkingLevel"),
                prompt_cache=_prompt_cache(raw.get("promptCache")),
                image_resize=image_resize(raw.get("inputLimits")),
            )
            at = where.get((name, model.id))
            if at is None:
                where[(name, model.id)] = len(models)
                models.append(model)
            else:
                models[at] = model
    return models, settings


def _apply_override(model: Model, override: dict, env: Mapping[str, str] | None) -> Model:
    changes: dict[str, Any] = {}
    for key, attr in (("name", "name"), ("reasoning", "reasoning"), ("input", "input"),
                      ("contextWindow", "context_window"), ("maxTokens", "max_tokens")):
        if override.get(key) is not None:
            changes[attr] = override[key]
    if override.get("thinkingLevelMap") is not None:
        changes["thinking_level_map"] = {**(model.thinking_level_map or {}), **override["thinkingLevelMap"]}
    if override.get("cost"):
        changes["cost"] = _cost(override["cost"], model.cost)
    if _mapping(override, "samplingParams"):
        changes["sampling_params"] = {**(model.sampling_params or {}), **override["samplingParams"]}
    by_level = _mapping(override, "samplingParamsByThinkingLevel")
    if by_level:  # each level's entry merged key by key with the model's (pi 1.6)
        base = model.sampling_params_by_thinking_level or {}
        changes["sampling_params_by_thinking_level"] = {
            **base, **{level: {**base.get(level, {}), **(values or {})} for level, values in by_level.items()}}
    if override.get("headers"):
        resolved = {k: resolve_config_value(v, env) or "" for k, v in override["headers"].items()}
        changes["headers"] = {**(model.headers or {}), **resolved}
    if isinstance(override.get("promptCache"), dict):
        changes["prompt_cache"] = _prompt_cache({**(model.prompt_cache or {}), **override["promptCache"]})
    if isinstance(override.get("inputLimits"), dict):
        changes["image_resize"] = image_resize(override["inputLimits"]) or model.image_resize
    changes["compat"] = _merge_compat(model.compat, override.get("compat"))
    return attrs.evolve(model, **changes)


def _mapping(raw: dict, key: str) -> dict | None:
    """An object-valued field (``samplingParams``…); anything else is refused by name."""
    value = raw.get(key)
    _check(value is None or isinstance(value, dict), f"{key} must be an object")
    if isinstance(value, dict) and key == "samplingParamsByThinkingLevel":
        _check(all(isinstance(v, dict) for v in value.values()), f"each level of {key} must be an object")
    return value


RESIZE_FIELDS = ("maxWidth", "maxHeight", "maxBytes", "jpegQuality")


def image_resize(input_limits: Any) -> dict[str, int] | None:
    """``inputLimits.images.resize``'s positive whole numbers (pi 1.6's fields; a value
    that is not one is left out, so its default applies)."""
    images = input_limits.get("images") if isinstance(input_limits, dict) else None
    resize = images.get("resize") if isinstance(images, dict) else None
    if not isinstance(resize, dict):
        return None
    fields = {k: int(v) for k, v in resize.items() if k in RESIZE_FIELDS and isinstance(v, (int, float))
              and not isinstance(v, bool) and v > 0}
    return fields or None


def _prompt_cache(raw: Any) -> dict[str, int] | None:
    """pi 1.6's ``promptCache`` (seconds per tier, ``short``/``long``); other keys and
    values that are not positive numbers are left out, as no lifetime at all."""
    if not isinstance(raw, dict):
        return None
    tiers = {k: int(v) for k, v in raw.items() if k in ("short", "long") and isinstance(v, (int, float))
             and not isinstance(v, bool) and v > 0}
    return tiers or None


def _strip_json_comments(text: str) -> str:
    """models.json may hold ``//`` comments and trailing commas, as pi allows."""
    text = re.sub(r'"(?:\\.|[^"\\])*"|//[^\n]*', lambda m: m.group(0) if m.group(0)[0] == '"' else "", text)
    return re.sub(r'"(?:\\.|[^"\\])*"|,(\s*[}\]])', lambda m: m.group(1) if m.group(1) is not None else m.group(0), text)


def load_models_json(path: Path) -> dict | None:
    """The document at ``path`` (``None`` if there is none); raises :class:`ValueError`."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        return json.loads(_strip_json_comments(text))
    except ValueError as exc:
        raise ValueError(f"not valid JSON: {exc}") from None


# ---------------------------------------------------------------- the registry
