"""``PI_PROVIDER_ORIGINS``: send the requests meant for one origin to another.

A JSON object in the environment maps origins that the sign-ins and providers use
(``"https://claude.ai"``, ``"https://api.anthropic.com"``, ``"https://auth.openai.com"``,
``"https://github.com"``, ...) to other origins (``"http://127.0.0.1:8123"``, a corporate
gateway). A request keeps its path, query and body; only scheme, host and port change.
Tests use it to play a provider's side on 127.0.0.1; companies use it for a gateway.

The variable is read at each call (cheap: the parsed value is cached by its text), so a
test may set it in-process.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from urllib.parse import urlsplit

VARIABLE = "PI_PROVIDER_ORIGINS"


class OriginsError(ValueError):
    """PI_PROVIDER_ORIGINS is not a JSON object of origin to origin."""


def _origin(url: str) -> str | None:
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    default = 443 if parts.scheme == "https" else 80
    port = parts.port if parts.port not in (None, default) else None
    return f"{parts.scheme}://{host}" + (f":{port}" if port else "")


@lru_cache(maxsize=4)
def _parse(text: str) -> dict[str, str]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise OriginsError(f"{VARIABLE} is not valid JSON ({exc.msg}); expected an object "
                           '{"https://api.anthropic.com": "http://127.0.0.1:8123", ...}') from None
    if not isinstance(data, dict):
        raise OriginsError(f"{VARIABLE} must be a JSON object of origin to origin")
    mapping = {}
    for source, target in data.items():
        src = _origin(source) if isinstance(source, str) else None
        dst = _origin(target) if isinstance(target, str) else None
        if src is None or dst is None:
            raise OriginsError(f"{VARIABLE}: {source!r} → {target!r} is not an origin to an origin "
                               "(scheme://host[:port], http or https)")
        mapping[src] = dst
    return mapping


def origin_map(env=None) -> dict[str, str]:
    text = (os.environ if env is None else env).get(VARIABLE, "").strip()
    return _parse(text) if text else {}


def rewrite(url: str, env=None) -> str:
    """``url`` with its origin replaced when ``PI_PROVIDER_ORIGINS`` maps it; path, query
    and fragment unchanged. Raises :class:`OriginsError` for a malformed variable."""
    mapping = origin_map(env)
    if not mapping:
        return url
    origin = _origin(url)
    target = mapping.get(origin) if origin else None
    if target is None:
        return url
    parts = urlsplit(url)
    rest = url[len(parts.scheme) + 3 + len(parts.netloc):]
    return target + rest
