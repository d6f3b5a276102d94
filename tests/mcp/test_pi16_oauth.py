"""pi 1.6 and pi-harness share OAuth sign-ins: credentials either one stores in
``mcp-auth.json`` connect the other (same keys, same fields), against the SDK's OAuth
server on 127.0.0.1 (tests/support/oauth_mcp_server.py)."""

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
