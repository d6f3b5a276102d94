"""The subscription sign-ins, each played through from the authorize link (or device
code) to the token against a local server standing in for the provider
(``PI_PROVIDER_ORIGINS``), and stored in auth.json in pi's shape."""

import asyncio
import json
import os
import stat
import threading
import urllib.request
from urllib.parse import parse_qs, urlsplit

import pytest
from support.signin_server import SignInServer

from pi_plugins.models.auth import AuthStorage
from pi_plugins.signin.flows import (
    SIGN_INS,
    AnthropicSignIn,
    GitHubCopilotSignIn,
    LoginCallbacks,
    OpenAICodexSignIn,
    SignInError,
    copilot_base_url,
)


@pytest.fixture
def provider_side(monkeypatch):
    with SignInServer() as server:
        monkeypatch.setenv("PI_PROVIDER_ORIGINS", server.origins())
        yield server


@pytest.fixture
def store(tmp_path):
    return AuthStorage(tmp_path / "agent" / "auth.json", sign_ins=SIGN_INS)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def final_redirect(url: str) -> str:
    """What the user would paste: where the provider's page sends the browser."""
    try:
        urllib.request.build_opener(NoRedirect).open(url, timeout=5)
    except urllib.error.HTTPError as exc:
        return exc.headers["Location"]
    raise AssertionError("the authorize page did not redirect")


def browser(seen: list):
    """A browser that follows the link through the provider's page to the local callback."""
    def on_auth(url, instructions):
        seen.append((url, instructions))
        threading.Thread(target=lambda: urllib.request.urlopen(url, timeout=5).read(), daemon=True).start()
    return on_auth


async def no_prompt(message, placeholder, allow_empty):
    raise AssertionError(f"unexpected prompt {message!r}")


def stored(store: AuthStorage) -> dict:
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600
    return json.loads(store.path.read_text())


def test_claude_sign_in_through_the_browser_stores_pi_shaped_credentials(provider_side, store, callback_ports):
    seen = []
    asyncio.run(store.login("anthropic", LoginCallbacks(on_auth=browser(seen), prompt=no_prompt)))
    [(url, instructions)] = seen
    link = urlsplit(url)
    query = {k: v[0] for k, v in parse_qs(link.query).items()}
    assert link.path == "/oauth/authorize" and "paste the final redirect URL" in instructions
    assert query["client_id"] == "9d1c250a-e61b-44d9-88ed-5944d1962f5e"
    assert query["redirect_uri"] == "http://localhost:53692/callback"
    assert query["scope"] == ("org:create_api_key user:profile user:inference user:sessions:claude_code "
                              "user:mcp_servers user:file_upload")
    assert query["code"] == "true" and query["response_type"] == "code"
    assert query["code_challenge_method"] == "S256"
    [exchange] = provider_side.of("/v1/oauth/token")
    assert exchange["body"]["state"] == exchange["body"]["code_verifier"] == query["state"]
    entry = stored(store)["anthropic"]
    assert list(entry) == ["type", "refresh", "access", "expires"]
    assert entry["type"] == "oauth" and entry["access"].startswith("sk-ant-oat01-")


def test_claude_sign_in_takes_the_pasted_redirect_url(provider_side, store, monkeypatch):
    monkeypatch.setattr(AnthropicSignIn, "callback_port", 0)  # the paste wins; no fixed port
    links = []

    async def paste():
        while not links:
            await asyncio.sleep(0.01)
        return await asyncio.to_thread(final_redirect, links[0])

    callbacks = LoginCallbacks(on_auth=lambda url, _: links.append(url), prompt=no_prompt, manual_code=paste)
    asyncio.run(store.login("anthropic", callbacks))
    assert stored(store)["anthropic"]["refresh"].startswith("refresh-")


def test_a_pasted_url_of_another_sign_in_is_refused_for_its_state(provider_side, store, monkeypatch):
    monkeypatch.setattr(AnthropicSignIn, "callback_port", 0)

    async def paste():
        return "http://localhost:53692/callback?code=c-1&state=someone-elses"

    callbacks = LoginCallbacks(on_auth=lambda *a: None, prompt=no_prompt, manual_code=paste)
    with pytest.raises(SignInError, match="state mismatch"):
        asyncio.run(store.login("anthropic", callbacks))
    assert not store.path.exists()


def test_chatgpt_sign_in_through_the_browser_keeps_the_account_id(provider_side, store, callback_ports):
    seen = []
    asyncio.run(store.login("openai-codex", LoginCallbacks(on_auth=browser(seen), prompt=no_prompt)))
    query = {k: v[0] for k, v in parse_qs(urlsplit(seen[0][0]).query).items()}
    assert query["client_id"] == "app_EMoamEEZ73f0CkXaXp7hrann"
    assert query["redirect_uri"] == "http://localhost:1455/auth/callback"
    assert query["scope"] == "openid profile email offline_access"
    assert (query["id_token_add_organizations"], query["codex_cli_simplified_flow"], query["originator"]) == \
        ("true", "true", "pi")
    [exchange] = provider_side.of("/oauth/token")
    assert exchange["headers"]["content-type"] == "application/x-www-form-urlencoded"
    assert exchange["body"]["grant_type"] == "authorization_code"
    entry = stored(store)["openai-codex"]
    assert list(entry) == ["type", "access", "refresh", "expires", "accountId"]
    assert entry["accountId"] == "acct-123"


def test_copilot_device_sign_in_exchanges_the_github_token_and_enables_models(provider_side, store):
    provider_side.device_polls_pending = 1
    prompts, shown = [], []

    async def answer(message, placeholder, allow_empty):
        prompts.append((message, allow_empty))
        return ""  # github.com

    callbacks = LoginCallbacks(on_auth=lambda url, text: shown.append((url, text)), prompt=answer)
    asyncio.run(store.login("github-copilot", callbacks, model_ids=["gpt-4o", "claude-sonnet-4"]))
    assert prompts == [("GitHub Enterprise URL/domain (blank for github.com)", True)]
    assert shown == [("https://github.com/login/device", "Enter code: ABCD-1234")]
    assert len(provider_side.of("/login/oauth/access_token")) == 2
    [exchange] = provider_side.of("/copilot_internal/v2/token")
    assert exchange["headers"]["editor-version"] == "vscode/1.107.0"
    assert exchange["headers"]["copilot-integration-id"] == "vscode-chat"
    assert sorted(provider_side.enabled_models) == ["claude-sonnet-4", "gpt-4o"]
    entry = stored(store)["github-copilot"]
    assert list(entry) == ["type", "refresh", "access", "expires"] and entry["refresh"] == "gho_github_token"
    assert copilot_base_url(entry["access"]) == "https://api.individual.githubcopilot.com"


def test_the_sign_ins_are_pis():
    assert (AnthropicSignIn.token_url, OpenAICodexSignIn.token_url) == \
        ("https://platform.claude.com/v1/oauth/token", "https://auth.openai.com/oauth/token")
    assert GitHubCopilotSignIn.client_id == "Iv1.b507a08c87ecfe98"
    assert copilot_base_url(None, "corp.ghe.com") == "https://copilot-api.corp.ghe.com"
