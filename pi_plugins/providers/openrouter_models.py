"""OpenRouter's per-key model list, as pi 1.6 keeps it: with a key, only the chat models
that key may use, with the key's context size, output limit and prices.

On each refresh (pi 1.6 asks every time, no four-hour window, no etag): the shipped
OpenRouter models, with pi.dev's catalogue over them when it is newer than the shipped
one, are narrowed by ``GET <baseUrl>/models/user`` (the key as a bearer token; the base
URL as configured, so a regional endpoint filters for its region). Image and classifier
models pass unfiltered. A 401, 403 or 404 there (a proxy as the base URL) keeps the whole
catalogue. The result is stored in ``models-store.json`` as OpenRouter's own list, which
replaces the shipped one, offline too; an empty list falls back to the shipped models.
"""

from __future__ import annotations

import json
import time
from decimal import Decimal, InvalidOperation
from typing import Any

from pi_plugins.providers.catalogue_refresh import RefreshError, _get, _user_agent, refresh_from_catalogue

OPENROUTER = "openrouter"
DEFAULT_BASE_URL = "https://openrouter.ai/api/v1"
KEEPS_CATALOGUE = frozenset({401, 403, 404})


def _per_million(value: Any, fallback: float) -> float:
    """A $/token price as $/1M tokens; missing, invalid or negative (-1: a router's price
    depends on the model it picks) is ``fallback``."""
    try:
        per_token = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return fallback
    if value is None or not per_token.is_finite() or per_token < 0:
        return fallback
    return float(round(per_token * 1_000_000, 6))


def openrouter_cost(pricing: Any) -> dict:
    """OpenRouter's prices as pi's cost: per 1M tokens; a prompt-length override is an
    input-token tier (time-of-day overrides cannot be said and are left out)."""
    pricing = pricing if isinstance(pricing, dict) else {}
    base = {"input": _per_million(pricing.get("prompt"), 0), "output": _per_million(pricing.get("completion"), 0),
            "cacheRead": _per_million(pricing.get("input_cache_read"), 0),
            "cacheWrite": _per_million(pricing.get("input_cache_write"), 0)}
    tiers = []
    for override in pricing.get("overrides") or ():
        if not isinstance(override, dict) or override.get("min_prompt_tokens") is None \
                or any(key in override for key in ("utc_start", "utc_end", "utc_days")):
            continue
        tiers.append({"inputTokensAbove": override["min_prompt_tokens"],
                      "input": _per_million(override.get("prompt"), base["input"]),
                      "output": _per_million(override.get("completion"), base["output"]),
                      "cacheRead": _per_million(override.get("input_cache_read"), base["cacheRead"]),
                      "cacheWrite": _per_million(override.get("input_cache_write"), base["cacheWrite"])})
    return {**base, "tiers": tiers} if tiers else base


def personalize(catalogue: list[dict], entries: list[Any]) -> list[dict]:
    """The catalogue narrowed to the key's chat models, with its limits and prices (a
    missing, null or 0 limit keeps the catalogue's)."""
    allowed = {e["id"]: e for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str)}
    out = []
    for model in catalogue:
        if model.get("type", "chat") != "chat":
            out.append(model)
            continue
        entry = allowed.get(model["id"])
        if entry is None:
            continue
        top: dict = entry["top_provider"] if isinstance(entry.get("top_provider"), dict) else {}
        out.append({**model,
                    "contextWindow": top.get("context_length") or entry.get("context_length") or model.get("contextWindow"),
                    "maxTokens": top.get("max_completion_tokens") or model.get("maxTokens"),
                    "cost": openrouter_cost(entry["pricing"]) if entry.get("pricing") else model.get("cost")})
    return out


async def key_models(base_url: str, key: str) -> list[Any] | None:
    """``/models/user``'s entries for ``key``; None when the endpoint keeps the catalogue."""
    status, _, body = await _get(f"{base_url.rstrip('/')}/models/user",
                                 {"accept": "application/json", "authorization": f"Bearer {key}",
                                  "user-agent": _user_agent()})
    if status in KEEPS_CATALOGUE:
        return None
    if not 200 <= status < 300:
        raise RefreshError(f"OpenRouter model list request failed: {status}")
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise RefreshError("Invalid OpenRouter model list response")
    return data["data"]


def shipped_models() -> tuple[list[dict], int | None]:
    """OpenRouter's shipped models as pi's rows (image and classifier ones by id and type)
    and when the shipped catalogue was made."""
    import orjson

    from pi_plugins.providers.catalogue import CATALOGUE
    from pi_plugins.providers.models_store import generated_at_ms

    document = orjson.loads(CATALOGUE.read_bytes())
    rows = [{**row, "provider": OPENROUTER} for row in document["providers"].get(OPENROUTER, {}).get("models", [])]
    others = [{"id": model_id, "type": kind, "provider": OPENROUTER}
              for model_id, kind in (document.get("otherModels") or {}).get(OPENROUTER, {}).items()]
    return rows + others, generated_at_ms(document)


async def refresh_openrouter(key: str | None, base_url: str | None, catalogue_url: str) -> dict:
    """OpenRouter's store entry: the catalogue (pi.dev's over the shipped one when newer)
    narrowed to what ``key`` may use."""
    catalogue, generated = shipped_models()
    remote = await refresh_from_catalogue(OPENROUTER, None, catalogue_url)
    modified = remote.get("lastModified")
    if remote.get("models") and isinstance(modified, int) and (generated is None or modified > generated):
        by_id = {model["id"]: i for i, model in enumerate(catalogue)}
        for model in remote["models"]:
            if model["id"] in by_id:
                catalogue[by_id[model["id"]]] = model
            else:
                catalogue.append(model)
    if key:
        entries = await key_models(base_url or DEFAULT_BASE_URL, key)
        if entries is not None:
            catalogue = personalize(catalogue, entries)
    return {"models": catalogue, "checkedAt": int(time.time() * 1000)}
