"""pi 1.6's sign-ins, each played through against a local stand-in of its authorization
server (``PI_PROVIDER_ORIGINS``): Codex by device code, Sign in with ChatGPT on
``openai``, xAI, Kimi Code and Meta by device code, OpenRouter and Radius in the browser
(the browser step is httpx following the provider's redirect to the local callback).
Each lands in auth.json in pi 1.6's shape and refreshes as pi 1.6 refreshes it."""

import asyncio
import json
import os
import stat
import threading
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from support.signin16_server import Signin16Server
from support.signin_server import SignInServer

from pi_plugins.models.auth import AuthStorage
from pi_plugins.signin import device_code
from pi_plugins.signin.device_signins import KimiCodingSignIn
from pi_plugins.signin.flows import SIGN_INS, LoginCallbacks, SignInError
from pi_plugins.signin.openrouter import NEVER

DEVICE_ID = "0f8e7d6c-5b4a-4321-8fed-cba987654321"


@pytest.fixture(autouse=True)
def quick_polls(monkeypatch):
    """The stand-ins ask for 50 ms between polls; pi's floor of a second would make each
    test wait for nothing."""
    monkeypatch.setattr(device_code, "MINIMUM_INTERVAL", 0.01)


@pytest.fixture
def side16(monkeypatch):
    with Signin16Server() as server:
        monkeypatch.setenv("PI_PROVIDER_ORIGINS", server.origins())
        yield server


@pytest.fixture
def store(tmp_path):
    return AuthStorage(tmp_path / "agent" / "auth.json", sign_ins=SIGN_INS)


def stored(store: AuthStorage) -> dict:
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600
    return json.loads(store.path.read_text())


def browser(seen: list):
    """The user's browser: opens the link and follows the provider's redirect back."""
    def on_auth(url, instructions):
        seen.append((url, instructions))
        threading.Thread(target=lambda: httpx.get(url, follow_redirects=True, timeout=5), daemon=True).start()
    return on_auth


async def no_prompt(message, placeholder, allow_empty):
    raise AssertionError(f"unexpected prompt {message!r}")


def recorder(asked: list, answer: str | None):
    async def select(message, options):
        asked.append((message, options))
        return answer
    return select


def device_callbacks(shown: list, *, select=None, progress=None) -> LoginCallbacks:
    return LoginCallbacks(on_auth=lambda url, text: pytest.fail(f"a link was shown: {url}"), prompt=no_prompt,
                          device_code=lambda url, code: shown.append((url, code)), select=select,
                          progress=progress or (lambda message: None))


def query_of(url: str) -> dict:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


# ---------------------------------------------------------------- Codex by device code


def test_codex_device_code_sign_in_waits_for_the_code_and_keeps_the_account_id(store, monkeypatch):
    with SignInServer() as server:
        monkeypatch.setenv("PI_PROVIDER_ORIGINS", server.origins())
        server.device_polls_pending = 2
        asked, shown = [], []
        callbacks = device_callbacks(shown, select=recorder(asked, "device_code"))
        asyncio.run(store.login("openai-codex", callbacks))
        [(message, options)] = asked
        assert message == "Select OpenAI Codex login method:"
        assert options == [("browser", "Browser login (default)"), ("device_code", "Device code login (headless)")]
        assert shown == [("https://auth.openai.com/codex/device", "CDX-4321")]
        [start] = server.of("/api/accounts/deviceauth/usercode")
        assert start["body"] == {"client_id": "app_EMoamEEZ73f0CkXaXp7hrann"}
        polls = server.of("/api/accounts/deviceauth/token")
        assert len(polls) == 3 and polls[0]["body"] == {"device_auth_id": "deviceauth-1", "user_code": "CDX-4321"}
        [exchange] = server.of("/oauth/token")
        assert exchange["body"]["redirect_uri"] == "https://auth.openai.com/deviceauth/callback"
    entry = stored(store)["openai-codex"]
    assert list(entry) == ["type", "access", "refresh", "expires", "accountId"]
    assert entry["accountId"] == "acct-123"


