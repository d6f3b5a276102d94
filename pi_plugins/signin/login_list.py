"""The provider list of ``/login``, as pi 1.6 shows it: the preferred partners first
(Radius, then OpenRouter, each marked ``✦``), the others by display name, each with how
it is configured (`` • not configured``, `` ✓ configured``, `` ✓ env: VARIABLE``, or
`` • API key configured`` where the other way in is the one set up)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: pi 1.6's preferred partner providers, most preferred first.
PREFERRED = ("radius", "openrouter")
#: The sign-ins pi 1.6 calls subscriptions (its others are accounts).
SUBSCRIPTIONS = frozenset({"anthropic", "github-copilot", "kimi-coding", "meta", "openai-codex", "openai", "xai"})
TITLE = "Select provider to configure:"


def provider_name(provider: str, flows: dict) -> str:
    """pi 1.6's display name: the catalogue's, else the sign-in's (Radius, a gateway), else the id."""
    from pi_plugins.providers.catalogue import provider_names

    flow = flows.get(provider)
    return provider_names().get(provider) or (flow.name if flow is not None else provider)


def _kind_label(kind: str, provider: str) -> str:
    if kind == "api_key":
        return "API key"
    return "subscription" if provider in SUBSCRIPTIONS else "account"


def status(provider: str, store: Any, registry: Any) -> tuple[str, str] | None:
    """(kind, source) of what configures ``provider`` now, or None: auth.json first, then
    the environment (the variable, as the model registry finds it)."""
    entry = store.get(provider) if store is not None else None
    if isinstance(entry, dict):
        return ("oauth" if entry.get("type") == "oauth" else "api_key"), "stored"
    if registry is None:
        return None
    model = next((m for m in registry.models if m.provider == provider), None)
    source = registry.key_source(model) if model is not None else None
    if not source:
        return None
    if source.startswith("environment (") and source.endswith(")"):
        source = source[len("environment ("):-1]
    return "api_key", source


def status_text(provider: str, kind: str, found: tuple[str, str] | None) -> str:
    """pi 1.6's suffix for a row offering ``kind`` (``oauth`` or ``api_key``)."""
    import re

    if found is None:
        return " • not configured"
    their_kind, source = found
    if their_kind != kind:
        return f" • {_kind_label(their_kind, provider)} configured"
    if source in ("", "OAuth", "stored credential"):
        return " ✓ configured"
    if re.fullmatch(r"[A-Z][A-Z0-9_]*(?:, [A-Z][A-Z0-9_]*)*", source):
        return f" ✓ env: {source}"
    return f" ✓ {source}"


def rows(providers: list[str], kind: str, flows: dict, agent_dir: Path | None, registry: Any = None) -> dict[str, str]:
    """{label: provider} in pi 1.6's order for the ``kind`` list."""
    from pi_plugins.signin.common import auth_storage

    store = auth_storage(agent_dir)
    named = [(provider_name(p, flows), p) for p in providers]

    def order(item: tuple[str, str]) -> tuple[int, str]:
        name, provider = item
        rank = PREFERRED.index(provider) if provider in PREFERRED else len(PREFERRED)
        return rank, name.casefold()

    labels: dict[str, str] = {}
    for name, provider in sorted(named, key=order):
        mark = " ✦" if provider in PREFERRED else ""
        label = f"{name}{mark}{status_text(provider, kind, status(provider, store, registry))}"
        labels[label if label not in labels else f"{label} [{provider}]"] = provider
    return labels
