"""How requests name this program to a provider, in the shape pi-ai 1.6's client identity
gives them: a detailed ``User-Agent`` (``pi-harness/<version> (<os>; python/<version>;
<arch>)``, with Node's names for the OS and the machine, as pi's ``pi/<version> (linux;
node/v22…; x64)``) and the attribution headers some providers read (OpenRouter, NVIDIA,
OpenCode), naming pi-harness rather than pi. They go beneath every other header, out of
the ``before_provider_headers`` handlers' sight, as in pi 1.6: a models.json, request or
handler header of the same name replaces one, and a handler's ``None`` removes it.
``PI_TELEMETRY`` set to a false value turns the attribution off, as pi 1.6's install
telemetry switch does (this program sends no install telemetry, so that is all it
turns off)."""

from __future__ import annotations

import os
import platform
import sys
from typing import Any
from urllib.parse import urlsplit

from pi_core import __version__

#: The attribution: the program's name and the categories OpenRouter lists it under. pi 1.6
#: also sends its web page as ``HTTP-Referer``; pi-harness has none to give.
NAME = "pi-harness"
CATEGORIES = ("cli-agent",)
_SYSTEMS = {"Linux": "linux", "Darwin": "darwin", "Windows": "win32"}
_MACHINES = {"x86_64": "x64", "AMD64": "x64", "aarch64": "arm64", "i686": "ia32"}


def user_agent() -> str:
    """``pi-harness/0.1.0 (linux; python/3.12.3; x64)``."""
    system = _SYSTEMS.get(platform.system(), platform.system().lower())
    machine = _MACHINES.get(platform.machine(), platform.machine())
    runtime = f"python/{'.'.join(str(n) for n in sys.version_info[:3])}"
    return f"{NAME}/{__version__} ({system}; {runtime}; {machine})"


def _host(base_url: str) -> str:
    try:
        return urlsplit(base_url).hostname or ""
    except ValueError:
        return ""


def attribution_on(env: dict | None = None) -> bool:
    """Off where ``PI_TELEMETRY`` is set to something other than ``1``, ``true`` or ``yes``."""
    value = (env if env is not None else os.environ).get("PI_TELEMETRY")
    return value is None or value.strip().lower() in ("1", "true", "yes")


def attribution_headers(provider: str, base_url: str) -> dict[str, str]:
    """The attribution pi-ai 1.6 sends to this target, with our name."""
    if not attribution_on():
        return {}
    if provider == "openrouter" or "openrouter.ai" in base_url:
        return {"X-OpenRouter-Title": NAME, "X-OpenRouter-Categories": ",".join(CATEGORIES)}
    if provider == "nvidia" or _host(base_url) == "integrate.api.nvidia.com":
        return {"X-BILLING-INVOKE-ORIGIN": NAME[:1].upper() + NAME[1:]}
    if provider in ("opencode", "opencode-go") or _host(base_url) == "opencode.ai":
        return {"x-opencode-client": NAME}
    return {}


def identity_headers(provider: str, base_url: str) -> dict[str, str]:
    """The ``User-Agent`` and the attribution for a request to ``base_url``."""
    return {"User-Agent": user_agent(), **attribution_headers(provider, base_url)}


def beneath(identity: dict[str, str], headers: dict, handled: dict | None = None) -> dict:
    """``headers`` with each identity header none of them (nor a handler's ``None`` in
    ``handled``) names, ahead of them."""
    named = {k.lower() for k in headers} | {k.lower() for k in (handled or {})}
    return {**{k: v for k, v in identity.items() if k.lower() not in named}, **headers}


async def with_identity(model: Any, headers: dict, options: Any) -> dict:
    """The headers after pi 1.6's ``before_provider_headers`` handlers (``options.on_headers``),
    with the client identity beneath them, out of their sight."""
    from pi_plugins.providers.http import merged_headers

    handled = await options.on_headers(dict(headers)) if options.on_headers is not None else None
    merged = merged_headers(handled) if handled is not None else headers
    return beneath(identity_headers(model.provider, model.base_url), merged, handled)
