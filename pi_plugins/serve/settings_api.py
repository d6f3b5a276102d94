"""``pi serve``'s settings view on the server: the defaults a new session starts with
(pi's ``defaultProvider``, ``defaultModel``, ``defaultThinkingLevel`` in the global
settings.json) and provider keys, stored in ``auth.json`` as ``pi auth`` stores them.

- ``GET /api/settings``: the defaults, the models and each provider's key state (whether
  one is stored; never the key itself);
- ``PUT /api/settings``: ``{"defaultModel": "provider/id", "defaultThinkingLevel": L}``;
- ``PUT /api/providers/{provider}/key`` ``{"key": K}``, ``DELETE`` the same: a key.
"""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from pi_plugins.serve.sessions import RequestError, SessionHost

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")


async def json_object(request: Request) -> dict:
    """The request's body, which must be a JSON object (else a 400)."""
    try:
        body = await request.json()
    except ValueError:
        raise RequestError(400, "the body must be a JSON object") from None
    if not isinstance(body, dict):
        raise RequestError(400, "the body must be a JSON object")
    return body


def settings_routes(host: SessionHost) -> list[Route]:
    registry = host.env.registry

    def settings():
        return host.env.settings_for(host.cwd)

    def state() -> dict:
        registry.refresh()
        chosen = settings()
        stored = set(registry.auth.providers)
        return {
            "defaultProvider": chosen.get("defaultProvider"),
            "defaultModel": chosen.get("defaultModel"),
            "defaultThinkingLevel": chosen.get("defaultThinkingLevel"),
            "models": [f"{m.provider}/{m.id}" for m in registry.models],
            "available": [f"{m.provider}/{m.id}" for m in registry.available()],
            "providers": [{"name": name, "hasKey": name in stored} for name in registry.providers],
        }

    async def get_settings(request: Request) -> Response:
        return JSONResponse(await asyncio.to_thread(state))

    async def put_settings(request: Request) -> Response:
        body = await json_object(request)
        model, level = body.get("defaultModel"), body.get("defaultThinkingLevel")
        if model is not None:
            if not isinstance(model, str) or "/" not in model:
                raise RequestError(400, "defaultModel must be 'provider/id'")
            provider, model_id = model.split("/", 1)
            if registry.find(provider, model_id) is None:
                raise RequestError(400, f"no model {model!r}")
        if level is not None and level not in THINKING_LEVELS:
            raise RequestError(400, f"defaultThinkingLevel must be one of {', '.join(THINKING_LEVELS)}")
        chosen = settings()
        if model is not None:
            chosen.remember("defaultProvider", provider)
            chosen.remember("defaultModel", model_id)
        if level is not None:
            chosen.remember("defaultThinkingLevel", level)
        host.env.reload_settings()  # new sessions start on the new defaults
        return JSONResponse(await asyncio.to_thread(state))

    async def put_key(request: Request) -> Response:
        provider = request.path_params["provider"]
        key = (await json_object(request)).get("key")
        if not isinstance(key, str) or not key.strip():
            raise RequestError(400, "key must be a non-empty string")
        try:
            await asyncio.to_thread(registry.auth.set_api_key, provider, key.strip())
        except (OSError, ValueError) as exc:
            raise RequestError(500, f"auth.json: {exc}") from None
        return Response(status_code=204)

    async def delete_key(request: Request) -> Response:
        if not await asyncio.to_thread(registry.auth.remove, request.path_params["provider"]):
            raise RequestError(404, "no key stored for that provider")
        return Response(status_code=204)

    return [
        Route("/api/settings", get_settings, methods=["GET"]),
        Route("/api/settings", put_settings, methods=["PUT"]),
        Route("/api/providers/{provider}/key", put_key, methods=["PUT"]),
        Route("/api/providers/{provider}/key", delete_key, methods=["DELETE"]),
    ]
