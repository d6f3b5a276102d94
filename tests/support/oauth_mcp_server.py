"""An MCP server that requires OAuth, and its own authorization server, both from the
``mcp`` SDK (``MCPServer`` with an ``auth_server_provider``), on 127.0.0.1:
``python oauth_mcp_server.py PORT``. The MCP endpoint is ``/mcp``; the authorization
server (metadata, ``/register``, ``/authorize``, ``/token``) is on the same origin.

``/authorize`` approves at once: it redirects straight back to the client's redirect URI
with a code, so a test plays the browser by following that redirect with httpx.

Environment: ``TOKEN_SECONDS`` (access-token lifetime, default 3600), ``EVENTS_FILE`` (one
line per grant: ``code`` or ``refresh``, so a test can tell a refresh from a new sign-in),
``REFRESH_DELAY`` (seconds a refresh takes, so two clients' refreshes overlap),
``WRONG_AS=1`` (the protected resource metadata names an authorization server that does
not exist, as some servers do), ``CIMD=1`` (the authorization server takes Client ID
Metadata Documents: a client id on ``https://pi.dev/oauth/`` is a public client whose
document lists loopback ``/callback`` URIs), ``ISS=1`` (authorization responses carry
``iss``, RFC 9207). ``<EVENTS_FILE>.clients`` gets the client id and redirect URI of each
authorization.

Tools: ``add``, ``whoami`` (the access token the request carried).
"""

import os
import secrets
import sys
import time

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

TOKEN_SECONDS = int(os.environ.get("TOKEN_SECONDS", "3600"))


def _event(kind: str) -> None:
    if os.environ.get("EVENTS_FILE"):
        with open(os.environ["EVENTS_FILE"], "a") as f:
            f.write(kind + "\n")


class DocumentClient(OAuthClientInformationFull):
    """A client known by its metadata document, which lists ``/callback`` and
    ``/callback/<id>`` on loopback at any port (the stand-in does not fetch it)."""

    def validate_redirect_uri(self, redirect_uri):
        from urllib.parse import urlsplit

        parts = urlsplit(str(redirect_uri))
        if parts.hostname not in ("127.0.0.1", "localhost") or not parts.path.startswith("/callback"):
            from mcp.shared.auth import InvalidRedirectUriError

            raise InvalidRedirectUriError(f"Redirect URI '{redirect_uri}' not in the client's document")
        return redirect_uri


