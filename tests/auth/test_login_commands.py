"""``pi auth login`` / ``pi auth logout`` from the shell and ``/login`` / ``/logout`` in
the chat: subscriptions run their sign-in, other providers are asked for a key."""

import json
import os
import re
import stat
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

import pytest
from support.catalogue_server import Catalogues
from support.signin_server import SignInServer

from pi_core.testing.ui import Dialog, RecordingUI
from pi_plugins import signin
from pi_plugins.signin import chat


class Ctx:
    """The members of ctx that /login and /logout use, without a harness."""

    model = model_registry = None

    def __init__(self, agent_dir, ui):
        self.agent_dir, self.ui = agent_dir, ui


def run(coroutine):
    import asyncio
    return asyncio.run(coroutine)


def auth_json(agent_dir):
    path = agent_dir / "auth.json"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    return json.loads(path.read_text())


def test_login_and_logout_are_the_chats_own_commands_and_auth_is_a_subcommand():
    from pi_plugins.interactive.commands import COMMANDS

    assert [c.name for c in signin.register_cli_commands()] == ["auth"]
    assert {"login", "logout"} <= set(COMMANDS)
    assert not hasattr(signin, "register_commands")  # so RPC's get_commands lists neither, as in pi


def test_login_in_the_chat_stores_an_api_key_and_logout_removes_it(tmp_path):
    ui = RecordingUI(selects=["Sign in with an API key", "OpenAI • "], inputs=["sk-chat-key"])
    run(chat.login("", Ctx(tmp_path, ui)))
    assert auth_json(tmp_path) == {"openai": {"type": "api_key", "key": "sk-chat-key"}}
    assert [d.kind for d in ui.dialogs] == ["select", "select", "input"]
    offered = ui.dialogs[1].detail
    assert "OpenAI • not configured" in offered and "Anthropic • not configured" in offered
    assert not any(o.startswith("GitHub Copilot") for o in offered)
    ui = RecordingUI(selects=["openai"])
    run(chat.logout("", Ctx(tmp_path, ui)))
    assert auth_json(tmp_path) == {}
    assert any("Removed stored API key for openai" in n for n in ui.messages())


def test_login_in_the_chat_signs_in_to_claude_with_the_pasted_redirect(tmp_path, monkeypatch):
    from pi_plugins.signin.flows import AnthropicSignIn

    monkeypatch.setattr(AnthropicSignIn, "callback_port", 0)
    with SignInServer() as server:
        monkeypatch.setenv("PI_PROVIDER_ORIGINS", server.origins())
        ui = RecordingUI(selects=["Sign in with an account", "Browser login (default)"])  # pi 1.6 asks: account or API key, then how
        pasted = []

        async def paste(title, placeholder="", *, timeout=None):
            link = re.search(r"(http://127\.0\.0\.1:\d+/oauth/authorize\S+)", "\n".join(ui.messages()))
            try:
                urllib.request.build_opener(NoRedirect).open(link.group(1), timeout=5)
            except urllib.error.HTTPError as exc:
                pasted.append(exc.headers["Location"])
            return pasted[-1]

        ui.input = paste
        run(chat.login("anthropic", Ctx(tmp_path, ui)))
    entry = auth_json(tmp_path)["anthropic"]
    assert entry["type"] == "oauth" and entry["access"].startswith("sk-ant-oat01-")
    assert any("Logged in to Anthropic (Claude Pro/Max)" in n for n in ui.messages()), ui.notes


def _copy_code_shown(link: str) -> str:
    """What Anthropic's page shows after the sign-in, for the copy-code way: ``code#state``."""
    try:
        urllib.request.build_opener(NoRedirect).open(link, timeout=5)
    except urllib.error.HTTPError as exc:
        landing = urllib.parse.urlsplit(exc.headers["Location"])
    assert f"{landing.scheme}://{landing.netloc}{landing.path}" == "https://platform.claude.com/oauth/code/callback"
    query = urllib.parse.parse_qs(landing.query)
    return f"{query['code'][0]}#{query['state'][0]}"


