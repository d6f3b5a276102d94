"""pi 1.6's device-code sign-ins: xAI (SuperGrok or X Premium), Kimi Code and Meta (the
Muse subscription). The user enters a code on the provider's page; the flow polls the
token endpoint (:mod:`.device_code`) and stores what auth.json keeps, in pi 1.6's shape
and with its client ids, scopes and messages."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any
from urllib.parse import urlsplit

from pi_plugins.signin.device_code import Poll, poll_device_flow, positive
from pi_plugins.signin.oauth_kit import LoginCallbacks, SignIn, SignInError, now_ms, request

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
_FORM = {"Accept": "application/json", "Content-Type": "application/x-www-form-urlencoded"}


async def _post_form(url: str, form: dict[str, str], headers: dict | None = None) -> tuple[int, dict | None]:
    """(status, the JSON object answered or None when the body is not one)."""
    status, text = await request("POST", url, form=form, headers=headers or _FORM)
    try:
        body = json.loads(text)
    except ValueError:
        return status, None
    return status, body if isinstance(body, dict) else None


def http_url(value: Any) -> str | None:
    """An ``http(s)`` URL a server sent (to show or open), else None: never ``file:`` or
    a custom scheme the platform's opener would launch."""
    if not isinstance(value, str):
        return None
    parts = urlsplit(value)
    return value if parts.scheme in ("http", "https") and parts.netloc else None


# ---------------------------------------------------------------- xAI


class XaiSignIn(SignIn):
    id = "xai"
    name = "xAI (Grok/X subscription)"
    login_label = "Sign in with SuperGrok or X Premium"
    client_id = "b1a00492-073a-47ea-816f-4c329264a828"
    scope = "openid profile email offline_access grok-cli:access api:access"
    device_code_url = "https://auth.x.ai/oauth2/device/code"
    token_url = "https://auth.x.ai/oauth2/token"
    refresh_skew = 5 * 60 * 1000
    default_lifetime = 3600

    async def login(self, callbacks: LoginCallbacks, **options: Any) -> dict:
        status, body = await _post_form(self.device_code_url, {
            "client_id": self.client_id, "scope": self.scope, "referrer": "pi"})
        if body is None:
            raise SignInError(f"xAI OAuth returned invalid JSON (HTTP {status})")
        if not 200 <= status < 300:
            raise self._failure("device authorization", status, body)
        device_code, user_code = self._string(body, "device_code"), self._string(body, "user_code")
        uri = self._https(self._string(body, "verification_uri"))
        complete = body.get("verification_uri_complete")
        if isinstance(complete, str) and complete:
            uri = self._https(complete)
        expires_in = positive(body.get("expires_in"))
        if expires_in is None:
            raise SignInError("Invalid xAI OAuth response field: expires_in")
        callbacks.show_device_code(uri, user_code)

        async def poll() -> Poll:
            status, body = await _post_form(self.token_url, {
                "grant_type": DEVICE_GRANT, "client_id": self.client_id, "device_code": device_code})
            if body is None:
                raise SignInError(f"xAI OAuth returned invalid JSON (HTTP {status})")
            if 200 <= status < 300:
                return Poll("complete", self._credentials(body))
            error = body.get("error")
            if error == "authorization_pending":
                return Poll("pending")
            if error == "slow_down":
                return Poll("slow_down", interval=positive(body.get("interval")))
            if error in ("access_denied", "authorization_denied"):
                return Poll("failed", message="xAI device authorization was denied")
            if error == "expired_token":
                return Poll("failed", message="xAI device code expired")
            return Poll("failed", message=str(self._failure("device token polling", status, body)))

        return await poll_device_flow(poll, callbacks, interval=positive(body.get("interval")),
                                      expires_in=expires_in, wait_first=True)

    async def refresh(self, credentials: dict) -> dict:
        previous = credentials.get("refresh") or ""
        status, body = await _post_form(self.token_url, {
            "grant_type": "refresh_token", "client_id": self.client_id, "refresh_token": previous})
        if body is None:
            raise SignInError(f"xAI OAuth returned invalid JSON (HTTP {status})")
        if not 200 <= status < 300:
            raise self._failure("token refresh", status, body)
        return self._credentials(body, previous)

    def _credentials(self, body: dict, previous_refresh: str | None = None) -> dict:
        access = self._string(body, "access_token")
        # xAI may leave refresh_token out of a refresh when it does not rotate it
        refresh = previous_refresh if body.get("refresh_token") is None and previous_refresh \
            else self._string(body, "refresh_token")
        lifetime = self.default_lifetime if body.get("expires_in") is None else positive(body["expires_in"])
        if lifetime is None:
            raise SignInError("Invalid xAI OAuth response field: expires_in")
        return {"access": access, "refresh": refresh,
                "expires": int(now_ms() + lifetime * 1000 - self.refresh_skew)}

    @staticmethod
    def _string(body: dict, field: str) -> str:
        value = body.get(field)
        if not isinstance(value, str) or not value:
            raise SignInError(f"Invalid xAI OAuth response field: {field}")
        return value

    @staticmethod
    def _https(uri: str) -> str:
        parts = urlsplit(uri)
        if parts.scheme != "https" or not parts.netloc:
            raise SignInError("Untrusted verification URI in xAI OAuth response")
        return uri

    @staticmethod
    def _failure(action: str, status: int, body: dict) -> SignInError:
        detail = ": ".join(v for v in (body.get("error"), body.get("error_description")) if isinstance(v, str) and v)
        return SignInError(f"xAI OAuth {action} failed (HTTP {status})" + (f": {detail}" if detail else ""))


