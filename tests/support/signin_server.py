"""A local server that plays the providers' side of the subscription sign-ins on
127.0.0.1: Anthropic's authorize page and token endpoint, OpenAI's (with pi 1.6's Codex device code), GitHub's device flow
and Copilot token exchange. Point the sign-ins at it with ``PI_PROVIDER_ORIGINS``
(:meth:`SignInServer.origins`). It keeps what a real service enforces where the tests
need it: PKCE (the verifier must hash to the challenge), the state, the redirect URI,
and refresh tokens that rotate (a used one is refused, as Anthropic's are).
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

ORIGINS = ("https://claude.ai", "https://platform.claude.com", "https://auth.openai.com",
           "https://github.com", "https://api.github.com", "https://api.individual.githubcopilot.com")


def fake_jwt(claims: dict) -> str:
    def part(value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")
    return f"{part({'alg': 'none'})}.{part(claims)}.c2ln"



class RecordingHandler(BaseHTTPRequestHandler):
    """A stand-in server's handler: each request (method, path, query, lower-cased
    headers, JSON or form body) recorded on ``recorder.requests`` under its lock, then
    answered by ``_route``; ``_reply`` sends JSON (or bytes) with a length."""

    protocol_version = "HTTP/1.1"
    recorder: Any = None

    def log_message(self, *args) -> None:
        pass

    def _reply(self, status: int, body, headers: dict | None = None) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        for k, v in (headers or {"Content-Type": "application/json"}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _record(self, body: bytes) -> dict:
        url = urlsplit(self.path)
        kind = self.headers.get("content-type", "")
        parsed = (json.loads(body) if body and "json" in kind
                  else {k: v[0] for k, v in parse_qs(body.decode()).items()})
        entry = {"method": self.command, "path": url.path, "query": parse_qs(url.query),
                 "headers": {k.lower(): v for k, v in self.headers.items()}, "body": parsed}
        with self.recorder.lock:
            self.recorder.requests.append(entry)
        return entry

    def do_GET(self) -> None:
        self._route(self._record(b""))

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self._route(self._record(self.rfile.read(length)))

    def _route(self, r: dict) -> None:
        raise NotImplementedError

class SignInServer:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: list[dict] = []
        self.challenges: dict[str, str] = {}  # code -> challenge
        self.codes: dict[str, dict] = {}
        self.valid_refresh: set[str] = set()
        self.refreshes = 0
        #: Seconds a refresh takes (so two processes overlap).
        self.refresh_delay = 0.0
        #: Set when a refresh request arrives, before its delay.
        self.refresh_arrived = threading.Event()
        #: Refuse every refresh (a revoked sign-in).
        self.refuse_refresh = False
        self.expires_in = 3600
        self.account = "acct-123"
        self.device_polls_pending = 0
        self.enabled_models: list[str] = []
        self._counter = 0
        outer = self

        class Handler(RecordingHandler):
            recorder = outer

            def _route(self, r: dict) -> None:
                path, q, body = r["path"], {k: v[0] for k, v in r["query"].items()}, r["body"]
                if path == "/oauth/authorize":
                    code = outer._new("code")
                    with outer.lock:
                        outer.codes[code] = q
                    target = q["redirect_uri"] + "?" + urlencode({"code": code, "state": q["state"]})
                    return self._reply(302, b"", {"Location": target})
                if path == "/api/accounts/deviceauth/usercode":  # Codex's device code (pi 1.6)
                    if body.get("client_id") != "app_EMoamEEZ73f0CkXaXp7hrann":
                        return self._reply(400, {"error": "invalid_client"})
                    return self._reply(200, {"device_auth_id": "deviceauth-1", "user_code": "CDX-4321",
                                             "interval": "0.05"})
                if path == "/api/accounts/deviceauth/token":
                    with outer.lock:
                        if outer.device_polls_pending > 0:
                            outer.device_polls_pending -= 1
                            return self._reply(403, {"error": {"code": "deviceauth_authorization_pending"}})
                    verifier = outer._new("device-verifier")
                    code = outer._new("code")
                    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
                    with outer.lock:
                        outer.codes[code] = {"code_challenge": challenge, "client_id": "app_EMoamEEZ73f0CkXaXp7hrann",
                                             "redirect_uri": "https://auth.openai.com/deviceauth/callback"}
                    return self._reply(200, {"authorization_code": code, "code_verifier": verifier,
                                             "code_challenge": challenge})
                if path in ("/v1/oauth/token", "/oauth/token"):
                    return self._token(body, anthropic=path == "/v1/oauth/token")
                if path == "/login/device/code":
                    return self._reply(200, {"device_code": "dev-1", "user_code": "ABCD-1234",
                                             "verification_uri": "https://github.com/login/device",
                                             "interval": 1, "expires_in": 30})
                if path == "/login/oauth/access_token":
                    with outer.lock:
                        if outer.device_polls_pending > 0:
                            outer.device_polls_pending -= 1
                            return self._reply(200, {"error": "authorization_pending"})
                    return self._reply(200, {"access_token": "gho_github_token", "token_type": "bearer"})
                if path == "/copilot_internal/v2/token":
                    if r["headers"].get("authorization") != "Bearer gho_github_token":
                        return self._reply(401, {"message": "Bad credentials"})
                    if outer.refuse_refresh:
                        return self._reply(401, {"message": "token revoked"})
                    with outer.lock:
                        outer.refreshes += 1
                    token = f"tid=1;exp={int(time.time()) + outer.expires_in};proxy-ep=proxy.individual.githubcopilot.com;{outer._new('cp')}"
                    return self._reply(200, {"token": token, "expires_at": int(time.time()) + outer.expires_in})
                # Google's OAuth token endpoint, for application-default credentials (a
                # service account's file names it; a gcloud sign-in's is oauth2.googleapis.com/token)
                if path in ("/google/token", "/token"):
                    with outer.lock:
                        outer.refreshes += 1
                    return self._reply(200, {"access_token": outer._new("ya29.google"), "expires_in": 3600,
                                             "token_type": "Bearer"})
                if path.startswith("/models/") and path.endswith("/policy"):
                    with outer.lock:
                        outer.enabled_models.append(path.split("/")[2])
                    return self._reply(200, {"state": "enabled"})
                return self._reply(404, {"error": "not found"})

            def _token(self, body: dict, anthropic: bool) -> None:
                grant = body.get("grant_type")
                if grant == "authorization_code":
                    asked = outer.codes.pop(body.get("code"), None)
                    verifier = body.get("code_verifier") or ""
                    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
                    if asked is None or asked["code_challenge"] != challenge \
                            or asked["redirect_uri"] != body.get("redirect_uri") \
                            or asked["client_id"] != body.get("client_id") \
                            or (anthropic and body.get("state") != asked["state"]):
                        return self._reply(400, {"error": "invalid_grant"})
                elif grant == "refresh_token":
                    outer.refresh_arrived.set()
                    if outer.refresh_delay:
                        time.sleep(outer.refresh_delay)
                    with outer.lock:
                        token = body.get("refresh_token")
                        if outer.refuse_refresh or token not in outer.valid_refresh:
                            return self._reply(400, {"error": "invalid_grant",
                                                     "error_description": "Refresh token not found or invalid"})
                        outer.valid_refresh.discard(token)
                        outer.refreshes += 1
                else:
                    return self._reply(400, {"error": "unsupported_grant_type"})
                refresh = outer._new("refresh")
                with outer.lock:
                    outer.valid_refresh.add(refresh)
                access = (outer._new("sk-ant-oat01-access") if anthropic else fake_jwt(
                    {"https://api.openai.com/auth": {"chatgpt_account_id": outer.account},
                     "n": outer._new("n")}))
                return self._reply(200, {"access_token": access, "refresh_token": refresh,
                                         "expires_in": outer.expires_in, "token_type": "Bearer"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def _new(self, prefix: str) -> str:
        with self.lock:
            self._counter += 1
            return f"{prefix}-{self._counter}"

    def origins(self, more: dict[str, str] | None = None) -> str:
        """The ``PI_PROVIDER_ORIGINS`` value sending every sign-in origin here (and
        ``more``: the providers' API origins, to an LLM server)."""
        return json.dumps({**{o: self.url for o in ORIGINS}, **(more or {})})

    def issue_refresh_token(self) -> str:
        token = self._new("refresh")
        with self.lock:
            self.valid_refresh.add(token)
        return token

    def of(self, path: str) -> list[dict]:
        with self.lock:
            return [r for r in self.requests if r["path"] == path]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> "SignInServer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
