"""The Radius MCP server a Radius sign-in adds to the global mcp.json (pi 1.6), and an MCP
server that uses a provider's login (``"auth": {"provider": ...}``) as its bearer token."""

import asyncio
import json

import pytest

from pi_core import text_of
from pi_core.testing import Reply
from pi_plugins.signin.radius_mcp import RADIUS_MCP_URL, configure, plan
from tests.mcp.conftest import agent  # noqa: F401  (a fixture)
from tests.mcp.test_servers import http_server, results, start  # noqa: F401  (http_server: a fixture)


def servers(agent):
    return json.loads((agent / "mcp.json").read_text())["mcpServers"]


def write(agent, servers_: dict) -> None:
    (agent / "mcp.json").write_text(json.dumps({"mcpServers": servers_}))


def test_a_sign_in_adds_the_server_once(tmp_path):
    said = []
    configure("radius", "Radius", tmp_path, tmp_path, said.append)
    assert servers(tmp_path) == {"radius": {"url": RADIUS_MCP_URL, "auth": {"provider": "radius"}}}
    assert said == [f'Added MCP server "radius" in {tmp_path / "mcp.json"} to use the Radius login.']
    configure("radius", "Radius", tmp_path, tmp_path, said.append)
    assert len(said) == 1 and plan("radius", tmp_path, tmp_path) is None


def test_a_taken_name_gets_the_next_free_one(tmp_path):
    write(tmp_path, {"radius": {"command": "x"}, "radius-mcp": {"command": "y"}})
    path, name, entry = plan("radius", tmp_path, tmp_path)
    assert name == "radius-mcp-2" and entry == {"url": RADIUS_MCP_URL, "auth": {"provider": "radius"}}


def test_a_server_at_that_url_is_pointed_at_the_login_keeping_its_name_and_fields(tmp_path):
    write(tmp_path, {"work": {"url": RADIUS_MCP_URL + "/", "exposure": "direct", "oauth": {"clientId": "c"}}})
    said = []
    configure("radius", "Radius", tmp_path, tmp_path, said.append)
    assert servers(tmp_path)["work"] == {"url": RADIUS_MCP_URL + "/", "exposure": "direct",
                                         "auth": {"provider": "radius"}}
    assert said[0].startswith('Updated MCP server "work"')


def test_an_unwritable_mcp_json_is_said_and_nothing_is_lost(tmp_path):
    (tmp_path / "mcp.json").write_text("[1, 2]")
    said = []
    configure("radius", "Radius", tmp_path, tmp_path, said.append)
    assert said[0].startswith(f"Could not update {tmp_path / 'mcp.json'}")
    assert (tmp_path / "mcp.json").read_text() == "[1, 2]"


@pytest.mark.process
def test_a_server_with_a_provider_login_gets_its_key_as_bearer(agent, harness, http_server):  # noqa: F811
    (agent / "auth.json").write_text(json.dumps({"radius": {"type": "api_key", "key": "rk-123"}}))
    write(agent, {"gw": {"url": http_server, "exposure": "direct", "auth": {"provider": "radius"}}})

    async def scenario():
        h = await start(harness, [Reply(tool_calls=[("mcp__gw__auth", {})]), Reply(text="ok")])
        await h.prompt("who am I")
        await h.close()
        return h

    [auth] = results(asyncio.run(scenario()))
    assert text_of(auth.content) == "Bearer rk-123"
