"""OAuth for streamable-HTTP MCP servers (pi 1.6's ``docs/mcp.md``, "Authenticate with
OAuth"): ``pi mcp login|logout``, ``mcp-auth.json``, refresh, and the state a server that
needs a sign-in shows. The server and its authorization server are the SDK's, on
127.0.0.1 (tests/support/oauth_mcp_server.py); the test plays the browser by following
the authorization URL's redirect with httpx."""

import asyncio
import contextlib
import json
import os
import re
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

import pi_plugins.mcp as mcp_plugin
from pi_core.testing import RecordingUI, Reply
from pi_plugins.mcp import cli
from pi_plugins.mcp.config import load
from pi_plugins.mcp.connection import McpCallError, ServerConnection
from pi_plugins.mcp.login import login_command

from .conftest import write_servers

pytestmark = pytest.mark.process  # every test starts the OAuth server

OAUTH_SERVER = str(Path(__file__).resolve().parents[1] / "support" / "oauth_mcp_server.py")


def start_oauth_server(tmp_path, token_seconds=3600, **env):
    from tests.support.local_servers import free_port

    port = free_port()
    events = tmp_path / f"events-{port}.txt"
    process = subprocess.Popen([sys.executable, OAUTH_SERVER, str(port)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL,
                               env={**os.environ, "TOKEN_SECONDS": str(token_seconds), "EVENTS_FILE": str(events), **env})
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/.well-known/oauth-authorization-server", timeout=1)
            break
        except httpx.HTTPError:
            time.sleep(0.1)
    return process, f"http://127.0.0.1:{port}/mcp", events


@pytest.fixture(scope="module")
def oauth_server(tmp_path_factory):
    """One server for the module (it takes seconds to start); each test has its own agent
    dir, so its own credentials. ``events`` are the grants of every test so far."""
    process, url, events = start_oauth_server(tmp_path_factory.mktemp("oauth"))
    yield url, events
    process.terminate()
    process.wait(10)


@pytest.fixture
def short_lived_oauth_server(tmp_path):
    # 5 s: inside pi 1.6's 30 s refresh margin, so the next use refreshes it, yet long
    # enough that the sign-in's own first request never meets it expired on a loaded machine
    process, url, events = start_oauth_server(tmp_path, token_seconds=5)
    yield url, events
    process.terminate()
    process.wait(10)


def browser(url: str) -> None:
    """The user's browser: follows the authorization URL to the loopback callback."""
    def visit():
        page = httpx.get(url, follow_redirects=True, timeout=10)
        assert "Signed in to the MCP server" in page.text

    threading.Thread(target=visit, daemon=True).start()


def login(agent, cwd, name="secure", timeout=30.0, open_url=browser):
    out, err = [], []
    entry = next(s for s in load(agent, cwd, project_trusted=False).servers if s.name == name)
    code = asyncio.run(login_command(entry, str(cwd), agent, timeout, out.append, err.append, open_url=open_url))
    return code, "\n".join(out), "\n".join(err)


def pi_mcp(agent, cwd, *args):
    out, err = [], []
    code = cli.run(list(args), cwd, agent, out.append, err.append)
    return code, "\n".join(out), "\n".join(err)


def stored(agent):
    return json.loads((agent / "mcp-auth.json").read_text())


async def whoami(agent, cwd, name="secure"):
    entry = next(s for s in load(agent, cwd, project_trusted=False).servers if s.name == name)
    connection = ServerConnection(entry, str(cwd), agent_dir=agent)
    try:
        result = await connection.call_tool("whoami", {})
        return result["content"][0]["text"]
    finally:
        await connection.close()


def test_a_server_that_needs_sign_in_says_so_and_login_through_the_browser_connects_it(tmp_path, agent, oauth_server):
    url, _ = oauth_server
    write_servers(agent / "mcp.json", {"secure": {"url": url}})

    code, out, _ = pi_mcp(agent, tmp_path, "list")
    assert code == 1
    assert out.splitlines() == ["secure: needs sign-in (codemode, global)", f"  {url}",
                                "  sign in with: pi mcp login secure"]

    code, out, err = login(agent, tmp_path)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == 'Sign in to MCP server "secure" in your browser:'
    assert lines[1].startswith(url.removesuffix("/mcp") + "/authorize?")
    assert lines[-1] == 'Signed in to MCP server "secure" (2 tools).'

    auth_file = agent / "mcp-auth.json"
    assert stat.S_IMODE(auth_file.stat().st_mode) == 0o600
    state = stored(agent)[f"mcp__secure|{url}"]  # pi 1.6's key and field names
    assert state["serverUrl"] == url and state["tokens"]["access_token"].startswith("at-")
    assert state["clientInformation"]["client_name"] == "pi" and state["tokensExpireAt"] > time.time() * 1000

    code, out, _ = pi_mcp(agent, tmp_path, "list")
    assert code == 0 and out.splitlines()[0] == "secure: connected, 2 tools (codemode, global)"
    assert asyncio.run(whoami(agent, tmp_path)) == state["tokens"]["access_token"]

    code, out, _ = login(agent, tmp_path)
    assert (code, out) == (0, 'Already signed in to MCP server "secure" (2 tools).')


def test_an_expired_access_token_is_refreshed_not_signed_in_again(tmp_path, agent, short_lived_oauth_server):
    url, events = short_lived_oauth_server
    write_servers(agent / "mcp.json", {"secure": {"url": url}})
    assert login(agent, tmp_path)[0] == 0
    first = stored(agent)[f"mcp__secure|{url}"]["tokens"]
    time.sleep(1.5)

    token = asyncio.run(whoami(agent, tmp_path))

    now = stored(agent)[f"mcp__secure|{url}"]["tokens"]
    assert token == now["access_token"] != first["access_token"]
    grants = events.read_text().split()  # (a loaded machine may outlive the 1 s token again)
    assert grants[0] == "code" and grants[1:] and set(grants[1:]) == {"refresh"}


def test_a_token_the_server_rejects_is_refreshed_once(tmp_path, agent, oauth_server):
    url, events = oauth_server
    write_servers(agent / "mcp.json", {"secure": {"url": url}})
    assert login(agent, tmp_path)[0] == 0
    states = stored(agent)
    states[f"mcp__secure|{url}"]["tokens"]["access_token"] = "at-revoked"  # still "valid" by its expiry
    (agent / "mcp-auth.json").write_text(json.dumps(states))
    grants = len(events.read_text().split())

    token = asyncio.run(whoami(agent, tmp_path))

    assert token.startswith("at-") and token != "at-revoked"
    assert events.read_text().split()[grants:] == ["refresh"]


def test_a_refresh_the_server_refuses_leaves_the_server_needing_sign_in(tmp_path, agent, oauth_server):
    url, _ = oauth_server
    write_servers(agent / "mcp.json", {"secure": {"url": url}})
    assert login(agent, tmp_path)[0] == 0
    states = stored(agent)
    states[f"mcp__secure|{url}"]["tokens"].update(access_token="at-revoked", refresh_token="rt-revoked")
    (agent / "mcp-auth.json").write_text(json.dumps(states))

    with pytest.raises(McpCallError, match='^MCP server "secure" requires sign-in. Run /mcp to sign in.$'):
        asyncio.run(whoami(agent, tmp_path))
    code, out, _ = pi_mcp(agent, tmp_path, "list")
    assert code == 1 and "needs sign-in" in out.splitlines()[0]


def test_a_token_without_the_scope_now_asked_for_needs_sign_in_again_without_a_refresh(tmp_path, agent):
    """pi 1.6: a 403 ``insufficient_scope`` marks the server as needing sign-in at once (a
    refresh keeps the scope granted, and nothing may open a browser for a tool call)."""
    demand = tmp_path / "demand-admin"
    process, url, events = start_oauth_server(tmp_path, DEMAND_SCOPE_FILE=str(demand))
    try:
        write_servers(agent / "mcp.json", {"secure": {"url": url}})
        assert login(agent, tmp_path)[0] == 0
        clients = Path(f"{events}.clients").read_text()
        demand.touch()

        with pytest.raises(McpCallError, match='^MCP server "secure" requires sign-in. Run /mcp to sign in.$'):
            asyncio.run(whoami(agent, tmp_path))

        assert events.read_text().split() == ["code", "insufficient_scope"]  # no refresh, asked once
        assert Path(f"{events}.clients").read_text() == clients  # no authorization begun
        code, out, _ = pi_mcp(agent, tmp_path, "list")
        assert code == 1 and "needs sign-in" in out.splitlines()[0]
    finally:
        process.terminate()
        process.wait(10)


def test_logout_deletes_the_credentials_and_says_when_there_were_none(tmp_path, agent, oauth_server):
    url, _ = oauth_server
    write_servers(agent / "mcp.json", {"secure": {"url": url}, "other": {"url": url}})
    assert login(agent, tmp_path)[0] == 0
    assert login(agent, tmp_path, name="other")[0] == 0  # same URL, another name: its own sign-in
    assert set(stored(agent)) == {f"mcp__secure|{url}", f"mcp__other|{url}"}

    assert pi_mcp(agent, tmp_path, "logout", "secure") == (0, 'Signed out of MCP server "secure".', "")
    assert set(stored(agent)) == {f"mcp__other|{url}"}
    assert pi_mcp(agent, tmp_path, "logout", "secure") == (0, 'No stored credentials for MCP server "secure".', "")
    listed = pi_mcp(agent, tmp_path, "list")[1].splitlines()
    assert "other: connected, 2 tools (codemode, global)" in listed and "secure: needs sign-in (codemode, global)" in listed


def test_a_sign_in_nobody_finishes_stops_at_the_timeout_with_a_clear_message(tmp_path, agent, oauth_server):
    url, _ = oauth_server
    write_servers(agent / "mcp.json", {"secure": {"url": url}})

    code, _, err = login(agent, tmp_path, timeout=1, open_url=lambda url: None)

    assert code == 1
    assert err == 'Sign-in to MCP server "secure" was cancelled or not completed within 1 seconds.'


def test_a_denied_authorization_fails_in_one_line(tmp_path, agent, oauth_server):
    url, _ = oauth_server
    write_servers(agent / "mcp.json", {"secure": {"url": url}})

    def denying_browser(authorization_url):
        from urllib.parse import parse_qs, urlsplit

        query = parse_qs(urlsplit(authorization_url).query)
        back = f"{query['redirect_uri'][0]}?error=access_denied&state={query['state'][0]}"
        threading.Thread(target=lambda: httpx.get(back, timeout=10), daemon=True).start()

    code, _, err = login(agent, tmp_path, open_url=denying_browser)

    assert code == 1 and err == 'Sign-in to MCP server "secure" failed: Authorization failed: access_denied'


def test_login_and_logout_refuse_servers_that_do_not_use_oauth_and_unknown_names(tmp_path, agent):
    write_servers(agent / "mcp.json", {
        "keyed": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer x"}},
        "local": {"command": "true"}})
    not_oauth = ('MCP server "{}" does not use OAuth. Only HTTP servers without an Authorization header do.')
    assert pi_mcp(agent, tmp_path, "login", "keyed") == (1, "", not_oauth.format("keyed"))
    assert pi_mcp(agent, tmp_path, "logout", "local") == (1, "", not_oauth.format("local"))
    assert pi_mcp(agent, tmp_path, "login", "keyd") == (
        1, "", 'No MCP server named "keyd". Did you mean "keyed"? Configured: keyed, local.')
    write_servers(agent / "mcp.json", {"web": {"url": "http://127.0.0.1:9/mcp"}})
    assert pi_mcp(agent, tmp_path, "login", "web", "--timeout", "0")[2] == \
        "--timeout must be a positive number of seconds."


def test_a_session_reports_the_sign_in_once_and_its_tools_fail_in_one_line(tmp_path, agent, harness, oauth_server):
    url, _ = oauth_server
    write_servers(agent / "mcp.json", {"secure": {"url": url, "exposure": "direct"}})
    ui = RecordingUI()

    async def scenario():
        h = await harness(mcp_plugin, script=[Reply(text="hello")], ui=ui, session="memory")
        await h.prompt("hi")
        servers = mcp_plugin.servers_of(h.ctx)
        await servers.reported
        status = servers.status()
        await h.close()
        return status

    status = asyncio.run(scenario())
    assert status == "secure: needs sign-in, run /mcp login secure (direct)"
    warnings = ui.messages("warning")
    assert warnings == ["MCP servers need attention:\n  secure: needs sign-in\nRun /mcp to fix."]


def test_pi_mcp_login_as_a_process_prints_the_url_and_waits_for_the_browser(tmp_path, agent, oauth_server):
    url, _ = oauth_server
    write_servers(agent / "mcp.json", {"secure": {"url": url}})
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent), "PI_NO_BROWSER": "1"}
    process = subprocess.Popen([sys.executable, "-m", "pi_plugins.cli", "mcp", "login", "secure"], cwd=tmp_path,
                               env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    assert process.stdout is not None
    assert process.stdout.readline() == 'Sign in to MCP server "secure" in your browser:\n'
    authorization_url = process.stdout.readline().strip()
    browser(authorization_url)
    out, err = process.communicate(timeout=60)
    assert (process.returncode, out, err) == (0, 'Signed in to MCP server "secure" (2 tools).\n', "")


def test_mcp_login_logout_and_reconnect_in_a_session(tmp_path, agent, harness, oauth_server, monkeypatch):
    url, _ = oauth_server
    support = Path(__file__).resolve().parents[1] / "support"
    monkeypatch.setenv("DISPLAY", ":0")  # a graphical session: the sign-in opens the "browser"
    monkeypatch.setenv("BROWSER", f"{sys.executable} {support / 'follow_redirect.py'} %s")
    write_servers(agent / "mcp.json", {"secure": {"url": url}, "keyed": {"url": url, "headers": {
        "Authorization": "Bearer nope"}}})
    ui = RecordingUI()

    async def scenario():
        h = await harness(mcp_plugin, script=[Reply(text="hello")], ui=ui, session="memory")
        servers = mcp_plugin.servers_of(h.ctx)
        await servers.reported
        await mcp_plugin._mcp_command("login", h.ctx)  # the one server that needs it
        signed_in = servers.status().splitlines()
        await mcp_plugin._mcp_command("logout secure", h.ctx)
        signed_out = servers.status().splitlines()
        await mcp_plugin._mcp_command("login keyed", h.ctx)
        await mcp_plugin._mcp_command("reconnect secure", h.ctx)
        await mcp_plugin._mcp_command("dance", h.ctx)
        await h.close()
        return signed_in, signed_out

    signed_in, signed_out = asyncio.run(scenario())
    infos = ui.messages("info")
    assert infos[0].startswith('Sign in to MCP server "secure" in your browser:\n' + url.removesuffix("/mcp"))
    assert infos[1:3] == ['Signed in to MCP server "secure" (2 tools).', 'Signed out of MCP server "secure".']
    assert "secure: connected, 2 tools (codemode)" in signed_in
    assert "secure: needs sign-in, run /mcp login secure (codemode)" in signed_out
    assert ui.messages("error") == [
        "No enabled MCP server uses OAuth. Only HTTP servers without an Authorization header do.",
        'MCP server "secure" requires sign-in. Run /mcp to sign in.']
    assert ui.messages("warning")[-1] == \
        "Usage: /mcp, /mcp login [server], /mcp logout [server], /mcp reconnect [server]"


def test_a_sign_in_from_outside_the_session_is_picked_up_by_the_next_prompt(tmp_path, agent, harness, oauth_server):
    url, _ = oauth_server
    write_servers(agent / "mcp.json", {"secure": {"url": url, "exposure": "direct"}})
    entry = next(s for s in load(agent, tmp_path, project_trusted=False).servers if s.name == "secure")

    async def scenario():
        h = await harness(mcp_plugin, script=[Reply(text="one"), Reply(text="two")], ui=RecordingUI(),
                          session="memory")
        await mcp_plugin.servers_of(h.ctx).reported
        await h.prompt("before")
        out: list = []
        assert await login_command(entry, str(tmp_path), agent, 30, out.append, out.append, open_url=browser) == 0
        await h.prompt("after")
        await h.close()

    asyncio.run(scenario())
    before, after = harness.provider.requests[-2:]
    assert not [t.name for t in before.tools if t.name.startswith("mcp__")]
    assert {"mcp__secure__add", "mcp__secure__whoami"} <= {t.name for t in after.tools}


def test_add_writes_the_oauth_options_as_pi_16_does(tmp_path, agent):
    code, out, _ = pi_mcp(agent, tmp_path, "add", "fig", "--url", "https://mcp.example.com/mcp",
                          "--oauth-client-id", "my-client", "--oauth-client-secret", "${SECRET}",
                          "--oauth-callback-port", "8765", "--oauth-client-name", "Claude Code",
                          "--oauth-client-registration", "dcr")
    assert code == 0 and out.endswith("If it requires sign-in: pi mcp login fig")
    assert json.loads((agent / "mcp.json").read_text())["mcpServers"]["fig"] == {
        "url": "https://mcp.example.com/mcp", "oauth": {
            "clientId": "my-client", "clientSecret": "${SECRET}", "callbackPort": 8765,
            "clientName": "Claude Code", "clientRegistration": "dcr"}}
    assert pi_mcp(agent, tmp_path, "add", "x", "--oauth-client-id", "c", "--", "true")[2] == \
        "--oauth-client-id only applies to HTTP servers (--url)."


def test_a_damaged_mcp_auth_json_is_reported_and_left_as_it_is(tmp_path, agent, oauth_server):
    url, _ = oauth_server
    write_servers(agent / "mcp.json", {"secure": {"url": url}})
    (agent / "mcp-auth.json").write_text("{not json")

    code, out, _ = pi_mcp(agent, tmp_path, "list")
    assert code == 1 and out.splitlines()[0] == "secure: failed (codemode, global)"
    assert "mcp-auth.json is not valid JSON" in out and "fix or delete it" in out
    code, _, err = pi_mcp(agent, tmp_path, "logout", "secure")
    assert code == 1 and err.startswith(f"Could not update {agent / 'mcp-auth.json'}: ")
    assert (agent / "mcp-auth.json").read_text() == "{not json"


def test_a_second_authorization_in_one_sign_in_waits_for_its_own_redirect():
    """The SDK may start the authorization again within one sign-in (its token request
    failed); the callback must not hand it the first redirect, whose state is stale."""
    from pi_plugins.mcp.oauth import LoopbackCallback

    async def scenario():
        async with LoopbackCallback(0) as callback:
            async def redirect(code: str, state: str) -> int:
                url = f"{callback.redirect_uri}?code={code}&state={state}"
                async with httpx.AsyncClient() as client:
                    return (await client.get(url, timeout=10)).status_code

            first = asyncio.ensure_future(callback.wait())
            assert await redirect("one", "s1") == 200
            second = asyncio.ensure_future(callback.wait())
            await asyncio.sleep(0)
            assert not second.done()  # the first redirect was taken
            assert await redirect("two", "s2") == 200
            return await first, await asyncio.wait_for(second, 10)

    first, second = asyncio.run(scenario())
    assert (first.code, first.state) == ("one", "s1")
    assert (second.code, second.state) == ("two", "s2")


def test_the_callback_page_says_what_pi16s_says_for_a_sign_in_a_refusal_and_a_bad_redirect():
    """pi 1.6's page: ``Authentication successful``/``failed`` as title and heading, its
    messages, the authorization server's description as details, and its status codes."""
    from pi_plugins.mcp.oauth import LoopbackCallback

    async def scenario():
        pages = []
        async with LoopbackCallback(0) as callback:
            async with httpx.AsyncClient() as client:
                for query in ("?code=c1&state=s1", "?error=access_denied&error_description=The+user+said+no",
                              "?state=s3"):
                    waiting = asyncio.ensure_future(callback.wait())
                    await asyncio.sleep(0)
                    pages.append(await client.get(callback.redirect_uri + query, timeout=10))
                    with contextlib.suppress(Exception):
                        await asyncio.wait_for(waiting, 10)
                pages.append(await client.get(callback.redirect_uri.replace("/callback", "/elsewhere"), timeout=10))
        return pages

    signed_in, refused, no_code, elsewhere = asyncio.run(scenario())

    def said(page):
        return re.search(r"<title>(.*?)</title>", page.text)[1], re.search(r"<h1>(.*?)</h1>", page.text)[1], \
            re.search(r"<p>(.*?)</p>", page.text)[1]

    assert signed_in.status_code == 200 and said(signed_in) == (
        "Authentication successful", "Authentication successful",
        "Signed in to the MCP server. You may now close this page.")
    assert refused.status_code == 200 and said(refused) == (
        "Authentication failed", "Authentication failed", "Authorization failed. You may close this window.")
    assert '<div class="details">The user said no</div>' in refused.text
    assert no_code.status_code == 400 and said(no_code)[2] == "Missing authorization code"
    assert elsewhere.status_code == 404 and said(elsewhere)[2] == "Not found"
    assert signed_in.headers["cache-control"] == "no-store"