# ---------------------------------------------------------------- Kimi Code


class KimiCodingSignIn(SignIn):
    id = "kimi-coding"
    name = "Kimi Code (subscription)"
    login_label = "Sign in with Kimi Code"
    client_id = "17e5f671-d194-4dfb-9706-5516cb48c098"
    default_host = "https://auth.kimi.com"
    default_interval = 5
    default_expiry = 15 * 60
    refresh_retries = 3
    #: Seconds before the first retry of a refresh (doubled each time, as pi's).
    retry_delay = 1.0

    @classmethod
    def host(cls) -> str:
        """``KIMI_CODE_OAUTH_HOST`` or ``KIMI_OAUTH_HOST`` (pi 1.6's overrides), else Kimi's."""
        override = os.environ.get("KIMI_CODE_OAUTH_HOST") or os.environ.get("KIMI_OAUTH_HOST")
        return (override or cls.default_host).rstrip("/")

    async def login(self, callbacks: LoginCallbacks, **options: Any) -> dict:
        host = self.host()
        status, text = await request("POST", f"{host}/api/oauth/device_authorization",
                                     form={"client_id": self.client_id}, headers=_FORM)
        if not 200 <= status < 300:
            raise SignInError(f"Kimi Code device authorization failed with status {status}"
                              + (f": {text[:300]}" if text else ""))
        body = _object(text)
        uri, complete = http_url(body.get("verification_uri")), http_url(body.get("verification_uri_complete"))
        if not isinstance(body.get("device_code"), str) or not isinstance(body.get("user_code"), str) \
                or not uri or not complete:
            raise SignInError(f"Invalid Kimi Code device authorization response: {text[:300]}")
        callbacks.show_device_code(complete, body["user_code"])

        async def poll() -> Poll:
            status, text = await request("POST", f"{host}/api/oauth/token", headers=_FORM, form={
                "client_id": self.client_id, "device_code": body["device_code"], "grant_type": DEVICE_GRANT})
            if status >= 500:
                return Poll("failed", message=f"Kimi Code device token request failed with status {status}"
                            + (f": {text[:300]}" if text else ""))
            answer = _object(text)
            if 200 <= status < 300 and isinstance(answer.get("access_token"), str):
                try:
                    return Poll("complete", self._credentials(answer, "poll"))
                except SignInError as exc:
                    return Poll("failed", message=str(exc))
            error = answer.get("error")
            if error == "authorization_pending":
                return Poll("pending")
            if error == "slow_down":
                return Poll("slow_down", interval=positive(answer.get("interval")))
            if error == "expired_token":
                return Poll("failed", message="Kimi Code device authorization expired. Please restart login.")
            if error == "access_denied":
                return Poll("failed", message="Kimi Code login was denied.")
            described = answer.get("error_description")
            detail = (f": {error}" + (f": {described}" if isinstance(described, str) else "")) \
                if isinstance(error, str) else ""
            return Poll("failed", message=f"Kimi Code device token request failed (status {status}){detail}")

        return await poll_device_flow(
            poll, callbacks, interval=positive(body.get("interval")) or self.default_interval,
            expires_in=positive(body.get("expires_in")) or self.default_expiry, wait_first=True)

    async def refresh(self, credentials: dict) -> dict:
        """Refreshed, with up to three retries (1 s, 2 s, 4 s) after a network error, a
        429 or a 5xx; a 401, 403 or ``invalid_grant`` ends the sign-in at once."""
        failure = "Kimi Code token refresh failed"
        for attempt in range(self.refresh_retries + 1):
            if attempt:
                await asyncio.sleep(self.retry_delay * 2 ** (attempt - 1))
            try:
                status, text = await request("POST", f"{self.host()}/api/oauth/token", headers=_FORM, form={
                    "client_id": self.client_id, "grant_type": "refresh_token",
                    "refresh_token": credentials.get("refresh") or ""})
            except Exception as exc:  # a network error: retried
                failure = f"Kimi Code token refresh failed: {type(exc).__name__}: {exc}"
                continue
            answer = _object(text)
            if 200 <= status < 300:
                return self._credentials(answer, "refresh")
            if status in (401, 403) or answer.get("error") == "invalid_grant":
                described = answer.get("error_description")
                raise SignInError(f"Kimi Code token refresh unauthorized (status {status})"
                                  + (f": {described}" if isinstance(described, str) else ""))
            failure = f"Kimi Code token refresh failed with status {status}"
            if (status == 429 or status >= 500) and attempt < self.refresh_retries:
                continue
            raise SignInError(f"{failure}: {json.dumps(answer)}")
        raise SignInError(failure)

    @staticmethod
    def _credentials(body: dict, operation: str) -> dict:
        access, refresh, expires_in = body.get("access_token"), body.get("refresh_token"), positive(body.get("expires_in"))
        if not isinstance(access, str) or not access or not isinstance(refresh, str) or not refresh \
                or expires_in is None:
            raise SignInError(f"Kimi Code token {operation} response missing fields: {json.dumps(body)[:300]}")
        return {"access": access, "refresh": refresh, "expires": int(now_ms() + expires_in * 1000)}


