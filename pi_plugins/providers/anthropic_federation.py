"""Anthropic workload identity federation, as pi 1.6 has it from the Anthropic SDK: with
no key or bearer token, ``ANTHROPIC_FEDERATION_RULE_ID``, ``ANTHROPIC_ORGANIZATION_ID``
and ``ANTHROPIC_IDENTITY_TOKEN_FILE`` make the ``anthropic`` provider trade the identity
token (the file, read again at each exchange) for a short-lived access token at
``<baseUrl>/v1/oauth/token`` (RFC 7523 jwt-bearer), sent as ``Authorization: Bearer``
with ``oauth-2025-04-20`` added to ``anthropic-beta``. ``ANTHROPIC_SERVICE_ACCOUNT_ID``
and ``ANTHROPIC_WORKSPACE_ID`` go into the exchange when set. A token is kept until two
minutes before it expires, per base URL and settings, as the SDK's token cache keeps it."""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import urlsplit

from pi_core.protocol.model import Model
from pi_core.protocol.provider import StreamOptions
from pi_plugins.providers.http import env_value, http_client, join_url

#: The variables that must all be set, and those passed through when set (pi-ai 1.6's).
REQUIRED = ("ANTHROPIC_FEDERATION_RULE_ID", "ANTHROPIC_ORGANIZATION_ID", "ANTHROPIC_IDENTITY_TOKEN_FILE")
OPTIONAL = ("ANTHROPIC_SERVICE_ACCOUNT_ID", "ANTHROPIC_WORKSPACE_ID")
TOKEN_PATH = "/v1/oauth/token"
GRANT_TYPE = "urn:ietf:params:oauth:grant-type:jwt-bearer"
#: Sent on API requests with the minted token, and with the federation beta on the exchange.
OAUTH_BETA = "oauth-2025-04-20"
FEDERATION_BETA = "oidc-federation-2026-04-01"
#: Seconds before expiry a token is exchanged again (the SDK's advisory refresh window).
REFRESH_BEFORE = 120
#: The token endpoint's limit on the identity token (the SDK checks it before sending).
MAX_ASSERTION = 16 * 1024


class FederationError(Exception):
    """The exchange could not be made or was refused (the SDK's words)."""


def settings(model: Model, options: StreamOptions) -> dict[str, str] | None:
    """The federation variables for a request to ``model``, or None: only the
    ``anthropic`` provider (the exchange is Anthropic's endpoint), only when no key or
    auth header was resolved, and only with all three required variables."""
    if model.provider != "anthropic" or options.api_key:
        return None
    if any(name.lower() in ("authorization", "x-api-key") for name in options.headers or {}):
        return None
    found = {name: env_value(options, name) for name in (*REQUIRED, *OPTIONAL)}
    if not all(found[name] for name in REQUIRED):
        return None
    return {name: value for name, value in found.items() if value}


def _secure(base_url: str) -> None:
    """The identity token goes over https only, or plain http to this machine (the SDK's rule)."""
    parts = urlsplit(base_url)
    host = (parts.hostname or "").lower()
    if parts.scheme == "https" or (parts.scheme == "http" and host in ("localhost", "127.0.0.1", "::1")):
        return
    raise FederationError(f'Refusing to send credential over non-https token endpoint "{base_url}"')


