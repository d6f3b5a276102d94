"""``pi update --models``: refresh the model catalogues into ``models-store.json``, as
pi 1.6 does.

For each built-in provider that has a key (in the environment, auth.json or models.json),
pi.dev's catalogue of it: ``GET <catalogue>/api/models/providers/<id>?types=chat,image,classifier``
(with the stored ``etag`` as ``if-none-match`` when a stored list backs it). A 304 keeps
the stored list, a 404 or 501 says pi.dev has none (kept with ``lastModified`` 0, so it
never counts), another failure keeps the stored list and is reported. Radius, signed in
or with ``RADIUS_API_KEY``, gets its gateway's own list instead (``GET <gateway>/v1/config``
with the key as a bearer token), which replaces its models; OpenRouter gets the list its
key may use (:mod:`.openrouter_models`). These two are asked on every refresh, as pi 1.6.

Everything goes through the HTTP client the providers use (:mod:`.transport`), retried
as pi retries catalogue requests (twice, after a lost connection, a 408, 425, 429 or
5xx; 4 s an attempt, 15 s in all). ``PI_PROVIDER_ORIGINS`` moves them as it moves the
providers' (a test's server plays pi.dev), and ``PI_RADIUS_GATEWAY`` names another
Radius gateway (pi reads it for ``/bug``).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pi_plugins.providers.models_store import read_store, store_path, write_store

DEFAULT_CATALOGUE_URL = "https://pi.dev"
DEFAULT_RADIUS_GATEWAY = "https://radius.pi.dev"
TYPES = "chat,image,classifier"
ATTEMPT_SECONDS = 4.0
TOTAL_SECONDS = 15.0
RETRIED = frozenset({408, 425, 429, 500, 502, 503, 504})
RADIUS = "radius"
OPENROUTER = "openrouter"  # its key's own list: openrouter_models.py
TIMED_OUT = "Model catalog refresh timed out."


class RefreshError(Exception):
    """One provider's catalogue could not be refreshed; the message says why."""


async def _get(url: str, headers: Mapping[str, str]) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) of a GET, with pi's retries for catalogue requests."""
    from pi_plugins.providers.origins import rewrite
    from pi_plugins.providers.transport import Client, ssl_context

    url = rewrite(url)
    client = Client(2, ssl_context() if url.startswith("https:") else None)
    try:
        for attempt in range(3):
            try:
                response = await asyncio.wait_for(client.send("GET", url, headers=headers,
                                                              read_timeout=ATTEMPT_SECONDS), ATTEMPT_SECONDS)
                body = b"".join([chunk async for chunk in response.aiter_bytes()])
                await response.aclose()
            except Exception as exc:  # httpcore's errors, OSError, a timed-out attempt
                if attempt == 2:
                    raise RefreshError(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__) from exc
                continue
            if response.status_code in RETRIED and attempt < 2:
                continue
            return response.status_code, dict(response.headers), body
    finally:
        await client.aclose()
    raise AssertionError("unreachable")


def _user_agent() -> str:
    from pi_core import __version__

    return f"pi-harness/{__version__}"


def _last_modified(value: str | None) -> int:
    """Milliseconds of a ``Last-Modified`` header; 0 when missing or unreadable (pi's rule)."""
    if not value:
        return 0
    try:
        return int(parsedate_to_datetime(value).timestamp() * 1000)
    except (TypeError, ValueError):
        return 0


def _catalogue_models(provider: str, value: Any) -> list[dict]:
    """pi.dev's answer (a list, ``{"models": [...]}`` or an object of models), as pi reads it."""
    if isinstance(value, list):
        entries = value
    elif isinstance(value, dict) and isinstance(value.get("models"), list):
        entries = value["models"]
    elif isinstance(value, dict):
        entries = list(value.values())
    else:
        raise RefreshError(f'Invalid model catalog for provider "{provider}"')
    return [{**entry, "provider": provider} for entry in entries
            if isinstance(entry, dict) and "id" in entry and entry.get("type", "chat") in TYPES.split(",")]