def test_codex_device_code_login_on_a_server_without_it_says_so(store, monkeypatch):
    with Signin16Server() as server:  # it has no /api/accounts/deviceauth: 404
        monkeypatch.setenv("PI_PROVIDER_ORIGINS", server.origins())
        with pytest.raises(SignInError, match="device code login is not enabled for this server"):
            asyncio.run(store.login("openai-codex", device_callbacks([], select=recorder([], "device_code"))))
    assert not store.path.exists()


# ---------------------------------------------------------------- ChatGPT on openai


def test_sign_in_with_chatgpt_on_openai_registers_a_client_and_refreshes_with_it(side16, store, callback_ports):
    seen, progress = [], []
    callbacks = LoginCallbacks(on_auth=browser(seen), prompt=no_prompt, progress=progress.append)
    asyncio.run(store.login("openai", callbacks, device_id=DEVICE_ID.upper()))
    [(url, instructions)] = seen
    assert urlsplit(url).path == "/api/accounts/authorize" and "paste the final redirect URL" in instructions
    query = query_of(url)
    assert (query["client_id"], query["agent_name_hint"]) == ("dynamic_agent_client", "Pi")
    assert query["ext_agent_host_id"] == f"urn:uuid:{DEVICE_ID}"
    assert query["redirect_uri"] == "http://127.0.0.1:1455/auth/callback"
    assert query["resource"] == "https://api.openai.com/v1"
    assert query["scope"] == "openid profile email offline_access resource.invoke chatgpt.tokens.use.direct"
    assert query["nonce"] and query["state"] and query["code_challenge_method"] == "S256"
    assert "Exchanging authorization code for tokens..." in progress
    entry = stored(store)["openai"]
    assert list(entry) == ["type", "access", "refresh", "expires", "clientId", "scopes"]
    assert entry["clientId"] == "client-issued-7" and "chatgpt.tokens.use.direct" in entry["scopes"]
    store.set("openai", {**entry, "expires": 0})
    assert asyncio.run(store.refreshed_key("openai")).startswith("chatgpt-access-")
    [_, refresh] = side16.of("/api/accounts/oauth/token")
    assert refresh["body"]["client_id"] == "client-issued-7" and refresh["body"]["grant_type"] == "refresh_token"


def test_chatgpt_refuses_a_pasted_url_that_is_not_its_callback_and_a_grant_without_direct_use(side16, store,
                                                                                              callback_ports):
    async def paste():
        return "http://localhost:1455/auth/callback?code=c&state=s&client_id=x"

    callbacks = LoginCallbacks(on_auth=lambda *a: None, prompt=no_prompt, manual_code=paste)
    with pytest.raises(SignInError, match="must start with http://127.0.0.1:1455/auth/callback"):
        asyncio.run(store.login("openai", callbacks, device_id=DEVICE_ID))
    with pytest.raises(SignInError, match="requires a device ID"):
        asyncio.run(store.login("openai", callbacks))
    side16.scope_granted = "openid profile email"
    with pytest.raises(SignInError, match="did not include chatgpt.tokens.use.direct"):
        asyncio.run(store.login("openai", LoginCallbacks(on_auth=browser([]), prompt=no_prompt), device_id=DEVICE_ID))
    assert not store.path.exists()


# ---------------------------------------------------------------- xAI, Kimi Code, Meta


def test_xai_device_sign_in_slows_down_when_asked_and_keeps_an_unrotated_refresh_token(side16, store):
    side16.slow_downs, side16.pending_polls = 1, 1
    shown = []
    asyncio.run(store.login("xai", device_callbacks(shown)))
    assert shown == [("https://accounts.x.ai/device?user_code=WXYZ-2345", "WXYZ-2345")]
    [start] = side16.of("/oauth2/device/code")
    assert start["body"] == {"client_id": "b1a00492-073a-47ea-816f-4c329264a828",
                             "scope": "openid profile email offline_access grok-cli:access api:access",
                             "referrer": "pi"}
    assert len(side16.of("/oauth2/token")) == 3
    entry = stored(store)["xai"]
    assert list(entry) == ["type", "access", "refresh", "expires"]
    store.set("xai", {**entry, "expires": 0})
    fresh = asyncio.run(store.refreshed_key("xai"))
    after = stored(store)["xai"]
    assert after["access"] == fresh != entry["access"] and after["refresh"] == entry["refresh"]


