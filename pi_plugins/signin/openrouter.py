"""Sign in with OpenRouter (pi 1.6): OpenRouter trades the authorization code for a
permanent API key of the user's, not a token pair, so auth.json keeps the key as
``access`` with no refresh token and an expiry that never comes. The browser comes back
to a one-time page on a free port under a random path (OpenRouter sends no state)."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from pi_plugins.providers.origins import rewrite
from pi_plugins.signin.oauth_kit import (
    CallbackServer,
    LoginCallbacks,
    SignIn,
    SignInError,
    code_from_browser_or_paste,
    pkce,
    request,
)

#: JavaScript's Number.MAX_SAFE_INTEGER: the "never expires" pi 1.6 stores.
NEVER = 9007199254740991


class OpenRouterSignIn(SignIn):
    id = "openrouter"
    name = "OpenRouter OAuth"
    login_label = "Sign in with OpenRouter"
    uses_callback_server = True
    authorize_url = "https://openrouter.ai/auth"
    keys_url = "https://openrouter.ai/api/v1/auth/keys"
    #: Seconds the whole sign-in may take (pi's five minutes).
    login_timeout = 5 * 60.0

    async def login(self, callbacks: LoginCallbacks, **options: Any) -> dict:
        verifier, challenge = pkce()
        path = f"/oauth/callback/{uuid.uuid4()}"
        server = CallbackServer(0, path, None, "OpenRouter", strict=True)
        host = str(server.server.server_address[0]) if server.server is not None else "127.0.0.1"
        redirect = f"http://{host}:{server.port}{path}"
        try:
            callbacks.progress(f"Listening for OpenRouter OAuth callback on {redirect}")
            query = urlencode({"callback_url": redirect, "code_challenge": challenge,
                               "code_challenge_method": "S256"})
            callbacks.on_auth(rewrite(f"{self.authorize_url}?{query}"),
                              "Complete sign-in in your browser. If the browser is on another machine, "
                              "paste the final redirect URL here.")
            try:
                code = await asyncio.wait_for(code_from_browser_or_paste(
                    server, callbacks, None,
                    "Complete sign-in in your browser, or paste the authorization code / redirect URL here:",
                    redirect), self.login_timeout)
            except TimeoutError:
                raise SignInError("OpenRouter sign-in timed out") from None
        finally:
            server.close()
        callbacks.progress("Exchanging authorization code for an API key...")
        return await self._key(code, verifier)

    async def _key(self, code: str, verifier: str) -> dict:
        code = _code_of(code)
        status, text = await request("POST", self.keys_url, json_body={
            "code": code, "code_verifier": verifier, "code_challenge_method": "S256"},
            headers={"accept": "application/json", "content-type": "application/json"})
        try:
            body = json.loads(text)
        except ValueError:
            if 200 <= status < 300:
                raise SignInError("OpenRouter OAuth returned invalid JSON") from None
            body = {}
        body = body if isinstance(body, dict) else {}
        if not 200 <= status < 300:
            detail = _detail(body)
            raise SignInError(f"OpenRouter OAuth key exchange failed (HTTP {status})"
                              + (f": {detail}" if detail else ""))
        key = body.get("key")
        if not isinstance(key, str) or not key:
            raise SignInError('OpenRouter OAuth response carries no "key"')
        return {"access": key, "refresh": "", "expires": NEVER}

    async def refresh(self, credentials: dict) -> dict:
        """Nothing to renew: the key is the user's until they revoke it."""
        return {k: v for k, v in credentials.items() if k != "type"}


def _code_of(text: str) -> str:
    """The code in a pasted redirect URL or query string, or the pasted code itself."""
    value = text.strip()
    parts = urlsplit(value)
    if parts.scheme and parts.netloc:
        value = (parse_qs(parts.query).get("code") or [""])[0]
    elif "code=" in value:
        value = (parse_qs(value).get("code") or [""])[0]
    if not value:
        raise SignInError("Missing authorization code")
    return value


def _detail(body: dict) -> str | None:
    for key in ("error_description", "message", "error"):
        if isinstance(body.get(key), str):
            return body[key]
    error = body.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"]
    return None
