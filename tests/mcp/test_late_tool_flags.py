"""MCP tools register when their server connects, after the tool flags chose the tools
at start-up; the flags apply to them all the same."""

import json
import subprocess
import sys

import pytest

from pi_plugins.cli.tool_selection import LateTools, parse_tools
from support.cli import PiRunner
from support.llm_server import Reply

from .conftest import SERVER, write_servers


def test_the_flags_decide_for_a_tool_that_registers_late():
    allow = LateTools(parse_tools("read,mcp__a__*"), "mcp__a__drop*", False)
    assert allow.decide("mcp__a__add") == "on"
    assert allow.decide("mcp__a__add", "codemode") == "off"  # a pattern does not declare an indirect tool
    assert allow.decide("mcp__b__add") == "withdraw"  # an mcp__ entry filters the other servers' tools
    assert allow.decide("mcp__a__drop_all") == "withdraw"  # --exclude-tools
    assert LateTools(parse_tools("read"), None, False).decide("mcp__a__add") == "off"
    assert LateTools(parse_tools("+codemode,-mcp__a__add"), None, False).decide("mcp__a__add") == "off"
    assert LateTools(None, None, True).decide("mcp__a__add") == "off"
    assert LateTools(parse_tools("+codemode"), None, False).decide("mcp__a__add") is None


@pytest.mark.process
def test_tools_flag_declares_only_the_named_tool_of_a_direct_server_that_connects_after_start_up(tmp_path, server):
    runner = PiRunner(tmp_path, server)
    (runner.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    write_servers(runner.agent_dir / "mcp.json", {"demo": {"command": sys.executable, "args": [SERVER],
                                                          "exposure": "direct"}})
    server.push(Reply(text="done"))
    done = subprocess.run([sys.executable, "-m", "pi_plugins.cli",
                           *runner.flags("--no-session", "--tools", "read,mcp__demo__add",
                                         "--exclude-tools", "mcp__demo__fail", "-p", "hi")],
                          cwd=runner.cwd, env={**runner.env, "PI_OFFLINE": "1"}, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    declared = [t["function"]["name"] for t in server.requests[-1].body["tools"]]
    assert declared == ["read", "mcp__demo__add"]