def test_login_in_the_chat_signs_in_to_claude_by_the_code_anthropic_shows(tmp_path, monkeypatch):
    """pi 1.6's copy-code sign-in, for a browser on another machine: the link with
    Anthropic's own landing page, then the ``code#state`` it shows is pasted."""
    monkeypatch.setenv("PI_NO_BROWSER", "1")
    with SignInServer() as server:
        monkeypatch.setenv("PI_PROVIDER_ORIGINS", server.origins())
        ui = RecordingUI(selects=["Sign in with an account", "Copy code login (headless)"])

        async def paste(title, placeholder="", *, timeout=None):
            ui.dialogs.append(Dialog("input", title, placeholder))
            link = re.search(r"(http://127\.0\.0\.1:\d+/oauth/authorize\S+)", "\n".join(ui.messages()))
            return _copy_code_shown(link.group(1))

        ui.input = paste
        run(chat.login("anthropic", Ctx(tmp_path, ui)))
    assert ui.dialogs[1].title == "Select Anthropic login method:"
    assert ui.dialogs[1].detail == ["Browser login (default)", "Copy code login (headless)"]
    assert ui.dialogs[2].title == "Paste the code Anthropic shows after you sign in:"
    said = "\n".join(ui.messages())
    assert "Complete login in your browser, then copy the code Anthropic shows and paste it here." in said
    [exchange] = [r for r in server.of("/v1/oauth/token")]
    assert exchange["body"]["redirect_uri"] == "https://platform.claude.com/oauth/code/callback"
    assert auth_json(tmp_path)["anthropic"]["type"] == "oauth"
    assert any("Logged in to Anthropic (Claude Pro/Max)" in n for n in ui.messages()), ui.notes


@pytest.mark.process
def test_pi_auth_login_without_a_browser_signs_in_to_claude_by_the_code_anthropic_shows(tmp_path, pi_dev):
    with SignInServer() as server:
        process = subprocess.Popen(
            [sys.executable, "-m", "pi_plugins.cli", "auth", "login", "anthropic", "--no-browser"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"),
                 "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "PYTHONUNBUFFERED": "1",
                 "PI_PROVIDER_ORIGINS": with_pi_dev(server.origins(), pi_dev)})
        said = []
        for line in process.stderr:
            said.append(line)
            if line.startswith("Paste the code"):
                break
        link = re.search(r"(http://127\.0\.0\.1:\d+/oauth/authorize\S+)", "".join(said)).group(1)
        out, err = process.communicate(_copy_code_shown(link) + "\n", timeout=60)
    assert process.returncode == 0, err
    lines = [line.rstrip("\n") for line in said]
    assert lines[0] == "Select Anthropic login method: Copy code login (headless)"
    assert lines[1] == "Open this URL to sign in:" and lines[2].startswith("  http://127.0.0.1:")
    assert lines[3] == "Complete login in your browser, then copy the code Anthropic shows and paste it here."
    assert lines[4] == "Paste the code Anthropic shows after you sign in: (code#state): "
    assert "Logged in to Anthropic (Claude Pro/Max)" in err
    assert auth_json(tmp_path / "agent")["anthropic"]["type"] == "oauth"


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


@pytest.fixture(scope="module")
def pi_dev():
    """A stand-in of pi.dev's catalogue route (no catalogue: 404) for the refresh that
    follows a sign-in, as pi 1.6's (tests/auth/test_login_catalogue_refresh.py)."""
    server = Catalogues()
    yield server.url
    server.close()


def with_pi_dev(origins: str | None, pi_dev: str) -> str:
    return json.dumps({**json.loads(origins or "{}"), "https://pi.dev": pi_dev})


def pi_auth(tmp_path, *args, input=None, env=None, pi_dev=None):
    environment = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"),
                   "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), **(env or {})}
    if pi_dev is not None:
        environment["PI_PROVIDER_ORIGINS"] = with_pi_dev(environment.get("PI_PROVIDER_ORIGINS"), pi_dev)
    return subprocess.run([sys.executable, "-m", "pi_plugins.cli", "auth", *args], input=input,
                          capture_output=True, text=True, env=environment, timeout=60)


@pytest.mark.process
def test_pi_auth_login_stores_a_key_and_logout_is_safe_to_repeat(tmp_path, pi_dev):
    # openai has an account sign-in too (pi 1.6's Sign in with ChatGPT): a key takes --api-key
    done = pi_auth(tmp_path, "login", "openai", "--api-key", input="sk-shell-key\n", pi_dev=pi_dev)
    assert done.returncode == 0 and "Saved API key for openai" in done.stderr
    assert auth_json(tmp_path / "agent") == {"openai": {"type": "api_key", "key": "sk-shell-key"}}
    assert "sk-shell-key" not in done.stderr + done.stdout
    assert pi_auth(tmp_path, "logout", "openai").returncode == 0
    again = pi_auth(tmp_path, "logout", "openai")
    assert again.returncode == 0 and "No stored credentials" in again.stderr
    unknown = pi_auth(tmp_path, "login", "no-such-provider", input="k\n")
    assert unknown.returncode == 1 and 'Unknown provider "no-such-provider".' in unknown.stderr
    assert "Providers: " in unknown.stderr and "xai" in unknown.stderr