@pytest.mark.parametrize(("error", "message"), [("access_denied", "xAI device authorization was denied"),
                                                ("expired_token", "xAI device code expired")])
def test_xai_device_sign_in_ends_with_pis_words_when_refused(side16, store, error, message):
    side16.poll_error = error
    with pytest.raises(SignInError, match=message):
        asyncio.run(store.login("xai", device_callbacks([])))
    assert not store.path.exists()


def test_a_device_code_that_runs_out_after_slow_downs_blames_the_clock(side16, store):
    side16.slow_downs, side16.device_expires_in = 1000, 0.3
    with pytest.raises(SignInError, match="after one or more slow_down responses"):
        asyncio.run(store.login("xai", device_callbacks([])))


def test_kimi_code_device_sign_in_and_a_refresh_that_rides_out_a_busy_server(side16, store, monkeypatch):
    monkeypatch.setattr(KimiCodingSignIn, "retry_delay", 0.01)
    shown = []
    asyncio.run(store.login("kimi-coding", device_callbacks(shown)))
    assert shown == [("https://www.kimi.com/code/device?user_code=WXYZ-2345", "WXYZ-2345")]
    [start] = side16.of("/api/oauth/device_authorization")
    assert start["body"] == {"client_id": "17e5f671-d194-4dfb-9706-5516cb48c098"}
    entry = stored(store)["kimi-coding"]
    assert list(entry) == ["type", "access", "refresh", "expires"]
    store.set("kimi-coding", {**entry, "expires": 0})
    side16.refresh_failures = [503, 429]
    assert asyncio.run(store.refreshed_key("kimi-coding")).startswith("kimi-access-")
    assert stored(store)["kimi-coding"]["refresh"] != entry["refresh"]  # rotated


def test_meta_device_sign_in_mints_a_model_api_key_and_a_refresh_mints_another(side16, store):
    progress = []
    asyncio.run(store.login("meta", device_callbacks([], progress=progress.append)))
    assert "Enabling Meta Model API access..." in progress
    entry = stored(store)["meta"]
    assert list(entry) == ["type", "refresh", "access", "expires"]
    assert entry["refresh"].startswith("meta-identity-") and entry["access"].startswith("meta-key-")
    [mint] = side16.of("/muse-code/key")
    assert mint["headers"]["x-api-version"] == "1.0.0" and mint["body"] == {}
    store.set("meta", {**entry, "expires": 0})
    assert asyncio.run(store.refreshed_key("meta")) not in (None, entry["access"])
    store.set("meta", {**stored(store)["meta"], "expires": 0})
    side16.mint_status = 401
    with pytest.raises(Exception, match="Meta session expired .*Run `/login meta`"):
        asyncio.run(store.refreshed_key("meta"))
    assert stored(store)["meta"]["refresh"] == entry["refresh"]  # kept for a later try


# ---------------------------------------------------------------- OpenRouter, Radius


def test_openrouter_sign_in_trades_the_code_for_a_key_that_never_expires(side16, store):
    seen, progress = [], []
    asyncio.run(store.login("openrouter", LoginCallbacks(on_auth=browser(seen), prompt=no_prompt,
                                                         progress=progress.append)))
    query = query_of(seen[0][0])
    assert query["callback_url"].startswith("http://127.0.0.1:") and "/oauth/callback/" in query["callback_url"]
    assert query["code_challenge_method"] == "S256"
    assert progress[0] == f"Listening for OpenRouter OAuth callback on {query['callback_url']}"
    entry = stored(store)["openrouter"]
    assert entry == {"type": "oauth", "access": entry["access"], "refresh": "", "expires": NEVER}
    assert entry["access"].startswith("sk-or-v1-")
    assert store.api_key("openrouter") == entry["access"]


