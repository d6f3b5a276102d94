"""A local server that plays the authorization servers of pi 1.6's newer sign-ins on
127.0.0.1: Sign in with ChatGPT (auth.openai.com's ``/api/accounts``), xAI, Kimi Code,
Meta (auth.meta.com and its key mint), OpenRouter and the Radius gateway. Point the
sign-ins at it with ``PI_PROVIDER_ORIGINS`` (:meth:`Signin16Server.origins`). It keeps
what the real services enforce where the tests need it: PKCE (the verifier must hash to
the challenge), the state, the redirect URI, the client id, device codes that stay
pending until "entered", and refresh tokens that rotate (a used one is refused).
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from http.server import ThreadingHTTPServer
from urllib.parse import urlencode

from support.signin_server import RecordingHandler

ORIGINS = ("https://auth.openai.com", "https://auth.x.ai", "https://auth.kimi.com", "https://auth.meta.com",
           "https://api.meta.ai", "https://openrouter.ai", "https://radius.pi.dev")

#: Each device flow's endpoints: (device authorization path, token path).
DEVICE_PATHS = {"xai": ("/oauth2/device/code", "/oauth2/token"),
                "kimi": ("/api/oauth/device_authorization", "/api/oauth/token"),
                "meta": ("/oidc/device/authorization/", "/oidc/device/token/"),
                "radius": ("/v1/oauth/device", "/v1/oauth/token")}


def challenge_of(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")


class Signin16Server:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: list[dict] = []
        self.codes: dict[str, dict] = {}  # authorization code -> the authorize request's query
        self.valid_refresh: set[str] = set()
        #: Polls answered "authorization_pending" before the user has entered the code.
        self.pending_polls = 1
        #: Polls answered "slow_down" (before the pending ones).
        self.slow_downs = 0
        #: The next poll's answer instead: "access_denied", "expired_token"...
        self.poll_error: str | None = None
        #: Statuses the token endpoint answers refreshes with first (Kimi retries 429/5xx).
        self.refresh_failures: list[int] = []
        self.expires_in = 3600
        self.interval = 0.05
        self.device_expires_in = 30
        self.scope_granted = "openid profile email offline_access resource.invoke chatgpt.tokens.use.direct"
        self.issued_client = "client-issued-7"
        self.mint_status = 200
        self._counter = 0
        outer = self

        class Handler(RecordingHandler):
            recorder = outer

            def _route(self, r: dict) -> None:  # noqa: C901 - one branch per endpoint
                path, q, body = r["path"], {k: v[0] for k, v in r["query"].items()}, r["body"]
                # browser sign-ins: the authorize page sends the browser back with a code
                if path in ("/api/accounts/authorize", "/radius/authorize"):
                    code = outer.new("code")
                    with outer.lock:
                        outer.codes[code] = q
                    back = {"code": code, "state": q["state"]}
                    if path == "/api/accounts/authorize":
                        back["client_id"] = outer.issued_client
                    return self._reply(302, b"", {"Location": q["redirect_uri"] + "?" + urlencode(back)})
                if path == "/auth":  # OpenRouter: no state, the code to callback_url
                    code = outer.new("code")
                    with outer.lock:
                        outer.codes[code] = q
                    return self._reply(302, b"", {"Location": q["callback_url"] + "?" + urlencode({"code": code})})
                if path == "/api/accounts/oauth/token":
                    return self._chatgpt_token(body)
                if path == "/api/v1/auth/keys":
                    asked = outer.codes.pop(body.get("code"), None)
                    if asked is None or asked["code_challenge"] != challenge_of(body.get("code_verifier") or ""):
                        return self._reply(403, {"error": {"message": "Invalid code or verifier"}})
                    return self._reply(200, {"key": outer.new("sk-or-v1"), "user_id": "user-1"})
                if path == "/v1/oauth":
                    return self._reply(200, {"authorizationEndpoint": "https://radius.pi.dev/radius/authorize"})
                for flow, (device_path, token_path) in DEVICE_PATHS.items():
                    if path == device_path:
                        return self._device(flow)
                    if path == token_path:
                        return self._device_token(flow, body)
                if path == "/muse-code/key":
                    if outer.mint_status != 200:
                        return self._reply(outer.mint_status, {"detail": "identity token rejected"})
                    if not (r["headers"].get("authorization") or "").startswith("Bearer meta-identity-"):
                        return self._reply(401, {"detail": "no identity"})
                    return self._reply(200, {"api_key": outer.new("meta-key")})
                return self._reply(404, {"error": "not found"})

            def _device(self, flow: str) -> None:
                verification = {"xai": "https://accounts.x.ai/device", "kimi": "https://www.kimi.com/code/device",
                                "meta": "https://auth.meta.com/device", "radius": "https://radius.pi.dev/device"}[flow]
                answer = {"device_code": outer.new(f"{flow}-device"), "user_code": "WXYZ-2345",
                          "verification_uri": verification, "interval": outer.interval,
                          "expires_in": outer.device_expires_in}
                if flow in ("xai", "kimi", "meta"):
                    answer["verification_uri_complete"] = f"{verification}?user_code=WXYZ-2345"
                return self._reply(200, answer)

            def _device_token(self, flow: str, body: dict) -> None:
                grant = body.get("grant_type")
                if grant == "refresh_token":
                    return self._refresh(flow, body)
                if grant == "authorization_code":  # Radius's browser sign-in
                    asked = outer.codes.pop(body.get("code"), None)
                    if asked is None or asked["code_challenge"] != challenge_of(body.get("code_verifier") or "") \
                            or asked["redirect_uri"] != body.get("redirect_uri"):
                        return self._reply(400, {"error": "invalid_grant"})
                    return self._reply(200, outer.tokens(flow))
                with outer.lock:
                    if outer.poll_error:
                        return self._reply(400, {"error": outer.poll_error})
                    if outer.slow_downs > 0:
                        outer.slow_downs -= 1
                        return self._reply(400, {"error": "slow_down", "interval": outer.interval})
                    if outer.pending_polls > 0:
                        outer.pending_polls -= 1
                        return self._reply(400, {"error": "authorization_pending"})
                return self._reply(200, outer.tokens(flow))

            def _refresh(self, flow: str, body: dict) -> None:
                with outer.lock:
                    if outer.refresh_failures:
                        return self._reply(outer.refresh_failures.pop(0), {"error": "server_error"})
                    token = body.get("refresh_token")
                    if token not in outer.valid_refresh:
                        return self._reply(400, {"error": "invalid_grant", "error_description": "refresh token unknown"})
                    outer.valid_refresh.discard(token)
                answer = outer.tokens(flow)
                if flow == "xai":  # xAI may keep the refresh token as it is
                    answer.pop("refresh_token")
                    with outer.lock:
                        outer.valid_refresh.add(token)
                return self._reply(200, answer)

            def _chatgpt_token(self, body: dict) -> None:
                grant = body.get("grant_type")
                if body.get("client_id") != outer.issued_client or body.get("resource") != "https://api.openai.com/v1":
                    return self._reply(400, {"error": "invalid_client"})
                if grant == "authorization_code":
                    asked = outer.codes.pop(body.get("code"), None)
                    if asked is None or asked["code_challenge"] != challenge_of(body.get("code_verifier") or "") \
                            or asked["redirect_uri"] != body.get("redirect_uri"):
                        return self._reply(400, {"error": "invalid_grant"})
                elif grant == "refresh_token":
                    with outer.lock:
                        if body.get("refresh_token") not in outer.valid_refresh:
                            return self._reply(400, {"error": "invalid_grant"})
                        outer.valid_refresh.discard(body.get("refresh_token"))
                answer = outer.tokens("chatgpt")
                answer.update(scope=outer.scope_granted, id_token="header.payload.signature")
                return self._reply(200, answer)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def new(self, prefix: str) -> str:
        with self.lock:
            self._counter += 1
            return f"{prefix}-{self._counter}"

    def tokens(self, flow: str) -> dict:
        """A fresh token pair (Meta's device flow gives an identity token, no refresh)."""
        if flow == "meta":
            return {"access_token": self.new("meta-identity"), "token_type": "Bearer"}
        refresh = self.new(f"{flow}-refresh")
        with self.lock:
            self.valid_refresh.add(refresh)
        answer = {"access_token": self.new(f"{flow}-access"), "refresh_token": refresh,
                  "expires_in": self.expires_in, "token_type": "Bearer"}
        if flow == "radius":
            answer["scope"] = "gateway offline_access"
        return answer

    def issue_refresh_token(self, flow: str) -> str:
        token = self.new(f"{flow}-refresh")
        with self.lock:
            self.valid_refresh.add(token)
        return token

    def origins(self) -> str:
        return json.dumps({o: self.url for o in ORIGINS})

    def of(self, path: str) -> list[dict]:
        with self.lock:
            return [r for r in self.requests if r["path"] == path]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> Signin16Server:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
