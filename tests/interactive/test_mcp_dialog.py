"""``/mcp`` in the chat, as pi 1.6's: the servers with their state, exposure and source
(those that need attention first), and per server what fits its state: sign in, tools,
reconnect, exposure, disable/enable, saved to the file that defines the server. On an
emulated screen, with our stdio test server and the SDK's OAuth server."""

import json
import sys
from pathlib import Path

import pytest

from tests.mcp.test_oauth import oauth_server  # noqa: F401 - the fixture

SUPPORT = Path(__file__).resolve().parents[1] / "support"
DEMO = {"command": sys.executable, "args": [str(SUPPORT / "mcp_server.py")]}

pytestmark = pytest.mark.process  # the MCP servers are processes


def mcp_json(servers):
    return {"mcp.json": json.dumps({"mcpServers": servers})}


def test_the_dialog_lists_servers_shows_tools_and_disables_and_enables_saving_to_mcp_json(pi_screen, server):
    term = pi_screen(agent_files=mcp_json({"demo": DEMO, "off": {**DEMO, "enabled": False}}))
    term.submit("/mcp")
    screen = term.wait_for("demo — connected · 10 tools · resources · codemode · global", timeout=60)
    assert "off — disabled · codemode · global" in screen
    assert screen.index("demo — connected") < screen.index("off — disabled")  # attention order
    term.press("Enter")
    screen = term.wait_for("Tools — 10 offered")
    assert "MCP server demo" in screen and "State: connected · 10 tools · resources" in screen
    assert "Reconnect" in screen and "Exposure — codemode" in screen and "Disable — saved to the global mcp.json" in screen
    term.press("Enter")
    screen = term.wait_for("Tools of demo")
    assert "add — Add two whole numbers." in screen
    term.press("Escape")
    term.wait_for("Tools — 10 offered")
    term.press("Down", "Down", "Down")  # Tools, Reconnect, Exposure, Disable
    term.wait_for("→ Disable")
    term.press("Enter")
    screen = term.wait_for("Enable — saved to the global mcp.json")
    assert "State: disabled" in screen
    saved = json.loads((term.agent_dir / "mcp.json").read_text())
    assert saved["mcpServers"]["demo"] == {**DEMO, "enabled": False}
    term.press("Enter")  # Enable
    term.wait_for("Tools — 10 offered", timeout=20)
    assert json.loads((term.agent_dir / "mcp.json").read_text())["mcpServers"]["demo"]["enabled"] is True


def test_the_dialog_changes_exposure_and_the_file_keeps_it(pi_screen, server):
    term = pi_screen(agent_files=mcp_json({"demo": DEMO}))
    term.submit("/mcp")
    term.wait_for("demo — connected", timeout=20)
    term.press("Enter")
    term.wait_for("Exposure — codemode")
    term.press("Down", "Down")
    term.wait_for("→ Exposure — codemode")
    term.press("Enter")
    screen = term.wait_for("Exposure of demo")
    assert "✓ codemode" in screen and "direct — declared to the model like built-in tools" in screen
    term.press("Down", "Down")
    term.wait_for("→   direct")
    term.press("Enter")
    term.wait_for("Exposure — direct")
    assert json.loads((term.agent_dir / "mcp.json").read_text())["mcpServers"]["demo"]["exposure"] == "direct"


def test_a_server_that_needs_sign_in_comes_first_and_signs_in_from_the_dialog(pi_screen, server, oauth_server,  # noqa: F811
                                                                              monkeypatch):
    url, _ = oauth_server
    monkeypatch.setenv("DISPLAY", ":0")  # a graphical session: the sign-in opens the "browser"
    monkeypatch.setenv("BROWSER", f"{sys.executable} {SUPPORT / 'follow_redirect.py'} %s")
    term = pi_screen(agent_files=mcp_json({"demo": DEMO, "secure": {"url": url}}))
    term.wait_for("secure: needs sign-in", timeout=20)  # the start-up report
    term.submit("/mcp")
    screen = term.wait_for("secure — needs sign-in · codemode · global", timeout=20)
    assert screen.index("secure — needs sign-in") < screen.index("demo — connected")
    term.press("Enter")
    term.wait_for("→ Sign in — opens the browser")
    term.press("Enter")
    screen = term.wait_for("Tools — 2 offered", timeout=30)
    assert "State: connected · 2 tools" in screen
    assert (term.agent_dir / "mcp-auth.json").is_file()