@pytest.mark.process
def test_pi_auth_login_signs_in_to_chatgpt_with_the_redirect_url_pasted(tmp_path, callback_ports, pi_dev):
    with SignInServer() as server:
        process = subprocess.Popen(
            [sys.executable, "-m", "pi_plugins.cli", "auth", "login", "openai-codex"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"),
                 "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "PI_NO_BROWSER": "1",
                 "PI_PROVIDER_ORIGINS": with_pi_dev(server.origins(), pi_dev), "PYTHONUNBUFFERED": "1"})
        link = None
        said = []
        for line in process.stderr:
            said.append(line)
            found = re.search(r"(http://127\.0\.0\.1:\d+/oauth/authorize\S+)", line)
            if found:
                link = found.group(1)
                break
        assert link, "no sign-in link printed"
        try:
            urllib.request.build_opener(NoRedirect).open(link, timeout=5)
        except urllib.error.HTTPError as exc:
            redirect = exc.headers["Location"]
        assert redirect.startswith("http://localhost:1455/auth/callback?code=")
        out, err = process.communicate(redirect + "\n", timeout=60)
    assert process.returncode == 0, err
    assert "Logged in to ChatGPT Plus/Pro (Codex Subscription)" in err
    # the browser's way is pi 1.6's default; it names the other
    assert 'To use "Device code login (headless)" instead, run "pi auth login openai-codex --no-browser"' \
        in "".join(said)
    entry = auth_json(tmp_path / "agent")["openai-codex"]
    assert entry["accountId"] == "acct-123" and entry["type"] == "oauth"


@pytest.mark.process
def test_pi_auth_login_without_a_browser_signs_in_to_codex_by_device_code(tmp_path, pi_dev):
    with SignInServer() as server:
        done = pi_auth(tmp_path, "login", "openai-codex", "--no-browser", input="",
                       env={"PI_PROVIDER_ORIGINS": server.origins()}, pi_dev=pi_dev)
    assert done.returncode == 0, done.stderr
    assert "Select OpenAI Codex login method: Device code login (headless)" in done.stderr
    assert "Open https://auth.openai.com/codex/device and enter code: CDX-4321" in done.stderr
    assert "Waiting for authentication..." in done.stderr
    assert auth_json(tmp_path / "agent")["openai-codex"]["accountId"] == "acct-123"


@pytest.mark.process
def test_pi_auth_login_refuses_an_api_key_for_a_subscription_only_provider(tmp_path):
    done = pi_auth(tmp_path, "login", "openai-codex", "--api-key", input="sk-x\n")
    assert done.returncode == 1
    assert "has no API key login. Omit --api-key to sign in." in done.stderr
    assert not (tmp_path / "agent" / "auth.json").exists()


def test_login_xai_in_the_chat_asks_account_or_key_and_shows_the_device_code(tmp_path, monkeypatch):
    from support.signin16_server import Signin16Server

    from pi_plugins.signin import device_code

    monkeypatch.setattr(device_code, "MINIMUM_INTERVAL", 0.01)
    monkeypatch.setenv("PI_NO_BROWSER", "1")
    with Signin16Server() as server:
        monkeypatch.setenv("PI_PROVIDER_ORIGINS", server.origins())
        ui = RecordingUI(selects=["Sign in with SuperGrok or X Premium"])
        run(chat.login("xai", Ctx(tmp_path, ui)))
    assert ui.dialogs[0].detail == ["Sign in with SuperGrok or X Premium", "Sign in with an API key"]
    said = "\n".join(ui.messages())
    assert "Open https://accounts.x.ai/device?user_code=WXYZ-2345 and enter code: WXYZ-2345" in said
    assert "Logged in to xAI (Grok/X subscription)" in said
    assert auth_json(tmp_path)["xai"]["type"] == "oauth"
    ui = RecordingUI(selects=["Sign in with an API key"], inputs=["xai-key"])
    run(chat.login("xai", Ctx(tmp_path, ui)))
    assert auth_json(tmp_path)["xai"] == {"type": "api_key", "key": "xai-key"}


def test_login_codex_in_the_chat_by_device_code(tmp_path, monkeypatch):
    from pi_plugins.signin import device_code

    monkeypatch.setattr(device_code, "MINIMUM_INTERVAL", 0.01)
    monkeypatch.setenv("PI_NO_BROWSER", "1")
    with SignInServer() as server:
        monkeypatch.setenv("PI_PROVIDER_ORIGINS", server.origins())
        server.device_polls_pending = 1
        ui = RecordingUI(selects=["Device code login (headless)"])
        run(chat.login("openai-codex", Ctx(tmp_path, ui)))
    [method] = ui.dialogs[:1]
    assert method.detail == ["Browser login (default)", "Device code login (headless)"]
    said = "\n".join(ui.messages())
    assert "Open https://auth.openai.com/codex/device and enter code: CDX-4321" in said
    assert "Logged in to ChatGPT Plus/Pro (Codex Subscription)" in said
    assert auth_json(tmp_path)["openai-codex"]["accountId"] == "acct-123"
