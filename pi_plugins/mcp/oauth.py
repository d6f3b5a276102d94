"""OAuth for streamable-HTTP MCP servers, as pi 1.6 does it (its ``docs/mcp.md``,
"Authenticate with OAuth"), on the ``mcp`` SDK's own OAuth client
(:class:`mcp.client.auth.OAuthClientProvider`: discovery, client registration, PKCE,
token exchange and refresh).

- Credentials live in ``<agent dir>/mcp-auth.json`` (0600), keyed as pi 1.6 keys them
  (``mcp__<server>|<url>``) with its field names, so either program uses the other's
  sign-in.
- A connection never opens a browser: it sends the stored access token, refreshes it when
  it expired (or once when the server rejects it; never for ``insufficient_scope``), and
  otherwise fails with :class:`SignInRequired`; the connection then shows ``needs-auth``.
- ``pi mcp login`` (:func:`sign_in_settings`, :class:`LoopbackCallback`) shows the
  authorization URL and waits for the redirect on ``http://127.0.0.1:<port>/callback``.
Imported only when an HTTP server that uses OAuth connects."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import logging
import os
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.utils import extract_field_from_www_auth, extract_scope_from_www_auth
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
)

from pi_plugins.mcp.auth_locks import RefreshLock, RefreshLockBusy, file_lock
from pi_plugins.mcp.config import ServerEntry, namespace
from pi_plugins.mcp.connection import McpCallError
from pi_plugins.mcp.oauth_callback import LoopbackCallback, SignInFailed, parse_redirect
from pi_plugins.mcp.oauth_discovery import discovery_block

__all__ = ["LoopbackCallback", "SignInFailed", "parse_redirect"]  # the browser's way back, from its module

AUTH_FILE = "mcp-auth.json"
CLIENT_NAME = "pi"
#: Where a connection that must not sign in says it would redirect (never opened).
UNUSED_REDIRECT = "http://127.0.0.1/callback"
#: pi's Client ID Metadata Documents (``client.json``, ``<callback id>/client.json``)
CLIENT_DOCUMENTS = "https://pi.dev/oauth"
#: pi 1.6: access tokens this close to expiry are refreshed before they are sent.
REFRESH_SKEW_S = 30


class SignInRequired(Exception):
    """The server needs the user to sign in (``pi mcp login`` or ``/mcp login``)."""

    def __init__(self, name: str) -> None:
        super().__init__(f'MCP server "{name}" requires sign-in. Run /mcp to sign in.')


def server_url(entry: ServerEntry) -> str:
    """The URL as the key of its credentials: as JavaScript's ``String(new URL(url))``
    writes it (lower-case scheme and host, ``/`` for an empty path)."""
    parts = urlsplit(entry.config["url"])
    path = parts.path or "/"
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{path}{query}"


def store_key(name: str, url: str) -> str:
    return f"{namespace(name)}|{url}"


class AuthStore:
    """``mcp-auth.json``: every server's OAuth state. Reads and writes hold pi 1.6's lock
    on the file (:func:`.auth_locks.file_lock`), so no two pi processes, of either
    program, interleave their updates; the file is created 0600 in a 0700 agent dir."""

    def __init__(self, agent_dir: Path) -> None:
        self.path = Path(agent_dir) / AUTH_FILE

    @contextlib.contextmanager
    def _locked(self) -> Iterator[tuple[int, dict]]:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            with file_lock(self.path):
                with contextlib.suppress(OSError):
                    os.fchmod(fd, 0o600)
                raw = b""
                while chunk := os.read(fd, 1 << 16):
                    raw += chunk
                try:
                    states = json.loads(raw) if raw.strip() else {}
                except ValueError as exc:
                    raise ValueError(f"{self.path} is not valid JSON ({exc}); fix or delete it") from None
                yield fd, states if isinstance(states, dict) else {}
        finally:
            os.close(fd)

    def _write(self, fd: int, states: dict) -> None:
        data = (json.dumps(states, indent=2) + "\n").encode()
        os.lseek(fd, 0, os.SEEK_SET)
        os.ftruncate(fd, 0)
        os.write(fd, data)
        os.fsync(fd)

    def state(self, name: str, url: str) -> dict:
        if not self.path.exists():
            return {}
        with self._locked() as (_, states):
            found = states.get(store_key(name, url)) or states.get(url)
            return found if isinstance(found, dict) else {}

    def update(self, name: str, url: str, change: Callable[[dict], None]) -> None:
        key = store_key(name, url)
        with self._locked() as (fd, states):
            state = states.get(key)
            if not isinstance(state, dict):
                legacy = states.pop(url, None)  # pi 1.6's older key, by URL alone: taken over
                state = legacy if isinstance(legacy, dict) else {"serverUrl": url}
            change(state)
            states[key] = state
            self._write(fd, states)

    def remove(self, name: str, url: str) -> bool:
        """Whether credentials were stored (and are now gone)."""
        if not self.path.exists():
            return False
        with self._locked() as (fd, states):
            key = next((k for k in (store_key(name, url), url) if k in states), None)
            if key is None:
                return False
            del states[key]
            self._write(fd, states)
            return True


class ServerCredentials:
    """One server's part of ``mcp-auth.json``, as the SDK's ``TokenStorage``.

    ``interactive`` is False for connections, which must not register a client (only a
    sign-in does: the registration names the redirect URI it waits on)."""

    def __init__(self, store: AuthStore, name: str, url: str, *, interactive: bool,
                 redirect_uri: str | None = None, configured_client: OAuthClientInformationFull | None = None) -> None:
        self.store, self.name, self.url = store, name, url
        self.interactive = interactive
        self.redirect_uri = redirect_uri
        self.configured_client = configured_client
        #: pi 1.6's ``discovery`` block to keep with new tokens (the provider's, once found)
        self.discovery: Callable[[], dict | None] = lambda: None

    def _state(self) -> dict:
        return self.store.state(self.name, self.url)

    async def get_tokens(self) -> OAuthToken | None:
        tokens = self._state().get("tokens")
        try:
            return OAuthToken.model_validate(tokens) if isinstance(tokens, dict) else None
        except ValueError:
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        def change(state: dict) -> None:
            state["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
            if tokens.expires_in is not None:
                state["tokensExpireAt"] = int(time.time() * 1000) + int(tokens.expires_in) * 1000
            else:
                state.pop("tokensExpireAt", None)
            discovery = self.discovery()
            if discovery is not None:
                state["discovery"] = discovery
            state.pop("codeVerifier", None)
            state.pop("oauthState", None)

        self.store.update(self.name, self.url, change)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        if self.configured_client is not None:
            return self.configured_client
        stored = self._state().get("clientInformation")
        try:
            client = OAuthClientInformationFull.model_validate(stored) if isinstance(stored, dict) else None
        except ValueError:
            return None
        # a client registered before stays in use while its redirect URI matches (pi 1.6)
        if client is not None and self.redirect_uri is not None and \
                self.redirect_uri not in [str(u) for u in client.redirect_uris or []]:
            return None
        return client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if not self.interactive:
            raise SignInRequired(self.name)

        def change(state: dict) -> None:
            state["clientInformation"] = client_info.model_dump(mode="json", exclude_none=True)

        self.store.update(self.name, self.url, change)

    def expires_at(self) -> float | None:
        """When the stored access token expires (seconds since the epoch), if known."""
        value = self._state().get("tokensExpireAt")
        return value / 1000 if isinstance(value, (int, float)) else None

    def can_refresh(self) -> bool:
        tokens = self._state().get("tokens")
        return isinstance(tokens, dict) and bool(tokens.get("refresh_token"))

    def registered_redirect(self) -> str | None:
        client = self._state().get("clientInformation")
        uris = client.get("redirect_uris") if isinstance(client, dict) else None
        return uris[0] if isinstance(uris, list) and uris and isinstance(uris[0], str) else None


class PiOAuth(OAuthClientProvider):
    """The SDK's provider with what pi 1.6 adds around it:

    - told when the stored access token expires (the SDK keeps that in memory only), so a
      new process refreshes a token within 30 s of its expiry instead of sending it;
      ``expired`` makes it refresh at once (after the server rejected the token);
    - a refresh holds the server's refresh lock (:mod:`.auth_locks`) from re-reading the
      tokens to saving new ones: tokens another process saved meanwhile are used as they
      are, so two processes refresh a rotating refresh token once;
    - ``scope`` (``oauth.scope``) is requested with the scopes the server's challenge
      names, in place of those discovery found (the SDK's choice otherwise);
    - ``metadata_url`` (``oauth.authServerMetadataUrl``) is the authorization server's
      metadata, fetched instead of discovered and trusted as configured;
    - ``offers_document``: a sign-in identifies itself with pi's Client ID Metadata
      Document (the SDK's ``client_metadata_url``) when the authorization server takes
      documents for public clients, with pi 1.6's choice of document and redirect URI
      (:meth:`_choose_client_document`); ``document_required`` (``clientRegistration``
      ``cimd``) fails the sign-in when it does not."""

    def __init__(self, *args: Any, credentials: ServerCredentials, expired: bool = False,
                 scope: str | None = None, metadata_url: str | None = None, offers_document: bool = False,
                 document_required: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.credentials = credentials
        self.offers_document, self.document_required = offers_document, document_required
        # insufficient_scope: the server answered 403 ``insufficient_scope``, only a new sign-in helps
        self.expired, self.sign_in_required, self.insufficient_scope = expired, False, False
        self.scope, self.metadata_url = scope, metadata_url
        self.challenged_scope: str | None = None
        self._configured_issuer: str | None = None
        self._resource_metadata_url: str | None = None
        credentials.discovery = self._discovery_block

    async def _initialize(self) -> None:
        await super()._initialize()
        if not self.credentials.interactive:
            self._adopt_pi_discovery()
        # 1.0, not 0: the SDK reads a false expiry as "never expires"
        expires_at = self.credentials.expires_at()
        self.context.token_expiry_time = 1.0 if self.expired else (
            expires_at - REFRESH_SKEW_S if expires_at is not None else None)

    # -- the flow, wrapped

    async def _auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if not self._initialized:
            await self._initialize()
        lock: RefreshLock | None = None
        flow: AsyncGenerator[httpx2.Request, httpx2.Response] | None = None
        try:
            if self.metadata_url and self.context.oauth_metadata is None:
                response = yield httpx2.Request("GET", self.metadata_url, headers={"Accept": "application/json"})
                await response.aread()
                self._take_metadata(response)
            if not self.context.is_token_valid() and self.context.can_refresh_token():
                lock = await self._lock_for_refresh()
            flow = super()._auth_flow(request)
            outgoing = await flow.__anext__()
            while True:
                outgoing = self._rewritten(outgoing)
                response = yield outgoing
                if outgoing is request and response.status_code in (401, 403):
                    self.challenged_scope = extract_scope_from_www_auth(response)
                    if response.status_code == 403 and not self.credentials.interactive and \
                            extract_field_from_www_auth(response, "error") == "insufficient_scope":
                        self.sign_in_required = self.insufficient_scope = True  # pi 1.6: a refresh keeps the scope
                        raise SignInRequired(self.credentials.name)
                elif outgoing.url.path.startswith("/.well-known/oauth-protected-resource") and \
                        response.status_code == 200:
                    self._resource_metadata_url = str(outgoing.url)
                elif self.offers_document and _is_metadata_request(outgoing) and response.status_code == 200:
                    await response.aread()
                    with contextlib.suppress(ValueError):  # the SDK says what is wrong with it
                        self._choose_client_document(OAuthMetadata.model_validate_json(response.content))
                outgoing = await flow.asend(response)
                if lock is not None:  # the refresh (the flow's first request) is saved
                    lock.release()
                    lock = None
        except StopAsyncIteration:
            return
        finally:
            if lock is not None:
                lock.release()
            if flow is not None:
                await flow.aclose()

    async def _lock_for_refresh(self) -> RefreshLock | None:
        """Hold the refresh lock when this process is still the one to refresh."""
        lock = RefreshLock(self.credentials.store.path.parent, store_key(self.credentials.name, self.credentials.url))
        try:
            await lock.acquire()
        except RefreshLockBusy:
            return None  # as pi 1.6: the request goes out as it is and the server decides
        stored = await self.credentials.get_tokens()
        current = self.context.current_tokens
        if stored is not None and (current is None or stored.access_token != current.access_token):
            # refreshed (or signed in) by another process: sent as it is, as pi 1.6 does
            # (a 401 decides), so the same grant is never refreshed twice
            self.context.current_tokens = stored
            self.context.token_expiry_time = None
            lock.release()
            return None
        if self.context.is_token_valid() or not self.context.can_refresh_token():
            lock.release()
            return None
        return lock

    def _requested_scope(self) -> str | None:
        """pi 1.6's scope: the configured one with the challenge's, else the SDK's choice."""
        if not self.scope:
            return self.context.client_metadata.scope
        words = [*self.scope.split(), *(self.challenged_scope or "").split()]
        return " ".join(dict.fromkeys(words))

    def _rewritten(self, outgoing: httpx2.Request) -> httpx2.Request:
        """The configured metadata in place of discovery, and the configured scope in a
        client registration."""
        path = outgoing.url.path
        if self.metadata_url and _is_metadata_request(outgoing):
            return httpx2.Request("GET", self.metadata_url, headers=outgoing.headers)
        registration = self.context.oauth_metadata.registration_endpoint if self.context.oauth_metadata else None
        if self.scope and outgoing.method == "POST" and (
                str(outgoing.url) == str(registration) or (registration is None and path == "/register")):
            self.context.client_metadata.scope = self._requested_scope()
            body = json.loads(outgoing.content or b"{}")
            body["scope"] = self.context.client_metadata.scope
            return httpx2.Request("POST", outgoing.url, json=body, headers={
                k: v for k, v in outgoing.headers.items() if k.lower() != "content-length"})
        return outgoing

    async def _perform_authorization(self) -> httpx2.Request:
        self.context.client_metadata.scope = self._requested_scope()
        return await super()._perform_authorization()

    def _discovery_block(self) -> dict | None:
        return discovery_block(self.context, self.metadata_url, self._resource_metadata_url)

    def _adopt_pi_discovery(self) -> None:
        """pi 1.6 keeps the authorization server's metadata (``discovery``) and, after a
        sign-in with a Client ID Metadata Document, no client: the metadata gives a
        refresh its token endpoint, and the document the client to refresh as."""
        discovery = self.credentials._state().get("discovery")
        found = discovery.get("authorizationServerMetadata") if isinstance(discovery, dict) else None
        if self.context.oauth_metadata is None and not self.metadata_url and isinstance(found, dict):
            with contextlib.suppress(ValueError):
                self.context.oauth_metadata = OAuthMetadata.model_validate(found)
        if self.context.client_info is None and self.offers_document and self.context.oauth_metadata is not None \
                and self.context.current_tokens is not None:
            with contextlib.suppress(McpCallError, SignInRequired):
                self._choose_client_document(self.context.oauth_metadata)
            if self.context.client_metadata_url:
                self.context.client_info = OAuthClientInformationFull(
                    client_id=self.context.client_metadata_url, token_endpoint_auth_method="none",
                    redirect_uris=self.context.client_metadata.redirect_uris)

    # -- Client ID Metadata Documents

    def _choose_client_document(self, metadata: OAuthMetadata) -> None:
        """pi 1.6's choice: ``https://pi.dev/oauth/client.json`` when authorization
        responses carry ``iss`` (RFC 9207), else the document and redirect path of this
        server (``<id>/client.json``, ``/callback/<id>``); none when the server does not
        take documents for public clients (then the SDK registers a client)."""
        if self.context.client_info is not None or not self.context.client_metadata.redirect_uris:
            return
        supported = bool(metadata.client_id_metadata_document_supported) and \
            "none" in (metadata.token_endpoint_auth_methods_supported or [])
        if not supported:
            if self.document_required and not self.credentials.interactive:
                raise SignInRequired(self.credentials.name)  # said by the sign-in itself
            if self.document_required:
                raise McpCallError("The authorization server does not support Client ID Metadata Documents for "
                                   'public clients; remove oauth.clientRegistration "cimd"')
            self.context.client_metadata_url = None
            return
        if metadata.authorization_response_iss_parameter_supported:
            self.context.client_metadata_url = f"{CLIENT_DOCUMENTS}/client.json"
            return
        ident = callback_id(self.context.server_url)
        parts = urlsplit(str(self.context.client_metadata.redirect_uris[0]))
        redirect = parts._replace(path=f"{parts.path.rstrip('/')}/{ident}").geturl()
        self.context.client_metadata_url = f"{CLIENT_DOCUMENTS}/{ident}/client.json"
        self.context.client_metadata.redirect_uris = [redirect]  # type: ignore[list-item]

    # -- oauth.authServerMetadataUrl

    def _take_metadata(self, response: httpx2.Response) -> None:
        if response.status_code != 200:
            raise McpCallError(f"HTTP {response.status_code} loading authorization server metadata "
                               f"from {self.metadata_url}")
        try:
            metadata = OAuthMetadata.model_validate_json(response.content)
        except ValueError as exc:
            raise McpCallError(f"Invalid authorization server metadata at {self.metadata_url}: "
                               f"{str(exc).splitlines()[0]}") from None
        self.context.oauth_metadata = metadata
        self._configured_issuer = str(metadata.issuer)

    def _select_authorization_server(self, advertised: list[str]) -> str:
        return self._configured_issuer or super()._select_authorization_server(advertised)

    def _expected_issuer(self) -> str:
        return self._configured_issuer or super()._expected_issuer()


def _is_metadata_request(request: httpx2.Request) -> bool:
    path = request.url.path
    return request.method == "GET" and (
        "/.well-known/oauth-authorization-server" in path or "/.well-known/openid-configuration" in path)


def callback_id(url: str) -> str:
    """12 characters naming an MCP server URL in a document's path, as pi 1.6 (and Codex)
    compute them."""
    digest = hashlib.sha256(url.split("#", 1)[0].encode()).digest()[:9]
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def offers_document(entry: ServerEntry) -> bool:
    """Whether a sign-in may use pi's Client ID Metadata Document (pi 1.6's rule):
    ``clientRegistration`` ``cimd``, or ``auto`` without ``clientId`` or ``clientName``
    and with a callback the documents list (``/callback`` on localhost or 127.0.0.1)."""
    oauth = _configured(entry)
    mode = oauth.get("clientRegistration") or "auto"
    if mode != "auto":
        return mode == "cimd"
    callback = oauth.get("callbackUrl")
    listed = not isinstance(callback, str) or (
        urlsplit(callback).hostname != "::1" and urlsplit(callback).path == "/callback")
    return not oauth.get("clientId") and not oauth.get("clientName") and listed


def _loopback(host: str | None) -> bool:
    return host in ("localhost", "127.0.0.1", "::1", "[::1]")


def metadata_url(entry: ServerEntry) -> str | None:
    """``oauth.authServerMetadataUrl``, refused unless HTTPS (or HTTP on loopback)."""
    url = _configured(entry).get("authServerMetadataUrl")
    if not isinstance(url, str) or not url:
        return None
    parts = urlsplit(url)
    if parts.scheme != "https" and not (parts.scheme == "http" and _loopback(parts.hostname)):
        raise McpCallError(f"Refusing to send OAuth credentials to non-HTTPS endpoint {url}")
    return url


@dataclass
class SignInSettings:
    """What ``pi mcp login`` gives a connection: where the browser is sent back to, how
    the authorization URL is shown, and how the redirect is awaited."""

    redirect_uri: str
    show_url: Callable[[str], Awaitable[None]]
    wait_for_redirect: Callable[[], Awaitable[AuthorizationCodeResult]]


def _configured(entry: ServerEntry) -> dict:
    oauth = entry.config.get("oauth")
    return oauth if isinstance(oauth, dict) else {}


def make_auth(entry: ServerEntry, agent_dir: Path, sign_in: SignInSettings | None = None,
              expired: bool = False) -> PiOAuth:
    """The httpx auth for one connection to an OAuth server."""
    from pi_plugins.mcp.values import resolve

    oauth = _configured(entry)
    url = server_url(entry)
    redirect = sign_in.redirect_uri if sign_in else None
    configured_client = None
    if isinstance(oauth.get("clientId"), str):
        secret = oauth.get("clientSecret")
        secret = resolve(secret, f'MCP server "{entry.name}" oauth.clientSecret') if isinstance(secret, str) else None
        configured_client = OAuthClientInformationFull(
            client_id=oauth["clientId"], client_secret=secret, redirect_uris=[redirect or UNUSED_REDIRECT],  # type: ignore[list-item]
            token_endpoint_auth_method="client_secret_post" if secret else "none")
    credentials = ServerCredentials(AuthStore(agent_dir), entry.name, url, interactive=sign_in is not None,
                                    redirect_uri=redirect, configured_client=configured_client)
    metadata = OAuthClientMetadata(
        client_name=oauth.get("clientName") if isinstance(oauth.get("clientName"), str) else CLIENT_NAME,
        redirect_uris=[redirect or UNUSED_REDIRECT],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"], response_types=["code"],
        token_endpoint_auth_method="none",
        scope=oauth.get("scope") if isinstance(oauth.get("scope"), str) else None)

    async def refuse(_url: str) -> None:
        provider.sign_in_required = True
        raise SignInRequired(entry.name)

    async def never_called() -> AuthorizationCodeResult:
        raise SignInRequired(entry.name)

    async def show(authorization_url: str) -> None:
        assert sign_in is not None
        await sign_in.show_url(authorization_url)

    provider = PiOAuth(url, metadata, credentials, redirect_handler=show if sign_in else refuse,
                       callback_handler=sign_in.wait_for_redirect if sign_in else never_called,
                       credentials=credentials, expired=expired,
                       scope=oauth.get("scope") if isinstance(oauth.get("scope"), str) else None,
                       metadata_url=metadata_url(entry), offers_document=offers_document(entry),
                       document_required=oauth.get("clientRegistration") == "cimd")
    return provider


def needs_sign_in(exc: BaseException, kinds: tuple[type[BaseException], ...] = ()) -> bool:
    """Whether ``exc`` (or an error inside it) is :class:`SignInRequired` (or of ``kinds``)."""
    kinds = kinds or (SignInRequired,)
    seen: set[int] = set()
    stack = [exc]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, kinds):
            return True
        if isinstance(current, BaseExceptionGroup):
            stack += list(current.exceptions)
        for linked in (current.__cause__, current.__context__):
            if linked is not None:
                stack.append(linked)
    return False


class _QuietSignIn(logging.Filter):
    """The SDK logs every failed flow with its traceback; a needed sign-in is a state and
    a refused one an answer, each said once in pi's words."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return error is None or not needs_sign_in(error, (SignInRequired, SignInFailed))


logging.getLogger("mcp.client.auth.oauth2").addFilter(_QuietSignIn())


@dataclass
class CallbackSettings:
    """Where the sign-in listens, as pi 1.6's ``loopbackSettings``: ``oauth.callbackUrl``
    (default ``http://127.0.0.1/callback``; ``localhost`` is served on 127.0.0.1) and its
    port, else ``oauth.callbackPort``, else the port of the client registered before (so
    it stays in use), else 0 (a free one, then added to the URI)."""

    host: str
    redirect_host: str
    port: int
    path: str
    fixed: str | None
    #: a port the settings name (a taken one is an error, not a reason to take another)
    configured_port: bool
    extra_paths: tuple[str, ...] = ()

    def callback(self, port: int | None = None) -> LoopbackCallback:
        return LoopbackCallback(self.port if port is None else port, self.path, self.host, self.redirect_host,
                                self.fixed if port is None else None, self.extra_paths)


def callback_settings(entry: ServerEntry, agent_dir: Path) -> CallbackSettings:
    oauth = _configured(entry)
    configured = oauth.get("callbackUrl") if isinstance(oauth.get("callbackUrl"), str) else None
    parts = urlsplit(configured or "http://127.0.0.1/callback")
    hostname = parts.hostname or "127.0.0.1"
    redirect_host = f"[{hostname}]" if ":" in hostname else hostname
    callback_port = oauth.get("callbackPort") if isinstance(oauth.get("callbackPort"), int) else None
    port = parts.port or callback_port
    fixed = configured if parts.port else (
        f"http://{redirect_host}:{port}{parts.path or '/'}" if port is not None else None)
    configured_port = port is not None
    if port is None:
        stored = ServerCredentials(AuthStore(agent_dir), entry.name, server_url(entry), interactive=False)
        registered = stored.registered_redirect()
        port = urlsplit(registered).port if registered else None
    path = parts.path or "/"
    extra = (f"{path.rstrip('/')}/{callback_id(server_url(entry))}",) if offers_document(entry) else ()
    return CallbackSettings("127.0.0.1" if hostname == "localhost" else hostname, redirect_host, port or 0,
                            path, fixed, configured_port, extra)
