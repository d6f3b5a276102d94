"""``pi mcp add|list|remove`` and ``pi -p`` with MCP servers, as real processes against
our test server (tests/support/mcp_server.py) and the scripted LLM server."""

import json
import subprocess
import sys

import pytest

from support.llm_server import Reply

from .conftest import SERVER, gone, write_servers

pytestmark = pytest.mark.process


def pi_mcp(pi, *args):
    """``pi mcp ARGS`` (no --model: shell commands start no session)."""
    return subprocess.run([sys.executable, "-m", "pi_plugins.cli", "mcp", *args], cwd=pi.cwd, env=pi.env,
                          capture_output=True, text=True, timeout=60)


def test_add_list_and_remove_edit_the_users_file_or_with_local_the_projects(pi):
    user, project = pi.agent_dir / "mcp.json", pi.cwd / ".pi" / "mcp.json"
    pi.env["SECRET"] = "s3cret"
    added = pi_mcp(pi, "add", "demo", "--env", "DEMO_TOKEN=${SECRET}", "--", sys.executable, SERVER)
    assert added.returncode == 0, added.stderr
    assert added.stdout.splitlines() == [f'Added global MCP server "demo" in {user}.', "Check it with: pi mcp list"]
    web = pi_mcp(pi, "add", "-l", "web", "--url", "http://127.0.0.1:9/mcp", "--bearer-token-env-var", "WEB_TOKEN",
                 "--exposure", "direct")
    assert web.returncode == 0, web.stderr
    assert json.loads(user.read_text()) == {"mcpServers": {"demo": {
        "command": sys.executable, "args": [SERVER], "env": {"DEMO_TOKEN": "${SECRET}"}}}}
    assert json.loads(project.read_text()) == {"mcpServers": {"web": {
        "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${WEB_TOKEN}"}, "exposure": "direct"}}}

    listed = pi_mcp(pi, "list")  # the project is not trusted: its server is not read
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert listed.stdout.splitlines()[0] == "demo: connected, 10 tools (codemode, global)"
    assert listed.stdout.splitlines()[-1] == (f"{project} is ignored because the project is not trusted. "
                                              "Start pi in the project to trust it.")
    pi.trust_project()
    listed = pi_mcp(pi, "list", "--json")
    assert listed.returncode == 1  # web is enabled and does not connect
    report = json.loads(listed.stdout)
    states = {s["name"]: (s["state"], s["scope"]) for s in report["servers"]}
    assert states == {"demo": ("connected", "global"), "web": ("failed", "project")}
    assert report["servers"][1]["error"] == (
        'Failed to resolve MCP server "web" header "Authorization" from environment variable: WEB_TOKEN')
    assert listed.stderr == ""

    wrong = pi_mcp(pi, "remove", "web")
    assert wrong.returncode == 1 and wrong.stderr.strip() == (
        f'No global MCP server named "web" in {user}. It is defined in {project}; use --local.')
    assert pi_mcp(pi, "remove", "-l", "web").returncode == 0
    assert json.loads(project.read_text()) == {"mcpServers": {}}
    sse = pi_mcp(pi, "add", "old", "--url", "http://127.0.0.1:9/sse", "--header", "X=1", "--env", "A=1")
    assert sse.returncode == 1 and sse.stderr.strip() == "--env only applies to stdio servers."


def test_a_print_run_calls_a_direct_server_tool_and_no_mcp_leaves_them_out(pi, server, tmp_path):
    write_servers(pi.agent_dir / "mcp.json", {"demo": {"command": sys.executable, "args": [SERVER],
                                                       "exposure": "direct"}})
    server.push(Reply(tool_calls=[("mcp__demo__add", {"a": 20, "b": 22})]), Reply(text="It is 42."))
    done = pi.run("-p", "add 20 and 22")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "It is 42."
    first, second = server.requests
    names = [t["function"]["name"] for t in first.body["tools"]]
    assert "mcp__demo__add" in names and "mcp__demo__get_tiny_image" in names
    result = next(m for m in second.body["messages"] if m["role"] == "tool")
    assert result["content"] in ("42", [{"type": "text", "text": "42"}])

    server.push(Reply(text="no tools"))
    plain = pi.run("-p", "--no-mcp", "hello")
    assert plain.returncode == 0, plain.stderr
    assert not any(t["function"]["name"].startswith("mcp__") for t in server.requests[-1].body.get("tools", []))


def test_the_plugin_and_its_subcommand_load_nothing_of_the_sdk():
    from pi_core.testing import assert_light_import

    assert_light_import("pi_plugins.mcp", also=("mcp", "pi_plugins.mcp.connection"))
    assert_light_import("pi_plugins.mcp.cli", also=("mcp", "pi_plugins.mcp.connection"))


LOAD_WHILE_TICKING = """
import asyncio, json, sys, time
from pi_plugins.mcp.connection import load_sdk

async def main():
    before = "mcp" in sys.modules
    loading = asyncio.ensure_future(load_sdk())
    start = last = time.monotonic()
    gaps = []
    while not loading.done():
        await asyncio.sleep(0.005)
        now = time.monotonic()
        gaps.append(now - last)
        last = now
    await loading
    print(json.dumps({"before": before, "after": "mcp" in sys.modules, "took": time.monotonic() - start,
                      "longest": max(gaps)}))

asyncio.run(main())
"""


def test_the_event_loop_keeps_running_while_the_sdk_loads():
    """The SDK's import (most of a second) runs beside the event loop, so a first prompt that
    waits for no server is not held up by it."""
    done = subprocess.run([sys.executable, "-c", LOAD_WHILE_TICKING], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert not seen["before"] and seen["after"]
    assert seen["longest"] < seen["took"] / 2, seen


def test_a_print_run_with_servers_that_are_not_direct_answers_and_leaves_no_server_running(pi, server, tmp_path):
    """pi -p ends whether its servers connected or were still starting; none outlives it."""
    pids = tmp_path / "pids"
    pids.mkdir()
    write_servers(pi.agent_dir / "mcp.json", {f"demo{n}": {
        "command": sys.executable, "args": [SERVER], "env": {"PID_FILE": str(pids / str(n))}} for n in range(3)})
    for delay in (0.0, 1.5, 4.0):  # over before the servers spawn, while they start, after they connect
        server.push(Reply(text="hi", delay=delay))
        done = pi.run("--no-session", "-p", "hello")
        assert done.returncode == 0 and done.stdout.strip() == "hi", done.stderr
        assert not any(t["function"]["name"].startswith("mcp__") for t in server.requests[-1].body.get("tools", []))
        for written in pids.iterdir():
            assert gone(int(written.read_text()), within=1.0), f"server {written.name} outlived pi -p"
            written.unlink()
