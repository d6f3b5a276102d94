"""Sign in to Radius (pi 1.6's gateway by Earendil Works), in the browser or by device
code. The OAuth endpoints live on the gateway (``PI_RADIUS_GATEWAY``, else
radius.pi.dev; a models.json gateway, ``"oauth": "radius"``, signs in at its own and
under its own provider name, as pi 1.6 makes each such provider a Radius of its own);
only the browser's authorization page is discovered (``/v1/oauth``). auth.json keeps
``access``, ``refresh``, ``expires`` and the granted ``scope``."""

from __future__ import annotations

import json
import os
import re
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from pi_plugins.providers.origins import rewrite
from pi_plugins.signin.device_code import Poll, poll_device_flow, positive
from pi_plugins.signin.device_signins import http_url
from pi_plugins.signin.oauth_kit import (
    CallbackServer,
    LoginCallbacks,
    SignIn,
    SignInError,
    now_ms,
    pkce,
    request,
)

DEFAULT_GATEWAY = "https://radius.pi.dev"
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
_FORM = {"accept": "application/json", "content-type": "application/x-www-form-urlencoded"}


def gateway(given: str | None = None) -> str:
    """The gateway's origin: ``given``, else ``PI_RADIUS_GATEWAY``, else radius.pi.dev,
    with a scheme and no trailing slash (pi's normalizeRadiusGatewayUrl)."""
    value = given or os.environ.get("PI_RADIUS_GATEWAY") or DEFAULT_GATEWAY
    value = value if re.match(r"^https?://", value, re.IGNORECASE) else f"https://{value}"
    return value.rstrip("/")


def gateway_sign_ins(agent_dir: Path) -> dict[str, RadiusSignIn]:
    """A sign-in for each Radius gateway of models.json, by its provider name: its
    ``name`` (else the provider's id) and its ``baseUrl`` without ``/v1``, as pi 1.6's."""
    from pi_plugins.providers.catalogue_refresh import radius_gateway_configs

    return {name: RadiusSignIn(name, label, url)
            for name, (label, url) in radius_gateway_configs(agent_dir).items()}


class OAuthResponseError(SignInError):
    """The token endpoint's error answer; :attr:`oauth_error` is its ``error`` field."""

    def __init__(self, status: int, text: str, message: str):
        error = description = None
        try:
            data = json.loads(text) if text else {}
            error = data.get("error") if isinstance(data.get("error"), str) else None
            description = data.get("error_description") if isinstance(data.get("error_description"), str) else None
        except (ValueError, AttributeError):
            description = text[:300]
        detail = (f"{error}: {description}" if description else error) if error else (description or str(status))
        super().__init__(f"{message}: {detail}")
        self.status, self.oauth_error = status, error