def _object(text: str) -> dict:
    try:
        body = json.loads(text)
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


# ---------------------------------------------------------------- Meta


class MetaSignIn(SignIn):
    """Meta splits identity from API access: the device flow's identity token (kept as
    ``refresh``; it cannot itself be renewed) mints a Model API key (``access``, about a
    day), and a refresh mints a new key."""

    id = "meta"
    name = "Meta (Muse subscription)"
    login_label = "Sign in with Meta"
    client_id = "1031625952748946"
    device_authorization_url = "https://auth.meta.com/oidc/device/authorization/"
    device_token_url = "https://auth.meta.com/oidc/device/token/"
    key_mint_url = "https://api.meta.ai/muse-code/key"
    key_lifetime = 24 * 60 * 60 * 1000

    async def login(self, callbacks: LoginCallbacks, **options: Any) -> dict:
        status, body = await _post_form(self.device_authorization_url, {"client_id": self.client_id})
        body = body or {}
        if not 200 <= status < 300:
            raise SignInError(f"Meta device authorization failed with status {status}{_detail(body)}")
        uri = http_url(body.get("verification_uri_complete")) or http_url(body.get("verification_uri"))
        device_code, user_code = body.get("device_code"), body.get("user_code")
        if not isinstance(device_code, str) or not device_code or not isinstance(user_code, str) \
                or not user_code or not uri:
            raise SignInError(f"Invalid Meta device authorization response: {json.dumps(body)[:300]}")
        callbacks.show_device_code(uri, user_code)

        async def poll() -> Poll:
            status, answer = await _post_form(self.device_token_url, {
                "grant_type": DEVICE_GRANT, "device_code": device_code, "client_id": self.client_id})
            answer = answer or {}
            token = answer.get("access_token")
            if 200 <= status < 300 and isinstance(token, str) and token:
                return Poll("complete", token)
            error = answer.get("error")
            if error == "authorization_pending":
                return Poll("pending")
            if error == "slow_down":
                return Poll("slow_down", interval=positive(answer.get("interval")))
            if error == "access_denied":
                return Poll("failed", message="Meta login was denied.")
            if error == "expired_token":
                return Poll("failed", message="Meta device authorization expired. Please restart login.")
            return Poll("failed", message=f"Meta device token request failed with status {status}{_detail(answer)}")

        identity = await poll_device_flow(poll, callbacks, interval=positive(body.get("interval")),
                                          expires_in=positive(body.get("expires_in")), wait_first=True)
        callbacks.progress("Enabling Meta Model API access...")
        return await self._mint(identity)

    async def refresh(self, credentials: dict) -> dict:
        return await self._mint(credentials.get("refresh") or "")

    async def _mint(self, identity: str) -> dict:
        status, text = await request("POST", self.key_mint_url, json_body={}, headers={
            "Accept": "application/json", "Authorization": f"Bearer {identity}",
            "Content-Type": "application/json", "x-api-version": "1.0.0"})
        body = _object(text)
        if status in (401, 403):
            raise SignInError(f"Meta session expired (status {status}). Run `/login meta` to sign in "
                              f"again.{_detail(body)}")
        if not 200 <= status < 300:
            raise SignInError(f"Meta API key mint failed with status {status}{_detail(body)}")
        key = body.get("api_key")
        if not isinstance(key, str) or not key:
            action = http_url(body.get("action_url"))
            raise SignInError("Meta did not issue an API key." + (f" Complete setup at {action}" if action else ""))
        return {"refresh": identity, "access": key, "expires": now_ms() + self.key_lifetime}


def _detail(body: dict) -> str:
    for key in ("error_description", "detail", "message", "error"):
        value = body.get(key)
        if isinstance(value, str) and value.strip():
            return f": {value.strip()}"
    return ""