def test_radius_sign_in_in_the_browser_then_by_device_code(side16, store, callback_ports):
    asked, seen = [], []
    callbacks = LoginCallbacks(on_auth=browser(seen), prompt=no_prompt, select=recorder(asked, "browser"))
    asyncio.run(store.login("radius", callbacks))
    assert asked[0][0] == "Sign in to Radius:"
    assert [label for _, label in asked[0][1]] == [
        "Sign in with browser (recommended)", "Sign in with device code (when signing in from another device)"]
    query = query_of(seen[0][0])
    assert (query["client_id"], query["scope"], query["handoff"]) == ("pi-gateway", "gateway offline_access", "url")
    assert query["redirect_uri"] == "http://127.0.0.1:1456/oauth/callback"
    entry = stored(store)["radius"]
    assert list(entry) == ["type", "access", "refresh", "expires", "scope"]
    shown = []
    asyncio.run(store.login("radius", device_callbacks(shown, select=recorder([], "device-code"))))
    assert shown == [("https://radius.pi.dev/device", "WXYZ-2345")]
    assert stored(store)["radius"]["access"] != entry["access"]


def test_a_malformed_answer_is_a_clear_error_and_stores_nothing(store, monkeypatch):
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Broken(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            self.send_response(200)
            self.send_header("Content-Length", "9")
            self.end_headers()
            self.wfile.write(b"<html>oops")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Broken)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("PI_PROVIDER_ORIGINS", json.dumps({"https://auth.x.ai": f"http://127.0.0.1:{server.server_address[1]}"}))
        with pytest.raises(SignInError, match=r"xAI OAuth returned invalid JSON \(HTTP 200\)"):
            asyncio.run(store.login("xai", device_callbacks([])))
    finally:
        server.shutdown()
        server.server_close()
    assert not store.path.exists()


@pytest.mark.process
@pytest.mark.parametrize(("provider", "model"), [("xai", "xai/grok-2"), ("openai", "openai/gpt-4.1"),
                                               ("kimi-coding", "kimi-coding/kimi-for-coding")])
def test_a_prompt_refreshes_an_expired_sign_in_and_sends_its_new_token(tmp_path, llm_server, provider, model):
    """The whole way: an expired sign-in in auth.json, ``pi -p``, the refresh at the
    stand-in, the new token as the request's bearer and back in auth.json."""
    import subprocess
    import sys

    from support.llm_server import Reply

    agent = tmp_path / "agent"
    agent.mkdir()
    with Signin16Server() as server:
        entry = {"type": "oauth", "access": "old-access", "refresh": server.issue_refresh_token(
            {"openai": "chatgpt", "kimi-coding": "kimi"}.get(provider, provider)), "expires": 1}
        if provider == "openai":
            entry.update(clientId="client-issued-7", scopes=["chatgpt.tokens.use.direct"])
        (agent / "auth.json").write_text(json.dumps({provider: entry}))
        os.chmod(agent / "auth.json", 0o600)
        api = {"xai": "https://api.x.ai", "openai": "https://api.openai.com",
               "kimi-coding": "https://api.kimi.com"}[provider]
        origins = {**json.loads(server.origins()), api: llm_server.url}
        llm_server.push(Reply(text="signed in"))
        done = subprocess.run([sys.executable, "-m", "pi_plugins.cli", "--model", model, "--no-session", "-p", "Hi"],
                              env={"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"),
                                   "PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1",
                                   "PI_PROVIDER_ORIGINS": json.dumps(origins)},
                              cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "signed in"
    fresh = json.loads((agent / "auth.json").read_text())[provider]
    assert fresh["access"] != "old-access" and fresh["expires"] > 1
    assert llm_server.requests[0].headers["authorization"] == f"Bearer {fresh['access']}"
    assert "x-api-key" not in llm_server.requests[0].headers  # Kimi Code's too, as pi 1.6 sends it
