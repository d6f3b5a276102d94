"""``pi auth check``, ``pi auth print-api-key`` and ``pi auth print-bearer-token`` (pi
1.6): whether a provider is ready, and its credential for an external client, without a
session. The outcomes, JSON fields and exit codes are pi 1.6's (0 ready, 1 not ready,
2 invalid); credentials go to stdout only when asked for."""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import sys
import time
from typing import Any

import click

_DURATION = re.compile(r"^(\d+)(ms|s|m|h)$")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}


class _Invalid(Exception):
    """The request cannot be answered (pi's ``invalid``, exit code 2)."""


def _error(message: str, code: int = 1) -> None:
    click.echo(f"Error: {message}", err=True)
    sys.exit(code)


async def _registry() -> Any:
    import os

    from pi_core.app.discovery import load_plugins
    from pi_core.app.settings import Settings
    from pi_core.paths import agent_dir
    from pi_plugins.models.registry import ModelRegistry

    cwd, home = os.getcwd(), agent_dir()
    plugins = load_plugins(cwd=cwd, agent_dir=home, settings=Settings.load(cwd, home))
    return await ModelRegistry.from_plugins(plugins, agent_dir=home)


def _provider(provider: str | None, model: str | None) -> str:
    """The provider asked about: ``--provider``, else the one ``--model provider/id`` names
    (a bare model id names none: pi takes the whole of it as the provider)."""
    if provider:
        return provider
    assert model is not None
    return model.split("/", 1)[0]


def _model_of(registry: Any, provider: str) -> Any | None:
    return next((m for m in registry.models if m.provider == provider), None)


def _auth_type(registry: Any, provider: str) -> str:
    entry = registry.auth.get(provider)
    return "oauth" if entry is not None and entry.get("type") == "oauth" else "api_key"


async def _credential(registry: Any, model: Any, refresh: bool) -> str | None:
    """The key or token a request would carry (an expired sign-in refreshed unless
    ``refresh`` is False: then its stored token, as pi's ``--no-refresh``)."""
    if not refresh and _auth_type(registry, model.provider) == "oauth":
        entry = registry.auth.get(model.provider) or {}
        return entry.get("access") if isinstance(entry.get("access"), str) else None
    bearer = registry.bearer_token(model)  # ANTHROPIC_AUTH_TOKEN: pi 1.6 prints it as the key
    if bearer:
        return bearer[1]
    key = registry.api_key(model)
    if inspect.isawaitable(key):
        key = await key
    return key if isinstance(key, str) and key else None


def _need_target(provider: str | None, model: str | None, what: str) -> None:
    if not provider and not model:
        _error(f"{what} --provider <provider> or --model <model>")


@click.command("check")
@click.option("--provider", help="Check this provider.")
@click.option("--model", help="Check the provider of this model (provider/id).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--credentials", is_flag=True, help="Print the credential (or add it to the JSON).")
@click.option("--no-refresh", is_flag=True, help="Do not refresh an expired sign-in.")
def check_command(provider: str | None, model: str | None, as_json: bool, credentials: bool,
                  no_refresh: bool) -> None:
    """Print ready, not_ready or invalid; exit with 0, 1 or 2."""
    _need_target(provider, model, "Auth checks require")
    name = _provider(provider, model)
    result: dict[str, Any] = {"status": "ready", "provider": name}
    code = 0
    try:
        bare_model = bool(model and not provider and "/" not in model)
        result.update(asyncio.run(_check(name, bare_model, credentials, not no_refresh)))
    except _Invalid:
        result.update(status="invalid", reason="invalid_state")
    if result["status"] != "ready":
        code = 1 if result["status"] == "not_ready" else 2
    if as_json:
        click.echo(json.dumps(result, separators=(",", ":")))
    elif credentials and code == 0:
        click.echo(result["credentials"])
    else:
        click.echo(result["status"])
    sys.exit(code)


async def _check(provider: str, bare_model: bool, with_secret: bool, refresh: bool) -> dict:
    if bare_model:
        raise _Invalid
    registry = await _registry()
    model = _model_of(registry, provider)
    if model is None:
        return {"status": "not_ready", "reason": "provider_not_found"}
    if registry.key_source(model) is None:
        return {"status": "not_ready", "reason": "credentials_not_configured"}
    try:
        secret = await _credential(registry, model, refresh)
    except Exception:  # a refused refresh: the sign-in is kept for a later try
        return {"status": "not_ready", "reason": "credentials_not_configured"}
    if secret is None:
        return {"status": "not_ready", "reason": "credentials_not_configured"}
    found = {"authType": _auth_type(registry, provider)}
    return {**found, "credentials": secret} if with_secret else found


@click.command("print-api-key")
@click.option("--provider", help="The provider whose key to print.")
@click.option("--model", help="The model (provider/id) whose provider's key to print.")
def print_api_key_command(provider: str | None, model: str | None) -> None:
    """Print the resolved API key (a secret, on stdout)."""
    _need_target(provider, model, "Credential printing requires")
    name = _provider(provider, model)

    async def run() -> str:
        registry = await _registry()
        found = _model_of(registry, name)
        if found is None or registry.key_source(found) is None:
            _error("No usable API key is configured")
        if _auth_type(registry, name) == "oauth" and registry.key_source(found) == "auth.json":
            _error(f'Provider "{name}" is configured with OAuth, not an API key')
        key = await _credential(registry, found, refresh=True)
        if key is None:
            _error("No usable API key is configured")
        assert key is not None
        return key

    click.echo(asyncio.run(run()))


def parse_duration_ms(text: str) -> int:
    """``30m``, ``1h``, ``90s``, ``500ms`` in milliseconds; ValueError otherwise."""
    match = _DURATION.match(text.strip())
    if not match:
        raise ValueError(text)
    return int(match.group(1)) * _UNIT_MS[match.group(2)]


@click.command("print-bearer-token")
@click.option("--provider", help="The provider whose sign-in token to print.")
@click.option("--model", help="The model (provider/id) whose provider's token to print.")
@click.option("--min-expiry", metavar="DURATION", help="Least lifetime the token must have left, e.g. 30m or 1h.")
def print_bearer_token_command(provider: str | None, model: str | None, min_expiry: str | None) -> None:
    """Print a sign-in's bearer token, refreshed if expired (a secret, on stdout)."""
    _need_target(provider, model, "Credential printing requires")
    least = 0
    if min_expiry is not None:
        try:
            least = parse_duration_ms(min_expiry)
        except ValueError:
            _error("--min-expiry must use a duration such as 30m or 1h")
    name = _provider(provider, model)

    async def run() -> str:
        registry = await _registry()
        entry = registry.auth.get(name)
        found = _model_of(registry, name)
        if entry is None or entry.get("type") != "oauth" or found is None:
            _error(f'Provider "{name}" is not configured with an OAuth bearer token')
        try:
            token = await _credential(registry, found, refresh=True)
        except Exception:
            token = None
        expires = (registry.auth.get(name) or {}).get("expires")
        lasts = isinstance(expires, (int, float)) and expires - time.time() * 1000 >= least
        if token is None or not lasts:
            _error("Failed to resolve credential")
        assert token is not None
        return token

    click.echo(asyncio.run(run()))


COMMANDS = (check_command, print_api_key_command, print_bearer_token_command)
