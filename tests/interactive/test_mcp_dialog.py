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


#: pi-tui's SelectList: the label padded into a 32-cell column, the description after it.
COLUMN = 32


def row(screen: str, label: str) -> str:
    """The menu row whose label is ``label``, from the arrow's column on: the menu is
    the block of lines around the highlighted row, all starting where its arrow is."""
    lines = screen.splitlines()
    at = max(i for i, line in enumerate(lines) if "→ " in line)
    arrow = lines[at].index("→ ")
    first, last = at, at
    while first > 0 and lines[first - 1].strip():
        first -= 1
    while last + 1 < len(lines) and lines[last + 1].strip():
        last += 1
    line = next(line for line in lines[first:last + 1] if line[arrow + 2:].strip().startswith(label.strip()))
    return line[arrow:].rstrip()


def in_columns(screen: str, label: str, description: str) -> bool:
    """The row shows ``label`` in pi 1.6's first column and ``description`` in its second."""
    try:
        shown = row(screen, label)
    except (StopIteration, IndexError):
        return False
    return shown[2:2 + COLUMN].strip() == label.strip() and shown[2 + COLUMN:] == description


def test_the_dialog_lists_servers_shows_tools_and_disables_and_enables_saving_to_mcp_json(pi_screen, server):
    term = pi_screen(agent_files=mcp_json({"demo": DEMO, "off": {**DEMO, "enabled": False}}))
    term.submit("/mcp")
    screen = term.wait_for("connected · 10 tools · resources · codemode · global", timeout=60)
    assert in_columns(screen, "demo", "connected · 10 tools · resources · codemode · global")
    assert in_columns(screen, "off", "disabled · codemode · global")
    assert screen.index("connected · 10") < screen.index("disabled · codemode")  # attention order
    term.press("Enter")
    screen = term.wait_for("10 offered")
    assert "MCP server demo" in screen and "State: connected · 10 tools · resources" in screen
    assert in_columns(screen, "Tools", "10 offered") and in_columns(screen, "Exposure", "codemode")
    assert in_columns(screen, "Disable", "saved to the global mcp.json") and row(screen, "Reconnect") == "  Reconnect"
    term.press("Enter")
    screen = term.wait_for("Tools of demo")
    assert in_columns(screen, "add", "Add two whole numbers.")
    term.press("Escape")
    term.wait_for("10 offered")
    term.press("Down", "Down", "Down")  # Tools, Reconnect, Exposure, Disable
    term.wait_for("→ Disable")
    term.press("Enter")
    screen = term.wait_for("State: disabled")
    assert in_columns(screen, "Enable", "saved to the global mcp.json")
    saved = json.loads((term.agent_dir / "mcp.json").read_text())
    assert saved["mcpServers"]["demo"] == {**DEMO, "enabled": False}
    term.press("Enter")  # Enable
    term.wait_for("10 offered", timeout=20)
    assert json.loads((term.agent_dir / "mcp.json").read_text())["mcpServers"]["demo"]["enabled"] is True


def test_the_dialog_changes_exposure_and_the_file_keeps_it(pi_screen, server):
    term = pi_screen(agent_files=mcp_json({"demo": DEMO}))
    term.submit("/mcp")
    term.wait_for("connected · 10 tools", timeout=20)
    term.press("Enter")
    term.wait_for("10 offered")
    term.press("Down", "Down")
    term.wait_for("→ Exposure")
    term.press("Enter")
    screen = term.wait_for("Exposure of demo")
    assert in_columns(screen, "✓ codemode", "called from codemode scripts, which find them with searchTools()")
    assert in_columns(screen, "direct", "declared to the model like built-in tools")
    term.press("Down", "Down")
    term.wait_for("→   direct")
    term.press("Enter")
    screen = term.wait_for("MCP server demo")
    term.wait_for(lambda s: in_columns(s, "Exposure", "direct"))
    assert json.loads((term.agent_dir / "mcp.json").read_text())["mcpServers"]["demo"]["exposure"] == "direct"


