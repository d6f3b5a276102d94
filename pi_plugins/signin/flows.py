"""The subscription sign-ins pi 0.73.1 already had: Claude Pro/Max (``anthropic``),
ChatGPT Plus/Pro (``openai-codex``, in pi 1.6 also by device code) and GitHub Copilot
(``github-copilot``), with pi-ai's flows, client ids, scopes, redirect URIs and token
endpoints, so a sign-in here serves pi too (and pi's here); and :data:`SIGN_INS`, every
sign-in by provider, pi 1.6's newer ones (:mod:`.openai_chatgpt`, :mod:`.device_signins`,
:mod:`.openrouter`, :mod:`.radius`) included.

Each :class:`SignIn` has ``login(callbacks)`` (the whole flow: the authorize link or
device code, the code from the local callback server or pasted by the user, the token
exchange) and ``refresh(credentials)``; both return the credentials auth.json keeps
beside ``"type": "oauth"``: ``refresh``, ``access``, ``expires`` (Unix ms) and what the
provider needs besides (``accountId``, ``enterpriseUrl``). Every URL goes through
``PI_PROVIDER_ORIGINS`` (:mod:`.oauth_kit`), so tests play the other side on 127.0.0.1.
Storage and refresh-under-lock are :mod:`pi_plugins.models.auth`'s, which gets these flows
through the ``register_sign_ins`` hook (:mod:`pi_plugins.signin`).
"""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode, urlsplit

from pi_plugins.providers.origins import rewrite
from pi_plugins.signin.device_code import Poll, poll_device_flow
from pi_plugins.signin.oauth_kit import (
    CallbackServer,
    LoginCallbacks,
    LoginCancelled,
    SignIn,
    SignInError,
    code_from_browser_or_paste,
    now_ms,
    parse_authorization_input,
    parse_json,
    pkce,
    request,
)

__all__ = ["SIGN_INS", "LoginCallbacks", "LoginCancelled", "SignIn", "SignInError",
           "parse_authorization_input", "pkce"]


class AnthropicSignIn(SignIn):
    """Claude Pro/Max: authorization code with PKCE; the state is the verifier."""

    id = "anthropic"
    name = "Anthropic (Claude Pro/Max)"
    uses_callback_server = True
    client_id = base64.b64decode("OWQxYzI1MGEtZTYxYi00NGQ5LTg4ZWQtNTk0NGQxOTYyZjVl").decode()
    authorize_url = "https://claude.ai/oauth/authorize"
    token_url = "https://platform.claude.com/v1/oauth/token"
    callback_port = 53692
    callback_path = "/callback"
    redirect_uri = f"http://localhost:{callback_port}{callback_path}"
    scopes = ("org:create_api_key user:profile user:inference user:sessions:claude_code "
              "user:mcp_servers user:file_upload")

    #: pi 1.6's copy-code sign-in: Anthropic's page shows ``code#state`` to paste.
    copy_code_redirect_uri = "https://platform.claude.com/oauth/code/callback"

    async def login(self, callbacks: LoginCallbacks, **options: Any) -> dict:
        method = await callbacks.choose("Select Anthropic login method:", [
            ("browser", "Browser login (default)"), ("copy_code", "Copy code login (headless)")])
        if method == "copy_code":
            return await self._copy_code(callbacks)
        verifier, challenge = pkce()
        server = CallbackServer(self.callback_port, self.callback_path, verifier, "Anthropic")
        try:
            query = urlencode({
                "code": "true", "client_id": self.client_id, "response_type": "code",
                "redirect_uri": self.redirect_uri, "scope": self.scopes,
                "code_challenge": challenge, "code_challenge_method": "S256", "state": verifier,
            })
            callbacks.on_auth(rewrite(f"{self.authorize_url}?{query}"),
                              "Complete login in your browser. If the browser is on another "
                              "machine, paste the final redirect URL here.")
            code = await code_from_browser_or_paste(
                server, callbacks, verifier, "Paste the authorization code or full redirect URL:",
                self.redirect_uri)
        finally:
            server.close()
        callbacks.progress("Exchanging authorization code for tokens...")
        return await self._token({
            "grant_type": "authorization_code", "client_id": self.client_id, "code": code,
            "state": verifier, "redirect_uri": self.redirect_uri, "code_verifier": verifier,
        }, "Token exchange")

    async def _copy_code(self, callbacks: LoginCallbacks) -> dict:
        """For a browser on another machine: Anthropic shows the code, the user pastes it."""
        verifier, challenge = pkce()
        query = urlencode({
            "code": "true", "client_id": self.client_id, "response_type": "code",
            "redirect_uri": self.copy_code_redirect_uri, "scope": self.scopes,
            "code_challenge": challenge, "code_challenge_method": "S256", "state": verifier,
        })
        code, state = parse_authorization_input(await callbacks.ask_pasted_code(
            rewrite(f"{self.authorize_url}?{query}"),
            "Complete login in your browser, then copy the code Anthropic shows and paste it here.",
            "Paste the code Anthropic shows after you sign in:", "code#state"))
        if state and state != verifier:
            raise SignInError("OAuth state mismatch")
        if not code:
            raise SignInError("Missing authorization code")
        callbacks.progress("Exchanging authorization code for tokens...")
        return await self._token({
            "grant_type": "authorization_code", "client_id": self.client_id, "code": code,
            "state": state or verifier, "redirect_uri": self.copy_code_redirect_uri, "code_verifier": verifier,
        }, "Token exchange")

    async def refresh(self, credentials: dict) -> dict:
        return await self._token({"grant_type": "refresh_token", "client_id": self.client_id,
                                  "refresh_token": credentials.get("refresh")}, "Anthropic token refresh")

    async def _token(self, body: dict, what: str) -> dict:
        status, text = await request("POST", self.token_url, json_body=body, headers={
            "Content-Type": "application/json", "Accept": "application/json"})
        if not 200 <= status < 300:
            raise SignInError(f"{what} failed (HTTP {status}): {text[:300]}")
        data = parse_json(text, what)
        try:
            return {"refresh": data["refresh_token"], "access": data["access_token"],
                    "expires": now_ms() + int(data["expires_in"]) * 1000 - 5 * 60 * 1000}
        except (KeyError, TypeError, ValueError):
            raise SignInError(f"{what} response lacks access_token, refresh_token or expires_in") from None


