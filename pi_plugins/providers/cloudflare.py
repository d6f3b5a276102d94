"""Cloudflare's AI Gateway (``cloudflare-ai-gateway``): the key goes in the gateway's own
``cf-aig-authorization`` header, as pi 0.73.1 sends it, and the provider's own key
header is left out (the gateway holds the upstream keys). Over the OpenAI APIs an
``Authorization`` set in the model's or the request's headers still goes; over
Anthropic's, ``x-api-key`` and ``Authorization`` go only when those headers set them.
"""

from __future__ import annotations

GATEWAY = "cloudflare-ai-gateway"


def is_gateway(model) -> bool:
    return model.provider == GATEWAY


def gateway_headers(headers: dict, key: str | None, own: tuple[str, ...], *explicit: dict | None) -> dict:
    """``headers`` with the gateway's authorization and without the provider's key
    headers ``own``, unless the ``explicit`` header sets (the model's, the request's)
    name them."""
    named = {name.lower(): value for given in explicit for name, value in (given or {}).items()}
    out = {k: v for k, v in headers.items() if k.lower() not in own}
    for name in own:
        if name in named:
            out[name] = named[name]
    out["cf-aig-authorization"] = f"Bearer {key or ''}"
    return out