def _identity_token(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            token = handle.read().strip()
    except OSError as exc:
        raise FederationError(f"Failed to read identity token file at {path}: {exc}") from exc
    if not token:
        raise FederationError(f"Identity token file at {path} is empty")
    if len(token) > MAX_ASSERTION:
        raise FederationError(f"Identity token is {-(-len(token) // 1024)} KiB, exceeds the 16 KiB assertion limit")
    return token


def exchange_body(found: dict[str, str]) -> dict[str, str]:
    """The jwt-bearer grant, fields in the SDK's order."""
    body = {"grant_type": GRANT_TYPE, "assertion": _identity_token(found["ANTHROPIC_IDENTITY_TOKEN_FILE"]),
            "federation_rule_id": found["ANTHROPIC_FEDERATION_RULE_ID"],
            "organization_id": found["ANTHROPIC_ORGANIZATION_ID"]}
    if found.get("ANTHROPIC_SERVICE_ACCOUNT_ID"):
        body["service_account_id"] = found["ANTHROPIC_SERVICE_ACCOUNT_ID"]
    if found.get("ANTHROPIC_WORKSPACE_ID"):
        body["workspace_id"] = found["ANTHROPIC_WORKSPACE_ID"]
    return body


async def _exchange(base_url: str, found: dict[str, str]) -> tuple[str, float]:
    """(access token, when it expires) from the token endpoint."""
    _secure(base_url)
    url = join_url(base_url, TOKEN_PATH)
    content = json.dumps(exchange_body(found)).encode()
    headers = {"content-type": "application/json", "anthropic-beta": f"{OAUTH_BETA},{FEDERATION_BETA}"}
    try:
        client = await http_client(url)
        response = await client.send("POST", url, headers=headers, content=content)
        text = b"".join([chunk async for chunk in response.aiter_bytes()]).decode("utf-8", "replace")
    except Exception as exc:
        raise FederationError(f"Failed to reach token endpoint {url}: {exc}") from exc
    if response.status_code >= 300:
        hint = ""
        if response.status_code == 401:
            hint = (" Ensure your federation rule matches your identity token. "
                    + ("" if found.get("ANTHROPIC_WORKSPACE_ID") else
                       "If your federation rule is scoped to multiple workspaces, set the "
                       "ANTHROPIC_WORKSPACE_ID environment variable. ")
                    + "View your authentication events in the Workload identity page of Claude Console for more details.")
        raise FederationError(f"Token exchange failed with status {response.status_code}: {text}{hint}")
    try:
        data = json.loads(text)
    except ValueError:
        raise FederationError(f"Token endpoint returned non-JSON response (status {response.status_code})") from None
    if not isinstance(data, dict) or not data.get("access_token"):
        raise FederationError("Token endpoint response missing access_token")
    if data.get("token_type") and str(data["token_type"]).lower() != "bearer":
        raise FederationError(f'Token endpoint response: unsupported token_type "{data["token_type"]}" (want Bearer)')
    try:
        expires_in = float(data["expires_in"])
    except (KeyError, TypeError, ValueError):
        raise FederationError("Token endpoint response missing required fields") from None
    return str(data["access_token"]), time.time() + expires_in


class Tokens:
    """Minted tokens, one per base URL and federation settings, shared by every request."""

    def __init__(self) -> None:
        self._held: dict[str, tuple[str, float]] = {}

    @staticmethod
    def _key(model: Model, found: dict[str, str]) -> str:
        return json.dumps([model.base_url, found], sort_keys=True)

    async def ensure(self, model: Model, options: StreamOptions) -> None:
        """Exchange when a request to ``model`` federates and no fresh token is held
        (raises :class:`FederationError`)."""
        found = settings(model, options)
        if found is None:
            return
        key = self._key(model, found)
        held = self._held.get(key)
        if held is None or held[1] - time.time() <= REFRESH_BEFORE:
            self._held[key] = await _exchange(model.base_url, found)

    def headers(self, model: Model, options: StreamOptions, headers: dict[str, Any]) -> None:
        """Put the held token and the OAuth beta on a request's headers (after the model's
        and the caller's, as the SDK adds them last)."""
        found = settings(model, options)
        held = self._held.get(self._key(model, found)) if found else None
        if held is None:
            return
        headers["authorization"] = f"Bearer {held[0]}"
        betas = [b.strip() for b in str(headers.get("anthropic-beta") or "").split(",") if b.strip()]
        if OAUTH_BETA not in betas:
            headers["anthropic-beta"] = ",".join((*betas, OAUTH_BETA))


TOKENS = Tokens()
