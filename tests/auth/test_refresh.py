"""An expired sign-in is refreshed before the request, under auth.json's lock (pi's
``auth.json.lock`` directory), written back, and used; two processes refresh once; a
refused refresh names the provider and says to /login again."""

import asyncio
import json
import os
import subprocess
import time

import pytest
from support.cli import PiRunner
from support.llm_server import Reply
from support.signin_server import SignInServer

from pi_plugins.models.auth import AuthStorage, SignInExpiredError
from pi_plugins.signin.flows import SIGN_INS

MODEL = "anthropic/claude-sonnet-4-5"


@pytest.fixture
def provider_side(monkeypatch):
    with SignInServer() as server:
        monkeypatch.setenv("PI_PROVIDER_ORIGINS", server.origins())
        yield server


def expired_sign_in(path, server: SignInServer, provider: str = "anthropic") -> str:
    refresh = server.issue_refresh_token()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        "openai": {"type": "api_key", "key": "sk-kept"},
        provider: {"type": "oauth", "refresh": refresh, "access": "sk-ant-oat01-old",
                   "expires": int(time.time() * 1000) - 1000},
    }, indent=2))
    os.chmod(path, 0o600)
    return refresh


def test_an_expired_token_is_refreshed_and_written_back(provider_side, tmp_path):
    store = AuthStorage(tmp_path / "auth.json", sign_ins=SIGN_INS)
    old = expired_sign_in(store.path, provider_side)
    assert store.api_key("anthropic") is None and store.needs_refresh("anthropic")
    key = asyncio.run(store.refreshed_key("anthropic"))
    data = json.loads(store.path.read_text())
    assert key == data["anthropic"]["access"] != "sk-ant-oat01-old"
    assert data["anthropic"]["refresh"] != old and data["anthropic"]["expires"] > time.time() * 1000
    assert data["openai"] == {"type": "api_key", "key": "sk-kept"}
    [refresh] = provider_side.of("/v1/oauth/token")
    assert refresh["body"] == {"grant_type": "refresh_token", "client_id": "9d1c250a-e61b-44d9-88ed-5944d1962f5e",
                               "refresh_token": old}
    assert not (tmp_path / "auth.json.lock").exists()
    assert store.api_key("anthropic") == key  # no second refresh
    assert provider_side.refreshes == 1


def test_a_refused_refresh_names_the_provider_and_says_to_login_again(provider_side, tmp_path):
    provider_side.refuse_refresh = True
    store = AuthStorage(tmp_path / "auth.json", sign_ins=SIGN_INS)
    expired_sign_in(store.path, provider_side)
    with pytest.raises(SignInExpiredError) as caught:
        asyncio.run(store.refreshed_key("anthropic"))
    text = str(caught.value)
    assert text.startswith('Authentication failed for "anthropic". Credentials may have expired or network '
                           "is unavailable. Run '/login anthropic' to re-authenticate")  # pi's words
    assert "invalid_grant" in text  # and why
    assert "sk-ant-oat01-old" not in text
    assert json.loads(store.path.read_text())["anthropic"]["access"] == "sk-ant-oat01-old"  # kept for a later try


def test_a_lock_left_by_a_dead_process_is_taken_over_after_30_seconds(provider_side, tmp_path):
    store = AuthStorage(tmp_path / "auth.json", sign_ins=SIGN_INS)
    expired_sign_in(store.path, provider_side)
    lock = tmp_path / "auth.json.lock"
    lock.mkdir()
    os.utime(lock, (time.time() - 31, time.time() - 31))
    assert asyncio.run(store.refreshed_key("anthropic")).startswith("sk-ant-oat01-access")
    assert not lock.exists()


def test_a_held_lock_is_waited_for_and_the_other_holders_token_used(provider_side, tmp_path):
    store = AuthStorage(tmp_path / "auth.json", sign_ins=SIGN_INS)
    expired_sign_in(store.path, provider_side)
    lock = tmp_path / "auth.json.lock"
    lock.mkdir()

    async def other_process_refreshes():
        await asyncio.sleep(0.3)
        data = json.loads(store.path.read_text())
        data["anthropic"].update(access="sk-ant-oat01-theirs", expires=int(time.time() * 1000) + 3_600_000)
        store.path.write_text(json.dumps(data))
        lock.rmdir()

    async def both():
        other = asyncio.ensure_future(other_process_refreshes())
        key = await store.refreshed_key("anthropic")
        await other
        return key

    assert asyncio.run(both()) == "sk-ant-oat01-theirs"
    assert provider_side.refreshes == 0