async def refresh_from_catalogue(provider: str, stored: dict | None, base_url: str) -> dict:
    """The new store entry of ``provider`` from pi.dev (raises :class:`RefreshError`,
    carrying the entry to keep in ``args[1]``, on a failed request)."""
    url = f"{base_url.rstrip('/')}/api/models/providers/{quote(provider, safe='')}?types={quote(TYPES)}"
    headers = {"accept": "application/json", "user-agent": _user_agent()}
    if stored and stored.get("models") and stored.get("etag"):
        headers["if-none-match"] = stored["etag"]
    status, answer_headers, body = await _get(url, headers)
    checked = int(time.time() * 1000)
    if status == 304 and stored:
        return {**stored, "checkedAt": checked}
    if status in (404, 501):
        kept = {**(stored or {"models": []}), "checkedAt": checked, "lastModified": 0}
        kept.pop("etag", None)
        return kept
    if not 200 <= status < 300:
        raise RefreshError(f"Model catalog request failed for {provider}: {status}",
                           {**(stored or {"models": []}), "checkedAt": checked})
    try:
        models = _catalogue_models(provider, json.loads(body))
    except ValueError as exc:
        raise RefreshError(f"Invalid model catalog for provider \"{provider}\": {exc}") from exc
    entry: dict[str, Any] = {"models": models, "lastModified": _last_modified(answer_headers.get("last-modified")),
                             "checkedAt": checked}
    if answer_headers.get("etag"):
        entry["etag"] = answer_headers["etag"]
    return entry


def _is_gateway_model(value: Any) -> bool:
    return (isinstance(value, dict) and isinstance(value.get("id"), str) and isinstance(value.get("name"), str)
            and isinstance(value.get("reasoning"), bool) and isinstance(value.get("input"), list)
            and isinstance(value.get("cost"), dict) and isinstance(value.get("contextWindow"), (int, float))
            and isinstance(value.get("maxTokens"), (int, float)))


async def refresh_radius(gateway: str, key: str | None) -> dict:
    """Radius's store entry from its gateway's ``/v1/config`` (pi's ``pi-messages`` models)."""
    gateway = gateway if "://" in gateway else f"https://{gateway}"
    gateway = gateway.rstrip("/")
    headers = {"accept": "application/json", "user-agent": _user_agent()}
    if key:
        headers["authorization"] = f"Bearer {key}"
    status, _, body = await _get(f"{gateway}/v1/config", headers)
    if not 200 <= status < 300:
        text = body.decode("utf-8", "replace").strip()
        raise RefreshError(f"Could not load Radius config from {gateway}: {status}: "
                           f"{text[:512] + '…' if len(text) > 512 else text}")
    try:
        config = json.loads(body)
    except ValueError:
        config = None
    if not (isinstance(config, dict) and isinstance(config.get("baseUrl"), str)
            and isinstance(config.get("models"), list)):
        raise RefreshError(f"Invalid Radius config from {gateway}")
    models = [{**m, "api": "pi-messages", "provider": RADIUS, "baseUrl": config["baseUrl"]}
              for m in config["models"] if _is_gateway_model(m)]
    return {"models": models, "checkedAt": int(time.time() * 1000)}


#: pi 1.6's freshness window: a pi.dev catalogue checked less than this long ago is not
#: asked for again, except by ``pi update --models`` (``force``).
REFRESH_INTERVAL_MS = 4 * 60 * 60 * 1000


def is_fresh(entry: Any, now_ms: int) -> bool:
    """A stored pi.dev catalogue checked within the window (pi's rule: an entry without
    ``lastModified``, written after a failed first request, is always asked for again)."""
    return (isinstance(entry, dict) and isinstance(entry.get("checkedAt"), int | float)
            and entry.get("lastModified") is not None and now_ms - entry["checkedAt"] < REFRESH_INTERVAL_MS)


