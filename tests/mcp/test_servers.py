"""The built-in mcp plugin against our test server (tests/support/mcp_server.py) over
stdio and streamable HTTP, called by the scripted model through a real harness."""

import asyncio
import subprocess
import sys
import time

import pytest

import pi_plugins.mcp as mcp_plugin
from pi_core import ImageContent, ToolCallDecision, hookimpl, text_of
from pi_core.testing import RecordingUI, Reply, trust_project

from .conftest import SERVER, gone, pid_of, stdio_entry, write_servers

pytestmark = pytest.mark.process  # every test starts a server process


def results(harness):
    return [m for m in harness.messages if m.role == "toolResult"]


def declared(request):
    return sorted(t.name for t in request.tools)


async def start(harness, script, ui=None, *plugins):
    return await harness(*plugins, mcp_plugin, script=script, ui=ui or RecordingUI(), session="memory")


def test_direct_tools_are_declared_with_pi_16s_names_and_calls_round_trip(tmp_path, agent, harness, monkeypatch):
    monkeypatch.setenv("DEMO_SECRET", "s3cret")
    work = tmp_path / "work"
    (work / "srv").mkdir(parents=True)
    write_servers(agent / "mcp.json", {"demo": stdio_entry(tmp_path, exposure="direct", cwd="srv",
                                                           env={"DEMO_TOKEN": "${DEMO_SECRET}"},
                                                           toolExposure={"crash": "hidden", "learn": "codemode"})})
    script = [Reply(tool_calls=[("mcp__demo__add", {"a": 2, "b": 3}), ("mcp__demo__dot", {}),
                                ("mcp__demo__fail", {"why": "testing"}), ("mcp__demo__whoami", {}),
                                ("mcp__demo__get_tiny_image", {})]),
              Reply(text="2 + 3 = 5")]

    async def scenario():
        h = await start(harness, script)
        await h.prompt("add 2 and 3, then the rest")
        pid = pid_of(tmp_path)
        status = mcp_plugin.servers_of(h.ctx).status()
        await h.close()
        return h, pid, status

    h, pid, status = asyncio.run(scenario())
    first = harness.provider.requests[0]
    assert declared(first) == ["list_mcp_resource_templates", "list_mcp_resources", "mcp__demo__add", "mcp__demo__auth", "mcp__demo__big", "mcp__demo__dot",
                               "mcp__demo__fail", "mcp__demo__get_tiny_image", "mcp__demo__structured",
                               "mcp__demo__whoami", "read_mcp_resource"]  # crash hidden, learn not declared (codemode)
    add = next(t for t in first.tools if t.name == "mcp__demo__add")
    assert add.description == "Add two whole numbers."
    assert add.parameters["properties"]["a"]["type"] == "integer" and add.parameters["required"] == ["a", "b"]
    added, dot, failed, whoami, tiny = results(h)
    assert text_of(added.content) == "5" and not added.is_error
    assert dot.content[0] == ImageContent(data=dot.content[0].data, mime_type="image/png")
    assert failed.is_error and "fail" in text_of(failed.content)
    assert text_of(whoami.content) == f"s3cret in {work / 'srv'}"
    assert text_of(tiny.content) == "tiny"
    assert status == "demo: connected, 10 tools (direct)"
    assert gone(pid), "session_shutdown stops the server"


def test_mcp_calls_pass_the_tool_gates(tmp_path, agent, harness):
    write_servers(agent / "mcp.json", {"demo": stdio_entry(tmp_path, exposure="direct")})

    class Gate:
        @hookimpl
        def before_tool_call(self, event, ctx):
            if event.tool_name == "mcp__demo__add":
                return ToolCallDecision(block=True, reason="no adding today")

    script = [Reply(tool_calls=[("mcp__demo__add", {"a": 1, "b": 1})]), Reply(text="blocked")]

    async def scenario():
        h = await start(harness, script, None, Gate())
        await h.prompt("add")
        await h.close()
        return h

    (blocked,) = results(asyncio.run(scenario()))
    assert blocked.is_error and "no adding today" in text_of(blocked.content)


def test_a_server_that_crashes_mid_call_reconnects_on_the_next_call(tmp_path, agent, harness):
    write_servers(agent / "mcp.json", {"demo": stdio_entry(tmp_path, exposure="direct")})
    script = [Reply(tool_calls=[("mcp__demo__crash", {})]), Reply(tool_calls=[("mcp__demo__add", {"a": 1, "b": 2})]),
              Reply(text="back")]
    seen = {}

    async def scenario():
        h = await start(harness, script)
        await mcp_plugin.servers_of(h.ctx).wait_for_direct()
        first = pid_of(tmp_path)

        class Watch:
            @hookimpl
            def before_tool_call(self, event, ctx):
                if event.tool_name == "mcp__demo__add":
                    seen["state"] = mcp_plugin.servers_of(ctx).status()

        h.plugins.register(Watch())
        await h.prompt("crash it, then add")
        second = pid_of(tmp_path)
        await h.close()
        return h, first, second

    h, first, second = asyncio.run(scenario())
    crashed, added = results(h)
    assert crashed.is_error and text_of(crashed.content) == (
        'MCP server "demo": connection closed; it reconnects on the next call')
    assert seen["state"].startswith("demo: disconnected, reconnects on next call (direct)")
    assert not added.is_error and text_of(added.content) == "3"
    assert first != second and h.messages[-1].text == "back"