class OpenAICodexSignIn(SignIn):
    """ChatGPT Plus/Pro (Codex): authorization code with PKCE and a random state; the
    ChatGPT account id comes from the access token's claims."""

    id = "openai-codex"
    name = "ChatGPT Plus/Pro (Codex Subscription)"
    uses_callback_server = True
    client_id = "app_EMoamEEZ73f0CkXaXp7hrann"
    authorize_url = "https://auth.openai.com/oauth/authorize"
    token_url = "https://auth.openai.com/oauth/token"
    callback_port = 1455
    callback_path = "/auth/callback"
    redirect_uri = f"http://localhost:{callback_port}{callback_path}"
    scope = "openid profile email offline_access"
    claim = "https://api.openai.com/auth"
    #: pi 1.6's device authorization (for a machine without a browser).
    device_user_code_url = "https://auth.openai.com/api/accounts/deviceauth/usercode"
    device_token_url = "https://auth.openai.com/api/accounts/deviceauth/token"
    device_verification_uri = "https://auth.openai.com/codex/device"
    device_redirect_uri = "https://auth.openai.com/deviceauth/callback"
    device_timeout = 15 * 60
    methods = [("browser", "Browser login (default)"), ("device_code", "Device code login (headless)")]

    async def login(self, callbacks: LoginCallbacks, *, originator: str = "pi", **options: Any) -> dict:
        method = await callbacks.choose("Select OpenAI Codex login method:", self.methods)
        if method == "device_code":
            return await self._login_with_device_code(callbacks)
        if method != "browser":
            raise SignInError(f"Unknown OpenAI Codex login method: {method}")
        return await self._login_in_browser(callbacks, originator)

    async def _login_in_browser(self, callbacks: LoginCallbacks, originator: str) -> dict:
        verifier, challenge = pkce()
        state = secrets.token_hex(16)
        query = urlencode({
            "response_type": "code", "client_id": self.client_id, "redirect_uri": self.redirect_uri,
            "scope": self.scope, "code_challenge": challenge, "code_challenge_method": "S256",
            "state": state, "id_token_add_organizations": "true",
            "codex_cli_simplified_flow": "true", "originator": originator,
        })
        server = CallbackServer(self.callback_port, self.callback_path, state, "OpenAI")
        try:
            callbacks.on_auth(rewrite(f"{self.authorize_url}?{query}"),
                              "A browser window should open. Complete login to finish.")
            code = await code_from_browser_or_paste(
                server, callbacks, state, "Paste the authorization code (or full redirect URL):")
        finally:
            server.close()
        return await self._token({"grant_type": "authorization_code", "client_id": self.client_id,
                                  "code": code, "code_verifier": verifier,
                                  "redirect_uri": self.redirect_uri}, "OpenAI Codex token exchange")

    async def _login_with_device_code(self, callbacks: LoginCallbacks) -> dict:
        """The user enters a code at auth.openai.com/codex/device; the server then hands
        out an authorization code and its PKCE verifier, exchanged as the browser's is."""
        status, text = await request("POST", self.device_user_code_url,
                                     json_body={"client_id": self.client_id},
                                     headers={"Content-Type": "application/json"})
        if status == 404:
            raise SignInError("OpenAI Codex device code login is not enabled for this server. "
                              "Use browser login or verify the server URL.")
        if not 200 <= status < 300:
            raise SignInError(f"OpenAI Codex device code request failed with status {status}"
                              + (f": {text[:300]}" if text else ""))
        device = parse_json(text, "OpenAI Codex device code request")
        interval = device.get("interval")
        if isinstance(interval, str):
            try:
                interval = float(interval.strip())
            except ValueError:
                interval = None
        if not isinstance(device.get("device_auth_id"), str) or not isinstance(device.get("user_code"), str) \
                or isinstance(interval, bool) or not isinstance(interval, (int, float)) or interval < 0:
            raise SignInError(f"Invalid OpenAI Codex device code response: {text[:300]}")
        callbacks.show_device_code(self.device_verification_uri, device["user_code"])

        async def poll() -> Poll:
            status, text = await request("POST", self.device_token_url, json_body={
                "device_auth_id": device["device_auth_id"], "user_code": device["user_code"]},
                headers={"Content-Type": "application/json"})
            if 200 <= status < 300:
                answer = parse_json(text, "OpenAI Codex device auth")
                if not answer.get("authorization_code") or not answer.get("code_verifier"):
                    return Poll("failed", message=f"Invalid OpenAI Codex device auth token response: {text[:300]}")
                return Poll("complete", (answer["authorization_code"], answer["code_verifier"]))
            if status in (403, 404):
                return Poll("pending")
            error = _error_code(text)
            if error == "deviceauth_authorization_pending":
                return Poll("pending")
            if error == "slow_down":
                return Poll("slow_down")
            return Poll("failed", message=f"OpenAI Codex device auth failed with status {status}"
                        + (f": {text[:300]}" if text else ""))

        code, verifier = await poll_device_flow(poll, callbacks, interval=float(interval),
                                                expires_in=self.device_timeout)
        return await self._token({"grant_type": "authorization_code", "client_id": self.client_id,
                                  "code": code, "code_verifier": verifier,
                                  "redirect_uri": self.device_redirect_uri}, "OpenAI Codex token exchange")

    async def refresh(self, credentials: dict) -> dict:
        return await self._token({"grant_type": "refresh_token",
                                  "refresh_token": credentials.get("refresh") or "",
                                  "client_id": self.client_id}, "OpenAI Codex token refresh")

    async def _token(self, form: dict, what: str) -> dict:
        try:
            status, text = await request("POST", self.token_url, form=form, headers={
                "Content-Type": "application/x-www-form-urlencoded"})
        except Exception as exc:  # httpx's errors: say what failed, keep the type
            raise SignInError(f"{what} error: {type(exc).__name__}: {exc}") from None
        if not 200 <= status < 300:
            raise SignInError(f"{what} failed ({status}): {text[:300]}")
        data = parse_json(text, what)
        if not data.get("access_token") or not data.get("refresh_token") \
                or not isinstance(data.get("expires_in"), (int, float)):
            raise SignInError(f"{what} response missing fields")
        account = account_id(data["access_token"])
        if not account:
            raise SignInError("Failed to extract accountId from token")
        return {"access": data["access_token"], "refresh": data["refresh_token"],
                "expires": now_ms() + int(data["expires_in"] * 1000), "accountId": account}


