"""Sign-ins with a subscription instead of an API key: Claude Pro/Max (``anthropic``),
ChatGPT Plus/Pro (``openai-codex``) and GitHub Copilot (``github-copilot``), as pi
0.73.1's ``@mariozechner/pi-ai`` does them: the same flows, client ids, scopes,
redirect URIs and token endpoints, so a sign-in here serves pi too (and pi's here).

Each :class:`SignIn` has ``login(callbacks)`` (the whole flow: the authorize link, the
code from the local callback server or pasted by the user, the token exchange) and
``refresh(credentials)``; both return the credentials auth.json keeps beside
``"type": "oauth"``: ``refresh``, ``access``, ``expires`` (Unix ms) and what the provider
needs besides (``accountId``, ``enterpriseUrl``). Every URL goes through
``PI_PROVIDER_ORIGINS`` (:mod:`pi_plugins.providers.origins`), so tests play the other side on
127.0.0.1. Storage and refresh-under-lock are :mod:`pi_core.app.auth`'s, which gets these
flows through the ``register_sign_ins`` hook (:mod:`pi_plugins.signin`).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import secrets
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from attrs import define

from pi_plugins.providers.origins import rewrite

TIMEOUT = 30.0


class SignInError(RuntimeError):
    """A sign-in or refresh that did not succeed; the message says why (never a token)."""


class LoginCancelled(SignInError):
    def __init__(self) -> None:
        super().__init__("Login cancelled")


@define
class LoginCallbacks:
    """What a flow asks of the front end (the chat's dialog, ``pi auth login``).

    ``on_auth(url, instructions)`` shows the link (and opens a browser where one can);
    ``prompt(message, placeholder, allow_empty)`` asks for a line; ``manual_code()``, when
    given, waits for a pasted code or redirect URL, racing the local callback server;
    ``progress(message)`` reports a step; ``cancelled()`` says the user gave up."""

    on_auth: Callable[[str, str | None], Any]
    prompt: Callable[[str, str | None, bool], Awaitable[str]]
    progress: Callable[[str], Any] = lambda message: None
    manual_code: Callable[[], Awaitable[str]] | None = None
    cancelled: Callable[[], bool] = lambda: False


# ---------------------------------------------------------------- shared pieces


def pkce() -> tuple[str, str]:
    """(verifier, S256 challenge): 32 random bytes, base64url without padding."""
    verifier = _b64url(secrets.token_bytes(32))
    return verifier, _b64url(hashlib.sha256(verifier.encode()).digest())


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def now_ms() -> int:
    return int(time.time() * 1000)


def parse_authorization_input(text: str) -> tuple[str | None, str | None]:
    """(code, state) from what the user pasted: the redirect URL, ``code#state``, a
    query string, or the bare code."""
    value = text.strip()
    if not value:
        return None, None
    parts = urlsplit(value)
    if parts.scheme and parts.netloc:
        query = parse_qs(parts.query)
        return _first(query, "code"), _first(query, "state")
    if "#" in value:
        code, _, state = value.partition("#")
        return code, state
    if "code=" in value:
        query = parse_qs(value)
        return _first(query, "code"), _first(query, "state")
    return value, None


def _first(query: dict[str, list[str]], key: str) -> str | None:
    """The first value of ``key`` in a parsed query string, or None."""
    values = query.get(key)
    return values[0] if values else None


async def _request(method: str, url: str, *, headers: dict[str, str], json_body: Any = None,
                   form: dict[str, str] | None = None) -> tuple[int, str]:
    import httpx

    target = rewrite(url)
    async with httpx.AsyncClient(timeout=TIMEOUT, follow_redirects=False) as client:
        response = await client.request(
            method, target, headers=headers,
            content=json.dumps(json_body).encode() if json_body is not None else None,
            data=form)
        return response.status_code, response.text


def _json(text: str, what: str) -> dict:
    try:
        data = json.loads(text)
    except ValueError:
        raise SignInError(f"{what} returned invalid JSON: {text[:200]!r}") from None
    if not isinstance(data, dict):
        raise SignInError(f"{what} returned {type(data).__name__}, not an object")
    return data


def _browser_page(title: str, detail: str = "") -> bytes:
    import html

    return (f"<!doctype html><html><head><meta charset='utf-8'><title>pi</title></head><body>"
            f"<h1>{html.escape(title)}</h1><p>{html.escape(detail)}</p></body></html>").encode()


class CallbackServer:
    """The local page the provider redirects the browser to (``http://localhost:PORT/PATH``):
    it checks the state and hands the code to the waiting flow. When the port is taken,
    the flow goes on without it (the user pastes the redirect URL), as pi's Codex flow does."""

    def __init__(self, port: int, path: str, state: str, product: str):
        self.loop = asyncio.get_running_loop()
        self.result: asyncio.Future = self.loop.create_future()
        self.server: ThreadingHTTPServer | None = None
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                query = parse_qs(url.query)
                code, got_state = _first(query, "code"), _first(query, "state")
                error = _first(query, "error")
                if url.path != path:
                    status, page = 404, _browser_page("Callback route not found.")
                elif error:
                    status, page = 400, _browser_page(f"{product} authentication did not complete.",
                                                      f"Error: {error}")
                elif not code or not got_state:
                    status, page = 400, _browser_page("Missing code or state parameter.")
                elif got_state != state:
                    status, page = 400, _browser_page("State mismatch.")
                else:
                    status, page = 200, _browser_page(
                        f"{product} authentication completed. You can close this window.")
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)
                if status == 200:
                    outer.loop.call_soon_threadsafe(outer._settle, code)

        host = os.environ.get("PI_OAUTH_CALLBACK_HOST") or "127.0.0.1"
        try:
            self.server = ThreadingHTTPServer((host, port), Handler)
        except OSError:
            self.server = None
            self._settle(None)
            return
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True, name="pi-oauth-callback").start()

    def _settle(self, code: str | None) -> None:
        if not self.result.done():
            self.result.set_result(code)

    def cancel_wait(self) -> None:
        self._settle(None)

    def close(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


async def _code_from_browser_or_paste(server: CallbackServer, callbacks: LoginCallbacks,
                                      state: str, prompt_message: str,
                                      placeholder: str | None = None) -> str:
    """The authorization code: from the callback server, or pasted (whichever comes
    first); with neither, asked for. A pasted state must match."""
    code = None
    pasted = None
    if callbacks.manual_code is not None:
        manual = asyncio.ensure_future(callbacks.manual_code())
        done, _ = await asyncio.wait({server.result, manual}, return_when=asyncio.FIRST_COMPLETED)
        if server.result.done() and server.result.result():
            code = server.result.result()
            manual.cancel()
        else:
            if not manual.done():
                await manual  # the callback server could not listen: wait for the paste
            pasted = manual.result()
    elif server.server is not None:
        code = await server.result
    if code is None and pasted is None:
        pasted = await callbacks.prompt(prompt_message, placeholder, False)
    if code is None:
        code, pasted_state = parse_authorization_input(pasted or "")
        if pasted_state and pasted_state != state:
            raise SignInError("OAuth state mismatch")
    if not code:
        raise SignInError("Missing authorization code")
    return code


# ---------------------------------------------------------------- the sign-ins


class SignIn:
    id = ""
    name = ""
    #: The flow runs a local callback server: a pasted redirect URL races it.
    uses_callback_server = False

    async def login(self, callbacks: LoginCallbacks, **options: Any) -> dict:
        raise NotImplementedError

    async def refresh(self, credentials: dict) -> dict:
        raise NotImplementedError

    def api_key(self, credentials: dict) -> str:
        return credentials["access"]


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

    async def login(self, callbacks: LoginCallbacks, **options: Any) -> dict:
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
            code = await _code_from_browser_or_paste(
                server, callbacks, verifier, "Paste the authorization code or full redirect URL:",
                self.redirect_uri)
        finally:
            server.close()
        callbacks.progress("Exchanging authorization code for tokens...")
        return await self._token({
            "grant_type": "authorization_code", "client_id": self.client_id, "code": code,
            "state": verifier, "redirect_uri": self.redirect_uri, "code_verifier": verifier,
        }, "Token exchange")

    async def refresh(self, credentials: dict) -> dict:
        return await self._token({"grant_type": "refresh_token", "client_id": self.client_id,
                                  "refresh_token": credentials.get("refresh")}, "Anthropic token refresh")

    async def _token(self, body: dict, what: str) -> dict:
        status, text = await _request("POST", self.token_url, json_body=body, headers={
            "Content-Type": "application/json", "Accept": "application/json"})
        if not 200 <= status < 300:
            raise SignInError(f"{what} failed (HTTP {status}): {text[:300]}")
        data = _json(text, what)
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

    async def login(self, callbacks: LoginCallbacks, *, originator: str = "pi", **options: Any) -> dict:
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
            code = await _code_from_browser_or_paste(
                server, callbacks, state, "Paste the authorization code (or full redirect URL):")
        finally:
            server.close()
        return await self._token({"grant_type": "authorization_code", "client_id": self.client_id,
                                  "code": code, "code_verifier": verifier,
                                  "redirect_uri": self.redirect_uri}, "OpenAI Codex token exchange")

    async def refresh(self, credentials: dict) -> dict:
        return await self._token({"grant_type": "refresh_token",
                                  "refresh_token": credentials.get("refresh") or "",
                                  "client_id": self.client_id}, "OpenAI Codex token refresh")

    async def _token(self, form: dict, what: str) -> dict:
        try:
            status, text = await _request("POST", self.token_url, form=form, headers={
                "Content-Type": "application/x-www-form-urlencoded"})
        except Exception as exc:  # httpx's errors: say what failed, keep the type
            raise SignInError(f"{what} error: {type(exc).__name__}: {exc}") from None
        if not 200 <= status < 300:
            raise SignInError(f"{what} failed ({status}): {text[:300]}")
        data = _json(text, what)
        if not data.get("access_token") or not data.get("refresh_token") \
                or not isinstance(data.get("expires_in"), (int, float)):
            raise SignInError(f"{what} response missing fields")
        account = account_id(data["access_token"])
        if not account:
            raise SignInError("Failed to extract accountId from token")
        return {"access": data["access_token"], "refresh": data["refresh_token"],
                "expires": now_ms() + int(data["expires_in"] * 1000), "accountId": account}


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
            status, _ = await _request(
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
        status, text = await _request(method, url, headers=headers, form=form)
        if not 200 <= status < 300:
            raise SignInError(f"{status}: {text[:300]}")
        return _json(text, url)


SIGN_INS: dict[str, SignIn] = {s.id: s for s in (AnthropicSignIn(), GitHubCopilotSignIn(), OpenAICodexSignIn())}


def sign_in(provider: str) -> SignIn | None:
    return SIGN_INS.get(provider)
