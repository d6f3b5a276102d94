"""pi 1.6's per-server OAuth settings (its ``docs/mcp.md``, "Authenticate with OAuth"):
``scope``, ``callbackUrl``, ``authServerMetadataUrl``; and its refresh lock, so two
processes that find one token expired refresh it once. Against the SDK's OAuth server on
127.0.0.1 (tests/support/oauth_mcp_server.py)."""

import os
import subprocess
import sys
import time
from urllib.parse import parse_qs, urlsplit

import pytest

from support.local_servers import free_port

from .conftest import write_servers
from .test_oauth import browser, login, oauth_server, pi_mcp, start_oauth_server, stored  # noqa: F401

pytestmark = pytest.mark.process  # every test starts the OAuth server


@pytest.fixture
def server_with(tmp_path):
    """Start the OAuth server with extra environment; stopped at the end."""
    started = []

    def start(**env):
        process, url, events = start_oauth_server(tmp_path, **env)
        started.append(process)
        return url, events

    yield start
    for process in started:
        process.terminate()
        process.wait(10)


def authorization_query(out: str) -> dict:
    url = out.splitlines()[1]
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def test_a_configured_scope_is_requested_when_the_server_advertises_none(tmp_path, agent, oauth_server):  # noqa: F811
    url, _ = oauth_server
    write_servers(agent / "mcp.json", {"secure": {"url": url, "oauth": {"scope": "read write"}}})

    code, out, err = login(agent, tmp_path)

    assert (code, err) == (0, "")
    assert authorization_query(out)["scope"] == "read write"
    state = stored(agent)[f"mcp__secure|{url}"]
    assert state["tokens"]["scope"] == "read write"
    assert state["clientInformation"]["scope"] == "read write"


def test_without_a_configured_scope_none_is_requested(tmp_path, agent, oauth_server):  # noqa: F811
    url, _ = oauth_server
    write_servers(agent / "mcp.json", {"secure": {"url": url}})
    code, out, _ = login(agent, tmp_path)
    assert code == 0 and "scope" not in authorization_query(out)


def test_callback_url_with_a_port_is_sent_exactly_as_written_and_served(tmp_path, agent, oauth_server):  # noqa: F811
    url, _ = oauth_server
    port = free_port()
    callback = f"http://localhost:{port}/oauth/done"
    write_servers(agent / "mcp.json", {"secure": {"url": url, "oauth": {"callbackUrl": callback}}})

    code, out, err = login(agent, tmp_path)

    assert (code, err) == (0, ""), out
    assert authorization_query(out)["redirect_uri"] == callback
    assert stored(agent)[f"mcp__secure|{url}"]["clientInformation"]["redirect_uris"] == [callback]


def test_callback_url_without_a_port_takes_callback_port(tmp_path, agent, oauth_server):  # noqa: F811
    url, _ = oauth_server
    port = free_port()
    write_servers(agent / "mcp.json", {"secure": {"url": url, "oauth": {
        "callbackUrl": "http://127.0.0.1/back", "callbackPort": port}}})

    code, out, err = login(agent, tmp_path)

    assert (code, err) == (0, ""), out
    assert authorization_query(out)["redirect_uri"] == f"http://127.0.0.1:{port}/back"


def test_oauth_settings_pi_16_refuses_are_refused_with_its_messages(tmp_path, agent):
    write_servers(agent / "mcp.json", {
        "far": {"url": "http://127.0.0.1:9/mcp", "oauth": {"callbackUrl": "http://example.com/callback"}},
        "clash": {"url": "http://127.0.0.1:9/mcp", "oauth": {"callbackUrl": "http://127.0.0.1:8000/callback",
                                                           "callbackPort": 8001}},
        "meta": {"url": "http://127.0.0.1:9/mcp", "oauth": {"authServerMetadataUrl": "http://example.com/m"}},
        "named": {"url": "http://127.0.0.1:9/mcp", "oauth": {"clientRegistration": "cimd", "clientName": "x"}},
        "mode": {"url": "http://127.0.0.1:9/mcp", "oauth": {"clientRegistration": "both"}}})

    _, out, err = pi_mcp(agent, tmp_path, "list")

    text = out + err
    assert ('server "far": oauth.callbackUrl must be an http URI on localhost, 127.0.0.1, or [::1] '
            "without query or fragment") in text
    assert 'server "clash": oauth.callbackUrl and oauth.callbackPort name different ports' in text
    assert ('server "meta": oauth.authServerMetadataUrl must be an https URL, or http on localhost, '
            "127.0.0.1, or [::1]") in text
    assert ('server "named": oauth.clientRegistration "cimd" cannot be combined with oauth.clientId or '
            "oauth.clientName") in text
    assert 'server "mode": oauth.clientRegistration must be "auto", "dcr", or "cimd"' in text


