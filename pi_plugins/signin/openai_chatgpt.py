"""Sign in with ChatGPT on ``openai`` (pi 1.6): the ChatGPT subscription's own token
used on api.openai.com's Responses API, beside ``OPENAI_API_KEY``. Each sign-in
registers a new public client (``dynamic_agent_client``); OpenAI names the issued client
id in the callback, and that id refreshes the token later. The installation is named by
its device id (``deviceId`` in the global settings.json, as pi 1.6 keeps it)."""

from __future__ import annotations

import asyncio
import re
import secrets
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from pi_plugins.providers.origins import rewrite
from pi_plugins.signin.oauth_kit import (
    CallbackServer,
    LoginCallbacks,
    SignIn,
    SignInError,
    now_ms,
    parse_json,
    pkce,
    request,
)

_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.IGNORECASE)


class OpenAIChatGPTSignIn(SignIn):
    id = "openai"
    name = "OpenAI (ChatGPT subscription)"
    login_label = "Sign in with ChatGPT"
    uses_callback_server = True
    dynamic_client_id = "dynamic_agent_client"
    agent_name_hint = "Pi"
    authorize_url = "https://auth.openai.com/api/accounts/authorize"
    token_url = "https://auth.openai.com/api/accounts/oauth/token"
    resource = "https://api.openai.com/v1"
    callback_port = 1455
    callback_path = "/auth/callback"
    redirect_uri = f"http://127.0.0.1:{callback_port}{callback_path}"
    direct_scope = "chatgpt.tokens.use.direct"
    scope = f"openid profile email offline_access resource.invoke {direct_scope}"
    #: Refresh this long before the real expiry (ms).
    expiry_margin = 3 * 60 * 1000

    async def login(self, callbacks: LoginCallbacks, *, device_id: str | None = None, **options: Any) -> dict:
        if not device_id or not _UUID.match(device_id):
            raise SignInError("Sign in with ChatGPT requires a device ID (UUID) for this installation")
        verifier, challenge = pkce()
        state, nonce = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        try:
            server = CallbackServer(self.callback_port, self.callback_path, state, "ChatGPT", strict=True)
        except OSError:
            raise SignInError(f"Port {self.callback_port} is in use, probably by an unfinished login in "
                              "another pi session or by the Codex CLI. Cancel that login and try again.") from None
        query = urlencode({
            "client_id": self.dynamic_client_id, "agent_name_hint": self.agent_name_hint,
            "ext_agent_host_id": f"urn:uuid:{device_id.lower()}", "response_type": "code",
            "redirect_uri": self.redirect_uri, "resource": self.resource, "scope": self.scope,
            "state": state, "code_challenge": challenge, "code_challenge_method": "S256", "nonce": nonce,
        })
        try:
            callbacks.on_auth(rewrite(f"{self.authorize_url}?{query}"),
                              "Complete sign-in in your browser. If the callback does not complete, "
                              "paste the final redirect URL here.")
            code, client_id = await self._authorization(server, callbacks, state)
        finally:
            server.close()
        callbacks.progress("Exchanging authorization code for tokens...")
        token = await self._token({
            "grant_type": "authorization_code", "client_id": client_id, "code": code,
            "code_verifier": verifier, "redirect_uri": self.redirect_uri, "resource": self.resource})
        if not isinstance(token.get("id_token"), str) or not token["id_token"].strip():
            raise SignInError("OpenAI OAuth token response did not contain an ID token")
        return self._credentials(token, client_id)

    async def _authorization(self, server: CallbackServer, callbacks: LoginCallbacks,
                             state: str) -> tuple[str, str]:
        """(code, issued client id): from the browser's callback or the pasted redirect URL."""
        if callbacks.manual_code is None:
            code = await server.result
            return code, self._issued_client(server.query)
        manual = asyncio.ensure_future(callbacks.manual_code())
        try:
            await asyncio.wait({server.result, manual}, return_when=asyncio.FIRST_COMPLETED)
            if server.result.done() and server.result.result():
                return server.result.result(), self._issued_client(server.query)
            return self._from_pasted(await manual, state)
        finally:
            manual.cancel()

    def _from_pasted(self, text: str, state: str) -> tuple[str, str]:
        url = urlsplit(text.strip())
        if not (url.scheme and url.netloc):
            raise SignInError("Paste the full callback URL from the browser")
        expected = urlsplit(self.redirect_uri)
        if (url.scheme, url.netloc, url.path) != (expected.scheme, expected.netloc, expected.path):
            raise SignInError(f"The pasted callback URL must start with {self.redirect_uri}")
        query = {k: v[0] for k, v in parse_qs(url.query).items() if v}
        if query.get("error"):
            raise SignInError(f"ChatGPT authorization failed: {query['error']}")
        if not query.get("code"):
            raise SignInError("Missing authorization code")
        if not query.get("state"):
            raise SignInError("Missing OAuth state")
        if query["state"] != state:
            raise SignInError("OAuth state mismatch")
        return query["code"], self._issued_client(query)

    @staticmethod
    def _issued_client(query: dict[str, str]) -> str:
        client = (query.get("client_id") or "").strip()
        if not client:
            raise SignInError("OpenAI OAuth registration callback did not contain an issued client ID")
        return client

    async def refresh(self, credentials: dict) -> dict:
        client = credentials.get("clientId")
        if not isinstance(client, str) or not client.strip():
            raise SignInError("Stored OpenAI OAuth credential does not contain an issued client ID; "
                              "reconnect ChatGPT")
        token = await self._token({"grant_type": "refresh_token", "client_id": client,
                                   "refresh_token": credentials.get("refresh") or "",
                                   "resource": self.resource})
        return self._credentials(token, client)

    async def _token(self, form: dict[str, str]) -> dict:
        status, text = await request("POST", self.token_url, form=form, headers={
            "accept": "application/json", "content-type": "application/x-www-form-urlencoded"})
        if not 200 <= status < 300:
            raise SignInError(f"OpenAI OAuth token request failed ({status}): {text[:300]}")
        try:
            return parse_json(text, "OpenAI OAuth token request")
        except SignInError:
            raise SignInError("OpenAI OAuth token response must be an object") from None

    def _credentials(self, token: dict, client_id: str) -> dict:
        fields = {}
        for field in ("access_token", "refresh_token", "scope"):
            value = token.get(field)
            if not isinstance(value, str) or not value.strip():
                raise SignInError(f"OpenAI OAuth token response has invalid {field}")
            fields[field] = value
        expires_in = token.get("expires_in")
        if isinstance(expires_in, bool) or not isinstance(expires_in, (int, float)) or expires_in <= 0:
            raise SignInError("OpenAI OAuth token response has invalid expires_in")
        scopes = fields["scope"].split()
        if self.direct_scope not in scopes:
            raise SignInError(f"OpenAI OAuth grant did not include {self.direct_scope}")
        return {"access": fields["access_token"], "refresh": fields["refresh_token"],
                "expires": int(now_ms() + expires_in * 1000 - self.expiry_margin),
                "clientId": client_id, "scopes": scopes}