@pytest.fixture
def pi_home(tmp_path, llm_server):
    runner = PiRunner(tmp_path, llm_server, api="anthropic-messages")
    return runner


def start_pi(runner: PiRunner, origins: str) -> subprocess.Popen:
    env = {**runner.env, "PI_PROVIDER_ORIGINS": origins}
    import sys
    return subprocess.Popen([sys.executable, "-m", "pi_plugins.cli", "--model", MODEL, "--no-session",
                             "-p", "Hi"], cwd=runner.cwd, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.process
def test_two_pi_processes_refresh_once_and_both_answer(pi_home, llm_server):
    with SignInServer() as server:
        server.refresh_delay = 0.5  # the second process arrives while the first refreshes
        expired_sign_in(pi_home.agent_dir / "auth.json", server)
        llm_server.push(Reply(text="One."), Reply(text="Two."))
        origins = server.origins({"https://api.anthropic.com": llm_server.url})
        runs = [start_pi(pi_home, origins) for _ in range(2)]
        outputs = [run.communicate(timeout=60) for run in runs]
        assert [run.returncode for run in runs] == [0, 0], outputs
        assert sorted(out.strip() for out, _ in outputs) == ["One.", "Two."]
        assert server.refreshes == 1
        data = json.loads((pi_home.agent_dir / "auth.json").read_text())
        token = data["anthropic"]["access"]
        sent = [r.headers.get("authorization") or r.headers.get("x-api-key") for r in llm_server.requests]
        assert all(token in value for value in sent) and len(sent) == 2


@pytest.mark.process
def test_pi_p_with_a_refused_refresh_says_which_sign_in_to_renew(pi_home, llm_server):
    with SignInServer() as server:
        server.refuse_refresh = True
        expired_sign_in(pi_home.agent_dir / "auth.json", server)
        run = start_pi(pi_home, server.origins({"https://api.anthropic.com": llm_server.url}))
        out, err = run.communicate(timeout=60)
    assert run.returncode != 0
    assert err.startswith('error: Authentication failed for "anthropic". ') and "Run '/login anthropic'" in err, (out, err)
    assert "SignInExpiredError" not in err
    assert llm_server.requests == []


def test_an_expired_copilot_token_is_exchanged_again_with_the_github_token(provider_side, tmp_path):
    store = AuthStorage(tmp_path / "auth.json", sign_ins=SIGN_INS)
    store.path.write_text(json.dumps({"github-copilot": {
        "type": "oauth", "refresh": "gho_github_token", "access": "tid=old", "expires": 1}}))
    key = asyncio.run(store.refreshed_key("github-copilot"))
    entry = json.loads(store.path.read_text())["github-copilot"]
    assert key == entry["access"] and "proxy-ep=proxy.individual.githubcopilot.com" in key
    assert entry["refresh"] == "gho_github_token" and entry["expires"] > time.time() * 1000
    [exchange] = provider_side.of("/copilot_internal/v2/token")
    assert exchange["headers"]["authorization"] == "Bearer gho_github_token"


def test_an_expired_chatgpt_sign_in_is_refreshed_with_its_account(provider_side, tmp_path):
    store = AuthStorage(tmp_path / "auth.json", sign_ins=SIGN_INS)
    refresh = provider_side.issue_refresh_token()
    store.path.write_text(json.dumps({"openai-codex": {
        "type": "oauth", "access": "old", "refresh": refresh, "expires": 1, "accountId": "acct-123"}}))
    asyncio.run(store.refreshed_key("openai-codex"))
    entry = json.loads(store.path.read_text())["openai-codex"]
    assert list(entry) == ["type", "access", "refresh", "expires", "accountId"] and entry["accountId"] == "acct-123"
    [request] = provider_side.of("/oauth/token")
    assert request["body"] == {"grant_type": "refresh_token", "refresh_token": refresh,
                               "client_id": "app_EMoamEEZ73f0CkXaXp7hrann"}