def test_auth_server_metadata_url_replaces_a_wrongly_advertised_authorization_server(tmp_path, agent, server_with):
    url, _ = server_with(WRONG_AS="1")
    origin = url.removesuffix("/mcp")
    write_servers(agent / "mcp.json", {"secure": {"url": url}})
    code, _, err = login(agent, tmp_path)
    assert code == 1 and err.startswith('MCP server "secure" failed to connect: ') and "\n" not in err

    write_servers(agent / "mcp.json", {"secure": {"url": url, "oauth": {
        "authServerMetadataUrl": f"{origin}/.well-known/oauth-authorization-server"}}})
    code, out, err = login(agent, tmp_path)

    assert (code, err) == (0, ""), out
    assert out.splitlines()[1].startswith(f"{origin}/authorize?")
    assert out.splitlines()[-1] == 'Signed in to MCP server "secure" (2 tools).'


def _list_at_once(agent, cwd, commands):
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    processes = [subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for command in commands]
    return [(p.wait(90), p.stdout.read().splitlines()[:1]) for p in processes]  # type: ignore[union-attr]


OURS = [sys.executable, "-m", "pi_plugins.cli", "mcp", "list"]


def test_two_processes_refreshing_one_expired_token_refresh_it_once(tmp_path, agent, server_with):
    url, events = server_with(TOKEN_SECONDS="2", REFRESH_DELAY="1")
    write_servers(agent / "mcp.json", {"secure": {"url": url}})
    assert login(agent, tmp_path)[0] == 0
    time.sleep(2.5)

    results = _list_at_once(agent, tmp_path, [OURS, OURS])

    assert results == [(0, ["secure: connected, 2 tools (codemode, global)"])] * 2
    assert events.read_text().split() == ["code", "refresh"]
    assert not list(agent.glob("mcp-auth-refresh-*.lock"))  # released


def authorizations(events):
    """The client id and redirect URI of each authorization the server saw."""
    return [tuple(line.split()) for line in events.with_name(events.name + ".clients").read_text().splitlines()]


def test_a_server_that_takes_client_metadata_documents_gets_pi_s_server_specific_one(tmp_path, agent, server_with):
    from pi_plugins.mcp.oauth import callback_id

    url, events = server_with(CIMD="1")
    write_servers(agent / "mcp.json", {"secure": {"url": url}})

    code, out, err = login(agent, tmp_path)

    assert (code, err) == (0, ""), out
    ident = callback_id(url)
    assert len(ident) == 12
    [(client, redirect)] = authorizations(events)
    assert client == f"https://pi.dev/oauth/{ident}/client.json"
    assert urlsplit(redirect).hostname == "127.0.0.1" and urlsplit(redirect).path == f"/callback/{ident}"
    assert stored(agent)[f"mcp__secure|{url}"]["clientInformation"]["client_id"] == client  # nothing registered
    assert pi_mcp(agent, tmp_path, "list")[1].splitlines()[0] == "secure: connected, 2 tools (codemode, global)"


def test_with_iss_in_authorization_responses_the_document_is_pi_s_own(tmp_path, agent, server_with):
    url, events = server_with(CIMD="1", ISS="1")
    write_servers(agent / "mcp.json", {"secure": {"url": url}})

    assert login(agent, tmp_path)[0] == 0

    [(client, redirect)] = authorizations(events)
    assert client == "https://pi.dev/oauth/client.json" and urlsplit(redirect).path == "/callback"


def test_client_registration_dcr_registers_even_where_documents_are_taken(tmp_path, agent, server_with):
    url, events = server_with(CIMD="1")
    write_servers(agent / "mcp.json", {"secure": {"url": url, "oauth": {"clientRegistration": "dcr"}}})

    assert login(agent, tmp_path)[0] == 0

    [(client, _)] = authorizations(events)
    assert not client.startswith("https://")
    assert stored(agent)[f"mcp__secure|{url}"]["clientInformation"]["client_name"] == "pi"


def test_client_registration_cimd_fails_where_documents_are_not_taken(tmp_path, agent, oauth_server):  # noqa: F811
    url, _ = oauth_server
    write_servers(agent / "mcp.json", {"secure": {"url": url, "oauth": {"clientRegistration": "cimd"}}})

    code, _, err = login(agent, tmp_path)

    assert code == 1
    assert err == ('Sign-in to MCP server "secure" failed: The authorization server does not support Client ID '
                   'Metadata Documents for public clients; remove oauth.clientRegistration "cimd"')