def _error_code(text: str) -> str | None:
    """``error`` of a JSON error body, or its ``error.code``; None for anything else."""
    try:
        error = json.loads(text).get("error")
    except (ValueError, AttributeError):
        return None
    error = error.get("code") if isinstance(error, dict) else error
    return error if isinstance(error, str) else None


def jwt_claims(token: str) -> dict | None:
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        payload = base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4))
        data = json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


def account_id(access_token: str) -> str | None:
    """The ChatGPT account id in an OpenAI access token (``chatgpt-account-id`` header)."""
    auth = (jwt_claims(access_token) or {}).get(OpenAICodexSignIn.claim)
    value = auth.get("chatgpt_account_id") if isinstance(auth, dict) else None
    return value if isinstance(value, str) and value else None


#: The editor identity GitHub's Copilot endpoints require (pi's, VS Code's Copilot Chat).
COPILOT_HEADERS = {
    "User-Agent": "GitHubCopilotChat/0.35.0",
    "Editor-Version": "vscode/1.107.0",
    "Editor-Plugin-Version": "copilot-chat/0.35.0",
    "Copilot-Integration-Id": "vscode-chat",
}


def normalize_domain(text: str) -> str | None:
    value = text.strip()
    if not value:
        return None
    parts = urlsplit(value if "://" in value else f"https://{value}")
    return parts.hostname or None


