"""``/mcp`` where no ``mcp.json`` names a server: each form says what pi 1.6 says (its
extension's ``empty`` text, and each action's "no server it could act on" text)."""

import asyncio
from pathlib import Path

import pytest

from pi_plugins.mcp import _mcp_command


class _Ctx:
    def __init__(self, agent_dir: Path) -> None:
        self.agent_dir, self.said = agent_dir, []
        self.ui = self

    def get_flag(self, name, default=None):
        return default

    def notify(self, text, level="info"):
        self.said.append((text, level))


@pytest.mark.parametrize(("args", "said"), [
    ("reconnect", ("No enabled MCP server to reconnect.", "info")),
    ("login", ("No enabled MCP server uses OAuth. Only HTTP servers without an Authorization header do.", "info")),
    ("logout docs", ('No MCP server named "docs".', "error")),
    ("frobnicate", ("Usage: /mcp, /mcp login [server], /mcp logout [server], /mcp reconnect [server]", "warning")),
])
def test_each_mcp_action_without_servers_says_what_pi16_says(tmp_path, args, said):
    ctx = _Ctx(tmp_path)
    asyncio.run(_mcp_command(args, ctx))
    assert ctx.said == [said]


def test_bare_mcp_without_servers_names_the_files_to_add_them_to(tmp_path):
    ctx = _Ctx(tmp_path)
    asyncio.run(_mcp_command("", ctx))
    assert ctx.said == [(f"No MCP servers configured. Add them to {tmp_path / 'mcp.json'} or .pi/mcp.json.", "info")]