async def refresh(agent: Path, env: Mapping[str, str], *, force: bool = True, registry: Any = None,
                  providers: Any = None) -> list[str]:
    """Refresh every configured provider's catalogue (or only ``providers``) into
    ``agent``'s store; the failures, ``"provider: why"``, in provider order (the rest are
    stored regardless). Unless ``force``d, a pi.dev catalogue still fresh
    (:func:`is_fresh`) is skipped, as pi 1.6's background refresh skips it; Radius's
    gateway is asked every time, as in pi 1.6. ``registry`` is a live one to read the
    keys from (else one is built)."""
    from pi_plugins.models.registry import ModelRegistry
    from pi_plugins.providers.catalogue import builtin_models

    shipped = builtin_models()
    if registry is None:
        registry = ModelRegistry(shipped, agent_dir=agent, env=dict(env))
    builtin = {model.provider for model in shipped} | {RADIUS}  # a models.json provider has no catalogue there
    first: dict[str, Any] = {}  # a key is a provider's: one look each, not one per model
    for model in registry.models:
        if model.provider in builtin:
            first.setdefault(model.provider, model)
    configured = {name: model for name, model in first.items() if registry.key_source(model) is not None}
    gateways = radius_gateways(agent)  # models.json's Radius gateways: each its own catalogue
    if providers is not None:
        configured = {name: model for name, model in configured.items() if name in providers}
    path = store_path(agent)
    store = read_store(path)
    if not force:
        now = int(time.time() * 1000)
        configured = {name: model for name, model in configured.items()
                      if name in (RADIUS, OPENROUTER) or not is_fresh(store.get(name), now)}
    base_url = DEFAULT_CATALOGUE_URL
    gateway = env.get("PI_RADIUS_GATEWAY") or DEFAULT_RADIUS_GATEWAY

    async def one(provider: str, model: Any) -> tuple[str, dict | None, str | None]:
        try:
            if provider == RADIUS:
                key = registry.api_key(model)
                if inspect.isawaitable(key):
                    key = await key
                return provider, await refresh_radius(gateway, key), None
            if provider == OPENROUTER:
                from pi_plugins.providers.openrouter_models import refresh_openrouter

                key = registry.api_key(model)
                if inspect.isawaitable(key):
                    key = await key
                base = next((m.base_url for m in registry.models
                             if m.provider == OPENROUTER and m.api == "openai-completions"), None)
                return provider, await refresh_openrouter(key, base, base_url), None
            return provider, await refresh_from_catalogue(provider, store.get(provider), base_url), None
        except RefreshError as exc:
            kept = exc.args[1] if len(exc.args) > 1 else None
            return provider, kept, str(exc.args[0])

    async def gateway_list(provider: str, url: str) -> tuple[str, dict | None, str | None]:
        key = registry.auth.api_key(provider, env) if hasattr(registry, "auth") else None
        key = key or env.get("RADIUS_API_KEY")
        try:
            entry = await refresh_radius(url, key)
        except RefreshError as exc:
            return provider, None, str(exc.args[0])
        return provider, {**entry, "models": [{**m, "provider": provider} for m in entry["models"]]}, None

    if providers is not None:
        gateways = {name: url for name, url in gateways.items() if name in providers}
    jobs = [*(one(p, m) for p, m in configured.items()), *(gateway_list(p, u) for p, u in gateways.items())]
    try:
        results = await asyncio.wait_for(asyncio.gather(*jobs),
                                         TOTAL_SECONDS)
    except TimeoutError:
        return [TIMED_OUT]
    failures = []
    for provider, entry, error in results:
        if entry is not None:
            store[provider] = entry
        if error:
            failures.append(f"{provider}: {error}")
    if results:
        write_store(path, store)
    return failures


def radius_gateways(agent: Path) -> dict[str, str]:
    """models.json's providers with ``"oauth": "radius"`` and their gateway (the
    ``baseUrl`` without ``/v1``), as pi 1.6 makes each a Radius provider of its own."""
    return {name: url for name, (_, url) in radius_gateway_configs(agent).items()}


def radius_gateway_configs(agent: Path) -> dict[str, tuple[str, str]]:
    """Each models.json Radius gateway's provider id, with its name (``name``, else the
    id) and its gateway; none when models.json does not parse."""
    from pi_plugins.models.models_json import load_models_json

    try:
        config = load_models_json(agent / "models.json") or {}
    except ValueError:
        return {}
    providers = config.get("providers") if isinstance(config, dict) else None
    return {name: (p["name"] if isinstance(p.get("name"), str) and p["name"] else name,
                   re.sub(r"/v1/?$", "", p["baseUrl"]))
            for name, p in (providers or {}).items()
            if isinstance(p, dict) and p.get("oauth") == "radius" and isinstance(p.get("baseUrl"), str)
            and p["baseUrl"] and name != RADIUS}


def run(agent: Path, env: Mapping[str, str]) -> int:
    """The command: pi's messages and exit codes."""
    import click

    failures = asyncio.run(refresh(agent, env))
    if failures == [TIMED_OUT]:
        click.echo(f"Error: {failures[0]}", err=True)
        return 1
    if failures:
        click.echo(f"Error: Could not refresh model catalogs: {'; '.join(failures)}", err=True)
        return 1
    click.echo("Model catalogs refreshed")
    return 0