class RadiusSignIn(SignIn):
    id = "radius"
    name = "Radius"
    uses_callback_server = False  # the browser's callback only; nothing is pasted
    client_id = "pi-gateway"
    scope = "gateway offline_access"
    callback_port = 1456
    callback_path = "/oauth/callback"
    redirect_uri = f"http://127.0.0.1:{callback_port}{callback_path}"
    expiry_skew = 60_000
    methods = [("browser", "Sign in with browser (recommended)"),
               ("device-code", "Sign in with device code (when signing in from another device)")]

    def __init__(self, provider: str = "radius", name: str = "Radius", origin: str | None = None):
        self.id, self.name, self._origin = provider, name, origin

    def gateway(self) -> str:
        """This sign-in's gateway: its own (a models.json gateway), else the default one."""
        return gateway(self._origin)

    async def login(self, callbacks: LoginCallbacks, **options: Any) -> dict:
        method = await callbacks.choose(f"Sign in to {self.name}:", self.methods)
        if method == "device-code":
            return await self._with_device_code(callbacks)
        if method == "browser":
            return await self._in_browser(callbacks)
        raise SignInError(f"Unknown {self.name} sign-in method: {method}")

    async def _in_browser(self, callbacks: LoginCallbacks) -> dict:
        origin = self.gateway()
        status, text = await request("GET", f"{origin}/v1/oauth", headers={"accept": "application/json"})
        if not 200 <= status < 300:
            raise SignInError(f"Could not load Radius OAuth config from {origin}: {status} {text[:300]}")
        try:
            endpoint = http_url(json.loads(text).get("authorizationEndpoint"))
        except (ValueError, AttributeError):
            endpoint = None
        if endpoint is None:
            raise SignInError(f"Invalid Radius OAuth config from {origin}")
        verifier, challenge = pkce()
        state = str(uuid.uuid4())
        query = urlencode({
            "response_type": "code", "client_id": self.client_id, "redirect_uri": self.redirect_uri,
            "scope": self.scope, "code_challenge": challenge, "code_challenge_method": "S256",
            "handoff": "url", "state": state})
        server = CallbackServer(self.callback_port, self.callback_path, state, "Radius",
                                host="127.0.0.1", strict=True)
        try:
            callbacks.progress(f"Listening for OAuth callback on {self.redirect_uri}")
            separator = "&" if "?" in endpoint else "?"
            callbacks.on_auth(rewrite(f"{endpoint}{separator}{query}"), "Continue in your browser.")
            code = await server.result
        finally:
            server.close()
        if not code:
            raise SignInError("OAuth callback did not complete.")
        return await self._token(origin, {
            "grant_type": "authorization_code", "client_id": self.client_id,
            "redirect_uri": self.redirect_uri, "code": code, "code_verifier": verifier})

    async def _with_device_code(self, callbacks: LoginCallbacks) -> dict:
        origin = self.gateway()
        status, text = await request("POST", f"{origin}/v1/oauth/device", headers=_FORM,
                                     form={"client_id": self.client_id, "scope": self.scope})
        if not 200 <= status < 300:
            raise OAuthResponseError(status, text, "Radius OAuth device authorization failed")
        try:
            device = json.loads(text)
        except ValueError:
            device = None
        if not isinstance(device, dict) or not all(device.get(k) for k in
                                                   ("device_code", "user_code", "verification_uri", "expires_in")):
            raise SignInError("Radius OAuth device authorization response is missing required fields")
        uri = http_url(device["verification_uri"])
        if uri is None:
            raise SignInError("Untrusted verification_uri in Radius OAuth device authorization response")
        callbacks.show_device_code(uri, device["user_code"])

        async def poll() -> Poll:
            try:
                return Poll("complete", await self._token(origin, {
                    "grant_type": DEVICE_GRANT, "client_id": self.client_id,
                    "device_code": device["device_code"]}))
            except OAuthResponseError as exc:
                if exc.oauth_error == "authorization_pending":
                    return Poll("pending")
                if exc.oauth_error == "slow_down":
                    return Poll("slow_down")
                if exc.oauth_error == "expired_token":
                    return Poll("failed", message="Device authorization expired.")
                if exc.oauth_error == "access_denied":
                    return Poll("failed", message="Device authorization was denied.")
                raise

        return await poll_device_flow(poll, callbacks, interval=positive(device.get("interval")),
                                      expires_in=positive(device.get("expires_in")))

    async def refresh(self, credentials: dict) -> dict:
        return await self._token(self.gateway(), {"grant_type": "refresh_token", "client_id": self.client_id,
                                             "refresh_token": credentials.get("refresh") or ""})

    async def _token(self, origin: str, form: dict[str, str]) -> dict:
        status, text = await request("POST", f"{origin}/v1/oauth/token", headers=_FORM, form=form)
        if not 200 <= status < 300:
            raise OAuthResponseError(status, text, "Radius OAuth token request failed")
        try:
            data = json.loads(text)
            access, refresh, lifetime = data["access_token"], data["refresh_token"], positive(data["expires_in"])
        except (ValueError, KeyError, TypeError):
            raise SignInError("Radius OAuth token response lacks access_token, refresh_token or expires_in") from None
        if not isinstance(access, str) or not isinstance(refresh, str) or lifetime is None:
            raise SignInError("Radius OAuth token response lacks access_token, refresh_token or expires_in")
        credentials = {"access": access, "refresh": refresh,
                       "expires": int(now_ms() + lifetime * 1000 - self.expiry_skew)}
        if isinstance(data.get("scope"), str):
            credentials["scope"] = data["scope"]
        return credentials