class Provider:
    """An in-memory authorization server that approves every request."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.access: dict[str, AccessToken] = {}

    async def get_client(self, client_id):
        if os.environ.get("CIMD") and client_id.startswith("https://pi.dev/oauth/"):
            return DocumentClient(client_id=client_id, redirect_uris=None, token_endpoint_auth_method="none",
                                  grant_types=["authorization_code", "refresh_token"])
        return self.clients.get(client_id)

    async def register_client(self, client_info):
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client, params: AuthorizationParams) -> str:
        if os.environ.get("EVENTS_FILE"):
            with open(os.environ["EVENTS_FILE"] + ".clients", "a") as f:
                f.write(f"{client.client_id} {params.redirect_uri}\n")
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [], expires_at=time.time() + 300, client_id=client.client_id,
            code_challenge=params.code_challenge, redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly, resource=params.resource)
        iss = {"iss": origin} if os.environ.get("ISS") else {}
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state, **iss)

    async def load_authorization_code(self, client, authorization_code):
        return self.codes.get(authorization_code)

    def _tokens(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = "at-" + secrets.token_urlsafe(12), "rt-" + secrets.token_urlsafe(12)
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                          expires_at=int(time.time()) + TOKEN_SECONDS, resource=resource)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        return OAuthToken(access_token=access, token_type="Bearer", expires_in=TOKEN_SECONDS, refresh_token=refresh,
                          scope=" ".join(scopes) or None)

    async def exchange_authorization_code(self, client, authorization_code):
        self.codes.pop(authorization_code.code, None)
        _event("code")
        return self._tokens(client.client_id, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(self, client, refresh_token):
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client, refresh_token, scopes):
        import asyncio

        await asyncio.sleep(float(os.environ.get("REFRESH_DELAY", "0")))
        if refresh_token.token not in self.refresh:  # refreshed meanwhile: rotated away
            from mcp.server.auth.provider import TokenError

            raise TokenError("invalid_grant", "refresh token already used")
        self.refresh.pop(refresh_token.token, None)
        _event("refresh")
        return self._tokens(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token):
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token):
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


port = int(sys.argv[1]) if len(sys.argv) > 1 else 8765
origin = f"http://127.0.0.1:{port}"
server = MCPServer(
    "secure", instructions="Tools behind OAuth.", auth_server_provider=Provider(),
    auth=AuthSettings(issuer_url=origin, resource_server_url=f"{origin}/mcp",
                      client_registration_options=ClientRegistrationOptions(enabled=True),
                      revocation_options=RevocationOptions(enabled=True)))


@server.tool()
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


@server.tool()
def whoami() -> str:
    """The access token this request carried."""
    from mcp.server.auth.middleware.auth_context import get_access_token

    token = get_access_token()
    return token.token if token else "anonymous"


def rewriting_metadata(app):
    """Rewrite the metadata documents as the environment asks (``WRONG_AS``, ``CIMD``,
    ``ISS``), and answer every MCP request 403 ``insufficient_scope`` once the file
    ``DEMAND_SCOPE_FILE`` names exists."""
    import json

    def change(path, body):
        if path.startswith("/.well-known/oauth-protected-resource") and os.environ.get("WRONG_AS"):
            body["authorization_servers"] = ["http://127.0.0.1:9/nowhere"]  # nothing listens on port 9
        if path.startswith("/.well-known/oauth-authorization-server"):
            if os.environ.get("CIMD"):
                body["client_id_metadata_document_supported"] = True
                body["token_endpoint_auth_methods_supported"] = [*body["token_endpoint_auth_methods_supported"],
                                                                 "none"]
            if os.environ.get("ISS"):
                body["authorization_response_iss_parameter_supported"] = True
        return body

    async def wrapped(scope, receive, send):
        demand = os.environ.get("DEMAND_SCOPE_FILE")
        if demand and scope["type"] == "http" and scope["path"] == "/mcp" and os.path.exists(demand):
            _event("insufficient_scope")  # the token is valid but lacks the scope now asked for
            await send({"type": "http.response.start", "status": 403, "headers": [
                (b"www-authenticate", b'Bearer error="insufficient_scope", scope="admin"'),
                (b"content-length", b"0")]})
            return await send({"type": "http.response.body", "body": b""})
        if scope["type"] != "http" or not scope["path"].startswith("/.well-known/"):
            return await app(scope, receive, send)
        parts, status = [], [200]

        async def capture(message):
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            if message["type"] == "http.response.body":
                parts.append(message.get("body", b""))
                if not message.get("more_body"):
                    body = b"".join(parts)
                    if status[0] == 200:
                        body = json.dumps(change(scope["path"], json.loads(body))).encode()
                    await send({"type": "http.response.start", "status": status[0],
                                "headers": [(b"content-type", b"application/json"),
                                            (b"content-length", str(len(body)).encode())]})
                    await send({"type": "http.response.body", "body": body})

        await app(scope, receive, capture)

    return wrapped


if __name__ == "__main__":
    if any(os.environ.get(name) for name in ("WRONG_AS", "CIMD", "ISS", "DEMAND_SCOPE_FILE")):
        import uvicorn

        uvicorn.run(rewriting_metadata(server.streamable_http_app()), host="127.0.0.1", port=port,
                    log_level="warning")
    else:
        server.run("streamable-http", host="127.0.0.1", port=port)
