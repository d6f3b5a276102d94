"""pi 1.6 and pi-harness share OAuth sign-ins: credentials either one stores in
``mcp-auth.json`` connect the other (same keys, same fields), against the SDK's OAuth
server on 127.0.0.1 (tests/support/oauth_mcp_server.py)."""

import json
import os
import subprocess
import sys

import pytest

from support.programs import node_for, require_real

from .conftest import write_servers
from .test_oauth import browser, oauth_server  # noqa: F401 - the fixture

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]


def command(who):
    if who == "pi16":
        return [node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js")]
    return [sys.executable, "-m", "pi_plugins.cli"]


def sign_in(who, agent, cwd):
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent), "PI_NO_BROWSER": "1", "BROWSER": "true"}
    process = subprocess.Popen([*command(who), "mcp", "login", "secure"], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    assert process.stdout.readline() == 'Sign in to MCP server "secure" in your browser:\n'
    browser(process.stdout.readline().strip())
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, out + err
    return out


def listed(who, agent, cwd):
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    done = subprocess.run([*command(who), "mcp", "list"], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=60)
    return done.returncode, done.stdout.splitlines()[0]


@pytest.mark.parametrize("signs_in,then", [("ours", "pi16"), ("pi16", "ours")])
def test_a_sign_in_by_either_program_connects_the_other(tmp_path, oauth_server, signs_in, then):  # noqa: F811
    url, _ = oauth_server
    agent = tmp_path / "agent"
    write_servers(agent / "mcp.json", {"secure": {"url": url}})
    assert listed(then, agent, tmp_path) == (1, "secure: needs sign-in (codemode, global)")

    assert sign_in(signs_in, agent, tmp_path).endswith('Signed in to MCP server "secure" (2 tools).\n')

    assert listed(then, agent, tmp_path) == (0, "secure: connected, 2 tools (codemode, global)")


def authorization_url(who, agent, cwd):
    """Sign in as ``who`` does; the authorization URL it showed."""
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent), "PI_NO_BROWSER": "1", "BROWSER": "true"}
    process = subprocess.Popen([*command(who), "mcp", "login", "secure"], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    assert process.stdout.readline() == 'Sign in to MCP server "secure" in your browser:\n'
    url = process.stdout.readline().strip()
    browser(url)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, out + err
    return url


def test_scope_and_callback_url_reach_the_authorization_server_as_pi_16_sends_them(tmp_path, oauth_server):  # noqa: F811
    from urllib.parse import parse_qs, urlsplit

    from support.local_servers import free_port

    url, _ = oauth_server
    asked = {}
    for who in ("pi16", "ours"):
        agent = tmp_path / who
        callback = f"http://localhost:{free_port()}/oauth/done"
        write_servers(agent / "mcp.json", {"secure": {"url": url, "oauth": {"scope": "read write",
                                                                           "callbackUrl": callback}}})
        query = parse_qs(urlsplit(authorization_url(who, agent, tmp_path)).query)
        asked[who] = (query["scope"], query["redirect_uri"] == [callback])
        assert listed(who, agent, tmp_path) == (0, "secure: connected, 2 tools (codemode, global)")
    assert asked["ours"] == asked["pi16"] == (["read write"], True)


def test_while_pi_16_refreshes_a_token_ours_waits_for_its_lock_and_uses_the_new_token(tmp_path):
    import time

    from .test_oauth import start_oauth_server

    # both refresh a token within 30 s of its expiry: 35 s tokens are due 5 s after they are given
    process, url, events = start_oauth_server(tmp_path, token_seconds=35, REFRESH_DELAY="4")
    try:
        agent = tmp_path / "agent"
        write_servers(agent / "mcp.json", {"secure": {"url": url}})
        sign_in("ours", agent, tmp_path)
        time.sleep(5.5)
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}

        def start(who):
            return subprocess.Popen([*command(who), "mcp", "list"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)

        first = start("pi16")
        deadline = time.monotonic() + 30
        while not list(agent.glob("mcp-auth-refresh-*.lock")) and time.monotonic() < deadline:
            time.sleep(0.02)  # pi 1.6 holds its refresh lock: its refresh is under way
        assert list(agent.glob("mcp-auth-refresh-*.lock")), "pi 1.6 took no refresh lock"
        running = [first, start("ours")]
        results = [(p.wait(90), p.communicate()[0].splitlines()[:1]) for p in running]
    finally:
        process.terminate()
        process.wait(10)
    assert results == [(0, ["secure: connected, 2 tools (codemode, global)"])] * 2
    assert events.read_text().split() == ["code", "refresh"]


def test_pi_16_and_ours_identify_with_the_same_client_metadata_document(tmp_path):
    from urllib.parse import urlsplit

    from .test_oauth import start_oauth_server

    process, url, events = start_oauth_server(tmp_path, CIMD="1")
    try:
        for who in ("pi16", "ours"):
            agent = tmp_path / who
            write_servers(agent / "mcp.json", {"secure": {"url": url}})
            authorization_url(who, agent, tmp_path)
            assert listed(who, agent, tmp_path) == (0, "secure: connected, 2 tools (codemode, global)")
    finally:
        process.terminate()
        process.wait(10)
    lines = events.with_name(events.name + ".clients").read_text().splitlines()
    (pi16_client, pi16_redirect), (our_client, our_redirect) = (line.split() for line in lines)
    assert our_client == pi16_client and pi16_client.startswith("https://pi.dev/oauth/")
    assert urlsplit(our_redirect).path == urlsplit(pi16_redirect).path != "/callback"


@pytest.mark.parametrize("signs_in,refreshes", [("pi16", "ours"), ("ours", "pi16")])
def test_either_refreshes_a_token_the_other_got_with_pi_s_client_metadata_document(tmp_path, signs_in, refreshes):
    import time

    from .test_oauth import start_oauth_server

    process, url, events = start_oauth_server(tmp_path, token_seconds=35, CIMD="1")  # due 5 s after it is given
    try:
        agent = tmp_path / "agent"
        write_servers(agent / "mcp.json", {"secure": {"url": url}})
        authorization_url(signs_in, agent, tmp_path)
        time.sleep(5.5)
        assert listed(refreshes, agent, tmp_path) == (0, "secure: connected, 2 tools (codemode, global)")
    finally:
        process.terminate()
        process.wait(10)
    assert events.read_text().split() == ["code", "refresh"]


def test_a_sign_in_keeps_pi_16s_discovery_block_so_a_refresh_knows_the_token_url(tmp_path, oauth_server):  # noqa: F811
    """pi 1.6 writes the authorization server's URL and metadata (and the resource's) into
    ``mcp-auth.json`` at sign-in; a later refresh, by either program, takes the token URL
    from there, which matters when the authorization server is on another origin."""
    url, _ = oauth_server
    blocks = {}
    for who in ("pi16", "ours"):
        agent = tmp_path / who
        write_servers(agent / "mcp.json", {"secure": {"url": url}})
        sign_in(who, agent, tmp_path)
        (state,) = json.loads((agent / "mcp-auth.json").read_text()).values()
        blocks[who] = state["discovery"]
    theirs, ours = blocks["pi16"], blocks["ours"]
    assert sorted(ours) == sorted(theirs)
    assert ours["authorizationServerUrl"].rstrip("/") == theirs["authorizationServerUrl"].rstrip("/")
    for key in ("token_endpoint", "authorization_endpoint", "registration_endpoint"):
        assert ours["authorizationServerMetadata"][key] == theirs["authorizationServerMetadata"][key], key
    assert ours["resourceMetadata"]["resource"] == theirs["resourceMetadata"]["resource"]
    assert ours["resourceMetadataUrl"] == theirs["resourceMetadataUrl"]