HANG = "import sys, time\nsys.stdin.read()\ntime.sleep(60)"


def test_a_hung_initialize_does_not_delay_the_first_prompt_when_no_server_is_direct(tmp_path, agent, harness):
    write_servers(agent / "mcp.json", {"slow": {"command": sys.executable, "args": ["-c", HANG]},
                                       "demo": stdio_entry(tmp_path)})  # codemode: not waited for

    async def scenario():
        h = await start(harness, [Reply(text="no wait")])
        started = time.monotonic()
        await h.prompt("hello")
        took = time.monotonic() - started
        await h.close()
        return h, took

    h, took = asyncio.run(scenario())
    assert took < 2 and h.messages[-1].text == "no wait"
    assert all(not t.name.startswith("mcp__") for t in harness.provider.requests[0].tools)


def test_the_first_prompt_waits_for_a_direct_server_but_not_past_its_limit(tmp_path, agent, harness, monkeypatch):
    monkeypatch.setattr("pi_plugins.mcp.servers.STARTUP_WAIT_S", 1.0)
    write_servers(agent / "mcp.json", {"slow": {"command": sys.executable, "args": ["-c", HANG],
                                                "exposure": "direct"}})
    ui = RecordingUI()

    async def scenario():
        h = await start(harness, [Reply(text="went on")], ui)
        started = time.monotonic()
        await h.prompt("hello")
        took = time.monotonic() - started
        await h.close()
        return h, took

    h, took = asyncio.run(scenario())
    assert 0.9 < took < 5 and h.messages[-1].text == "went on"
    assert ("info", "MCP servers are still connecting; their tools become available once connected.") in ui.notes


def test_start_up_problems_are_said_once_in_one_line_each(tmp_path, agent, harness, capfd):
    write_servers(agent / "mcp.json", {
        "broken": {"command": sys.executable,
                   "args": ["-c", "import sys; print('cannot load the frobnicator', file=sys.stderr); sys.exit(2)"]},
        "missing": {"command": str(tmp_path / "no-such-server")},
        "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"}})
    ui = RecordingUI()

    async def scenario():
        h = await start(harness, [Reply(text="fine")], ui)
        await mcp_plugin.servers_of(h.ctx).reported
        await h.prompt("hello")
        await h.close()

    asyncio.run(scenario())
    (warning,) = [w for w in ui.warnings() if w.startswith("MCP servers need attention")]
    lines = warning.splitlines()
    assert lines[0] == "MCP servers need attention:" and lines[-1] == "Run /mcp to fix."
    assert lines[1] == (f'  config: {agent / "mcp.json"}: server "old": legacy SSE transport is not supported; '
                        "use the streamable HTTP URL")
    assert lines[2].startswith("  broken: failed: ") and lines[3].startswith("  missing: failed: ")
    assert len(lines) == 5
    assert "Traceback" not in capfd.readouterr().err


def test_a_changed_tool_list_adds_and_withdraws_tools(tmp_path, agent, harness):
    write_servers(agent / "mcp.json", {"demo": stdio_entry(tmp_path, exposure="direct")})
    script = [Reply(tool_calls=[("mcp__demo__learn", {})]), Reply(tool_calls=[("mcp__demo__late", {})]),
              Reply(text="done")]

    async def scenario():
        h = await start(harness, script)
        await h.prompt("learn")
        await h.close()
        return h

    h = asyncio.run(scenario())
    first, second, _ = harness.provider.requests
    assert "mcp__demo__fail" in declared(first) and "mcp__demo__late" not in declared(first)
    assert "mcp__demo__late" in declared(second) and "mcp__demo__fail" not in declared(second)
    assert text_of(results(h)[1].content) == "late"


def test_no_mcp_and_an_untrusted_project_connect_nothing(tmp_path, agent, harness):
    work = tmp_path / "work"
    write_servers(work / ".pi" / "mcp.json", {"demo": stdio_entry(tmp_path, exposure="direct")})

    async def scenario():
        h = await start(harness, [Reply(text="a")])
        untrusted = mcp_plugin.servers_of(h.ctx)
        await h.close()
        trust_project(agent, work)
        h = await start(harness, [Reply(text="b")])
        trusted = mcp_plugin.servers_of(h.ctx)
        await h.close()
        return untrusted, trusted

    untrusted, trusted = asyncio.run(scenario())
    assert untrusted is None and trusted is not None


@pytest.fixture
def http_server(tmp_path):
    from tests.support.local_servers import free_port

    port = free_port()
    process = subprocess.Popen([sys.executable, SERVER, "--http", str(port)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    import socket

    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}/mcp"
    process.terminate()
    process.wait(10)


def test_streamable_http_sends_the_configured_headers(tmp_path, agent, harness, http_server, monkeypatch):
    monkeypatch.setenv("DOCS_TOKEN", "t0ken")
    write_servers(agent / "mcp.json", {"web": {"url": http_server, "exposure": "direct",
                                               "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}})
    script = [Reply(tool_calls=[("mcp__web__auth", {}), ("mcp__web__add", {"a": 4, "b": 5})]), Reply(text="ok")]

    async def scenario():
        h = await start(harness, script)
        await h.prompt("who am I")
        await h.close()
        return h

    auth, added = results(asyncio.run(scenario()))
    assert text_of(auth.content) == "Bearer t0ken" and text_of(added.content) == "9"