def copilot_base_url(token: str | None, enterprise_domain: str | None = None) -> str:
    """The Copilot API a token is for: its ``proxy-ep`` with ``proxy.`` made ``api.``;
    else the enterprise's ``copilot-api.`` host; else the individual plan's."""
    if token:
        for part in token.split(";"):
            if part.startswith("proxy-ep="):
                host = part[len("proxy-ep="):]
                if host:
                    return "https://" + (("api." + host[6:]) if host.startswith("proxy.") else host)
    if enterprise_domain:
        return f"https://copilot-api.{enterprise_domain}"
    return "https://api.individual.githubcopilot.com"


class GitHubCopilotSignIn(SignIn):
    """GitHub Copilot: GitHub's device flow; the GitHub token (kept as ``refresh``) is
    exchanged for a short-lived Copilot token (``access``)."""

    id = "github-copilot"
    name = "GitHub Copilot"
    client_id = base64.b64decode("SXYxLmI1MDdhMDhjODdlY2ZlOTg=").decode()
    initial_poll_multiplier = 1.2
    slow_down_poll_multiplier = 1.4

    @staticmethod
    def urls(domain: str) -> dict[str, str]:
        return {"device": f"https://{domain}/login/device/code",
                "token": f"https://{domain}/login/oauth/access_token",
                "copilot": f"https://api.{domain}/copilot_internal/v2/token"}

    async def login(self, callbacks: LoginCallbacks, *, model_ids: Sequence[str] = (), **options: Any) -> dict:
        answer = await callbacks.prompt("GitHub Enterprise URL/domain (blank for github.com)",
                                        "company.ghe.com", True)
        if callbacks.cancelled():
            raise LoginCancelled()
        enterprise = normalize_domain(answer)
        if answer.strip() and not enterprise:
            raise SignInError("Invalid GitHub Enterprise URL/domain")
        domain = enterprise or "github.com"
        urls = self.urls(domain)
        form_headers = {"Accept": "application/json", "Content-Type": "application/x-www-form-urlencoded",
                        "User-Agent": COPILOT_HEADERS["User-Agent"]}
        device = await self._json("POST", urls["device"], form_headers,
                                  form={"client_id": self.client_id, "scope": "read:user"})
        fields = ("device_code", "user_code", "verification_uri", "interval", "expires_in")
        if not all(isinstance(device.get(k), str if k in fields[:3] else (int, float)) for k in fields):
            raise SignInError("Invalid device code response fields")
        callbacks.on_auth(device["verification_uri"], f"Enter code: {device['user_code']}")
        github_token = await self._poll(urls["token"], form_headers, device, callbacks)
        credentials = await self._copilot_token(github_token, enterprise)
        callbacks.progress("Enabling models...")
        await asyncio.gather(*(self._enable(credentials["access"], model, enterprise) for model in model_ids))
        return credentials

    async def _poll(self, url: str, headers: dict, device: dict, callbacks: LoginCallbacks) -> str:
        deadline = time.monotonic() + device["expires_in"]
        interval = max(1.0, device["interval"])
        multiplier = self.initial_poll_multiplier
        slowed = 0
        while time.monotonic() < deadline:
            if callbacks.cancelled():
                raise LoginCancelled()
            await asyncio.sleep(min(interval * multiplier, max(0.0, deadline - time.monotonic())))
            raw = await self._json("POST", url, headers, form={
                "client_id": self.client_id, "device_code": device["device_code"],
                "grant_type": "urn:ietf:params:oauth:grant-type:device_code"})
            if isinstance(raw.get("access_token"), str):
                return raw["access_token"]
            error = raw.get("error")
            if error == "authorization_pending":
                continue
            if error == "slow_down":
                slowed += 1
                asked = raw.get("interval")
                interval = asked if isinstance(asked, (int, float)) and asked > 0 else max(1.0, interval + 5)
                multiplier = self.slow_down_poll_multiplier
                continue
            if isinstance(error, str):
                description = raw.get("error_description")
                raise SignInError(f"Device flow failed: {error}" + (f": {description}" if description else ""))
        if slowed:
            raise SignInError("Device flow timed out after one or more slow_down responses. This is "
                              "often caused by clock drift in WSL or VM environments. Please sync or "
                              "restart the VM clock and try again.")
        raise SignInError("Device flow timed out")

    async def _copilot_token(self, github_token: str, enterprise: str | None) -> dict:
        raw = await self._json("GET", self.urls(enterprise or "github.com")["copilot"], {
            "Accept": "application/json", "Authorization": f"Bearer {github_token}", **COPILOT_HEADERS})
        token, expires_at = raw.get("token"), raw.get("expires_at")
        if not isinstance(token, str) or not isinstance(expires_at, (int, float)):
            raise SignInError("Invalid Copilot token response fields")
        credentials = {"refresh": github_token, "access": token,
                       "expires": int(expires_at * 1000 - 5 * 60 * 1000)}
        if enterprise:
            credentials["enterpriseUrl"] = enterprise
        return credentials

    async def _enable(self, token: str, model_id: str, enterprise: str | None) -> bool:
        try:
            status, _ = await request(
                "POST", f"{copilot_base_url(token, enterprise)}/models/{model_id}/policy",
                json_body={"state": "enabled"},
                headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}",
                         **COPILOT_HEADERS, "openai-intent": "chat-policy",
                         "x-interaction-type": "chat-policy"})
        except Exception:
            return False
        return 200 <= status < 300

    async def refresh(self, credentials: dict) -> dict:
        return await self._copilot_token(credentials.get("refresh") or "", credentials.get("enterpriseUrl"))

    async def _json(self, method: str, url: str, headers: dict, form: dict | None = None) -> dict:
        status, text = await request(method, url, headers=headers, form=form)
        if not 200 <= status < 300:
            raise SignInError(f"{status}: {text[:300]}")
        return parse_json(text, url)


def _all_sign_ins() -> dict[str, SignIn]:
    """Every sign-in by provider: 0.73.1's three, then pi 1.6's (modules that build on
    :mod:`.oauth_kit`, never on this one, so importing them here is no cycle)."""
    from pi_plugins.signin.device_signins import KimiCodingSignIn, MetaSignIn, XaiSignIn
    from pi_plugins.signin.openai_chatgpt import OpenAIChatGPTSignIn
    from pi_plugins.signin.openrouter import OpenRouterSignIn
    from pi_plugins.signin.radius import RadiusSignIn

    flows = (AnthropicSignIn(), GitHubCopilotSignIn(), OpenAICodexSignIn(), OpenAIChatGPTSignIn(),
             XaiSignIn(), OpenRouterSignIn(), KimiCodingSignIn(), MetaSignIn(), RadiusSignIn())
    return {flow.id: flow for flow in flows}


SIGN_INS: dict[str, SignIn] = _all_sign_ins()


def sign_in(provider: str) -> SignIn | None:
    return SIGN_INS.get(provider)
