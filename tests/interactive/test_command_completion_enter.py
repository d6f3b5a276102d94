"""Enter on a slash-command completion, side by side with pi 1.6 in tmux: on the menu of
command names the first Enter takes the highlighted command and runs it (whether the
command takes arguments or not, and whether the menu had time to show); on a menu of a
command's arguments it only takes the argument, and a second Enter runs the line."""

import json
import os
import sys
import time

import pytest

pytestmark = [pytest.mark.process, pytest.mark.requires("tmux")]

NO_SERVERS = "No MCP servers configured"


def _chat(tmp_path, server, program, mcp_servers=None):
    from support.programs import NODE22, require_real
    from support.terminal import Terminal

    home = tmp_path / program
    (home / "project").mkdir(parents=True)
    (home / "agent").mkdir()
    (home / "agent" / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    if mcp_servers:
        (home / "agent" / "mcp.json").write_text(json.dumps({"mcpServers": mcp_servers}))
    env = {"PATH": f"{os.path.dirname(sys.executable)}:/usr/bin:/bin", "HOME": str(home),
           "PI_CODING_AGENT_DIR": str(home / "agent"), "TERM": "xterm-256color", "LANG": "C.UTF-8",
           "SHELL": "/bin/sh", "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    argv = ([str(NODE22), str(require_real("pi16") / "dist" / "cli.js")] if program == "pi16"
            else [sys.executable, "-m", "pi_plugins.cli"])
    return Terminal(home, [*argv, "--approve", "--model", "local/test-model"], env=env, cwd=home / "project")


def _editor_line(screen: str) -> str:
    """The editor's (first) row: the line under the second-to-last border line (no
    dialog open)."""
    lines = screen.splitlines()
    borders = [i for i, line in enumerate(lines) if line.strip() and set(line.strip()) == {"─"}]
    return lines[borders[-2] + 1].strip()


@pytest.mark.parametrize("program", ["ours", pytest.param("pi16", marks=pytest.mark.requires("pi16"))])
def test_the_first_enter_on_a_command_name_completion_runs_the_command(tmp_path, server, program):
    with _chat(tmp_path, server, program) as term:
        term.wait_for("test-model", timeout=60)
        time.sleep(0.5)
        term.type("/mc")  # the menu offers "mcp"
        term.wait_for(lambda s: "Manage MCP servers" in s)
        term.press("Enter")
        term.wait_for(NO_SERVERS, timeout=10)  # one Enter ran it
        term.press("Escape")  # pi 1.6 shows it in the dialog's place
        term.wait_for(lambda s: "MCP servers" not in [line.strip() for line in s.splitlines()], timeout=10)
        time.sleep(1.0)  # a key right after Esc would read as Alt+key
        term.type("/model")  # a command with arguments, typed whole: it runs too
        term.wait_for(lambda s: "scoped-models" in s)
        term.press("Enter")
        term.wait_for("test-model [local]", timeout=10)  # the model selector


@pytest.mark.parametrize("program", ["ours", pytest.param("pi16", marks=pytest.mark.requires("pi16"))])
def test_enter_on_an_argument_completion_takes_it_and_the_next_enter_runs_the_line(tmp_path, server, program):
    off = {"off": {"command": "true", "enabled": False}}  # a server, none to reconnect
    with _chat(tmp_path, server, program, off) as term:
        term.wait_for("test-model", timeout=60)
        time.sleep(0.5)
        term.type("/mcp reco")
        term.wait_for(lambda s: "reconnect" in s.replace("/mcp reco", ""))
        term.press("Enter")
        term.wait_for(lambda s: _editor_line(s).startswith("/mcp reconnect"))
        time.sleep(0.5)
        assert "No enabled MCP server" not in term.screen()  # not run yet
        term.press("Enter")
        term.wait_for("No enabled MCP server to reconnect", timeout=10)