def test_a_server_that_needs_sign_in_comes_first_and_signs_in_from_the_dialog(pi_screen, server, oauth_server,  # noqa: F811
                                                                              monkeypatch):
    url, _ = oauth_server
    monkeypatch.setenv("DISPLAY", ":0")  # a graphical session: the sign-in opens the "browser"
    monkeypatch.setenv("BROWSER", f"{sys.executable} {SUPPORT / 'follow_redirect.py'} %s")
    term = pi_screen(agent_files=mcp_json({"demo": DEMO, "secure": {"url": url}}))
    term.wait_for("secure: needs sign-in", timeout=20)  # the start-up report
    term.submit("/mcp")
    screen = term.wait_for("needs sign-in · codemode · global", timeout=20)
    assert in_columns(screen, "secure", "needs sign-in · codemode · global")
    assert screen.index("needs sign-in · codemode") < screen.index("connected · 10 tools")
    term.press("Enter")
    screen = term.wait_for("→ Sign in")
    assert in_columns(screen, "Sign in", "opens the browser")
    term.press("Enter")
    screen = term.wait_for("2 offered", timeout=30)
    assert "State: connected · 2 tools" in screen
    assert (term.agent_dir / "mcp-auth.json").is_file()


@pytest.mark.requires("tmux")
@pytest.mark.parametrize("program", ["ours", pytest.param("pi16", marks=pytest.mark.requires("pi16"))])
def test_the_open_dialog_redraws_as_servers_connect_and_fail_as_pi16s_does(tmp_path, server, program):
    """Opened while both servers are still starting, the servers menu shows them
    connecting, then, with no key pressed, one failed and one connected. The servers wait
    for a gate file, so the dialog is open before either is done."""
    import os
    import time

    from support.programs import NODE22, require_real
    from support.terminal import Terminal, TerminalTimeout

    gate = tmp_path / "gate"
    wait = f"import os, sys, time\nwhile not os.path.exists({str(gate)!r}): time.sleep(0.05)\n"
    slow = wait + f"import runpy; runpy.run_path({str(SUPPORT / 'mcp_server.py')!r}, run_name='__main__')"
    home = tmp_path / "home"
    (home / "project").mkdir(parents=True)
    (home / "agent").mkdir()
    (home / "agent" / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    (home / "agent" / "mcp.json").write_text(json.dumps({"mcpServers": {
        "slow": {"command": sys.executable, "args": ["-c", slow]},
        "bad": {"command": sys.executable, "args": ["-c", wait + "sys.exit(1)"]}}}))
    env = {"PATH": f"{os.path.dirname(sys.executable)}:/usr/bin:/bin", "HOME": str(home),
           "PI_CODING_AGENT_DIR": str(home / "agent"), "TERM": "xterm-256color", "LANG": "C.UTF-8", "SHELL": "/bin/sh",
           "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    argv = ([str(NODE22), str(require_real("pi16") / "dist" / "cli.js")] if program == "pi16"
            else [sys.executable, "-m", "pi_plugins.cli"])
    (tmp_path / program).mkdir()
    with Terminal(tmp_path / program, [*argv, "--approve", "--model", "local/test-model"], env=env,
                  cwd=home / "project") as term:
        term.wait_for("test-model", timeout=60)
        time.sleep(0.5)
        term.type("/mcp")
        time.sleep(0.3)
        term.press("Enter")
        try:
            term.wait_for("MCP servers", timeout=3)
        except TerminalTimeout:  # a first Enter lost while a loaded pi 1.6 draws
            term.press("Enter")
        first = term.wait_for(lambda s: "MCP servers" in s and s.count("connecting…") == 2, timeout=20)

        def row(screen: str, name: str) -> str:
            menu = screen[screen.rindex("MCP servers"):]
            return next(line for line in menu.splitlines() if line.strip().lstrip("→ ").startswith(name))

        assert "connecting…" in row(first, "slow") and "connecting…" in row(first, "bad")
        gate.write_text("go")
        last = term.wait_for(lambda s: "connected · 10 tools" in s and "failed" in s, timeout=60)
        assert "failed: MCP connection closed · codemode · global" in row(last, "bad")
        assert "connected · 10 tools · resources · codemode · global" in row(last, "slow")
        # the same layout in both: the name in a 32-cell column, the state after it
        for name in ("bad", "slow"):
            shown = row(last, name)
            at = shown.index(name)
            assert shown[at + COLUMN:].startswith(("failed", "connected")) and shown[at:at + COLUMN].strip() == name
        assert last.index("bad") < last.index("slow")  # the one that needs attention first
