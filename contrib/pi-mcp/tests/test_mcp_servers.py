"""pi-mcp against real MCP servers: a FastMCP server written into the test's temp folder
and run as a subprocess over stdio, called by the scripted model through a real harness."""

import asyncio
import json
import os
import sys
import textwrap
import time

import pi_mcp
import pytest

from pi_core import ImageContent, text_of
from pi_core.testing import RecordingUI, Reply

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

SERVER = textwrap.dedent(f'''
    import base64, os, pathlib
    try:  # mcp 2 renamed FastMCP to MCPServer
        from mcp.server.mcpserver import MCPServer as FastMCP
        from mcp.server.mcpserver.utilities.types import Image
    except ImportError:
        from mcp.server.fastmcp import FastMCP
        from mcp.server.fastmcp.utilities.types import Image

    pathlib.Path(os.environ["PID_FILE"]).write_text(str(os.getpid()))
    server = FastMCP("demo")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two whole numbers."""
        return a + b

    @server.tool()
    def dot() -> Image:
        """A one-pixel PNG."""
        return Image(data=base64.b64decode("{PNG}"), format="png")

    @server.tool()
    def fail(why: str = "no reason") -> str:
        """Always fails."""
        raise ValueError("boom: " + why)

    @server.tool()
    def whoami() -> str:
        """The token from the environment and the folder the server runs in."""
        return os.environ.get("DEMO_TOKEN", "-") + " in " + os.getcwd()

    @server.tool()
    def crash() -> str:
        """Ends the server process."""
        os._exit(3)

    server.run()
''')


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project whose .pi/mcp.json starts the demo server (and an agent dir of its own)."""
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("DEMO_SECRET", "s3cret")
    work = tmp_path / "work"
    (work / ".pi").mkdir(parents=True)
    (work / "srv").mkdir()
    (tmp_path / "server.py").write_text(SERVER)
    servers = {"demo": {"command": sys.executable, "args": [str(tmp_path / "server.py")], "cwd": "srv",
                        "env": {"PID_FILE": str(tmp_path / "demo.pid"), "DEMO_TOKEN": "${DEMO_SECRET}"},
                        "timeout": 30}}
    write_config(work, servers)
    from pi_core.testing import trust_project

    trust_project(tmp_path / "agent", work)  # a project's mcp.json needs it trusted
    return work


def write_config(work, servers):
    (work / ".pi" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


def run(coro):
    return asyncio.run(coro)


@pytest.fixture
def make(harness):
    """``await make(script)`` -> (harness, provider, ui), with pi-mcp loaded in the project."""
    async def make(script):
        ui = RecordingUI()
        made = await harness(pi_mcp, script=script, ui=ui, session="memory")
        return made, harness.provider, ui
    return make


def results(harness):
    return [m for m in harness.messages if m.role == "toolResult"]


def pid_of(work):
    return int((work.parent / "demo.pid").read_text())


def gone(pid, within=10.0):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_the_model_calls_server_tools_and_gets_text_images_and_errors_back(project, make):
    servers = json.loads((project / ".pi" / "mcp.json").read_text())["mcpServers"]
    servers["broken"] = {"command": sys.executable,
                         "args": ["-c", "import sys; print('cannot load the frobnicator', file=sys.stderr); sys.exit(2)"]}
    servers["missing"] = {"command": str(project / "no-such-server")}
    write_config(project, servers)
    script = [Reply(tool_calls=[("mcp__demo__add", {"a": 2, "b": "3"}), ("mcp__demo__dot", {}),
                                ("mcp__demo__fail", {"why": "testing"}), ("mcp__demo__whoami", {}),
                                ("mcp__demo__add", {"a": "two"})]),
              Reply(text="2 + 3 = 5")]

    async def scenario():
        harness, provider, ui = await make(script)
        pid = pid_of(project)
        await harness.prompt("add 2 and 3, then the rest")
        commands = await harness.plugins.call("register_commands", ctx=harness.ctx)
        listing = await {c.name: c for c in commands}["mcp"].handler("", harness.ctx)
        await harness.close()
        return harness, provider, ui, pid, listing

    harness, provider, ui, pid, listing = run(scenario())
    offered = {t.name: t for t in provider.requests[0].tools}
    assert sorted(offered) == ["mcp__demo__add", "mcp__demo__crash", "mcp__demo__dot", "mcp__demo__fail",
                               "mcp__demo__whoami"]
    add = offered["mcp__demo__add"]
    assert add.description == "Add two whole numbers. (MCP server: demo)"
    assert add.parameters["properties"]["a"]["type"] == "integer" and add.parameters["required"] == ["a", "b"]

    added, dot, failed, whoami, invalid = results(harness)
    assert text_of(added.content) == "5" and not added.is_error  # "3" coerced by the schema
    assert added.details == {"server": "demo", "tool": "add", "structuredContent": {"result": 5}}
    assert dot.content == [ImageContent(data=PNG, mime_type="image/png")]
    assert failed.is_error and "fail" in text_of(failed.content)
    assert text_of(whoami.content) == f"s3cret in {project / 'srv'}"
    assert invalid.is_error and "Validation failed" in text_of(invalid.content)  # checked before the server
    # The model saw the server's answer.
    assert any(m.role == "toolResult" and text_of(m.content) == "5" for m in provider.requests[1].messages)

    warnings = ui.warnings()
    assert len(warnings) == 2
    assert warnings[0].startswith("pi-mcp: server 'broken' failed to start: ")
    assert "its stderr ends with: cannot load the frobnicator" in warnings[0]
    assert warnings[1].startswith("pi-mcp: server 'missing' failed to start: ")
    assert listing.splitlines()[0].startswith("demo: running, 5 tools: mcp__demo__add, ")
    assert listing.splitlines()[1].startswith("broken: failed to start: ")
    assert gone(pid), "session_shutdown stops the server process"


def test_a_server_that_dies_mid_call_gives_the_model_an_error_and_the_run_goes_on(project, make):
    script = [Reply(tool_calls=[("mcp__demo__crash", {})]), Reply(tool_calls=[("mcp__demo__add", {"a": 1, "b": 1})]),
              Reply(text="the server is gone")]

    async def scenario():
        harness, _, _ = await make(script)
        await harness.prompt("crash it")
        listing = pi_mcp.servers_of(harness.ctx).describe()
        await harness.close()
        return harness, listing

    harness, listing = run(scenario())
    crashed, after = results(harness)
    assert crashed.is_error and text_of(crashed.content).startswith("MCP server 'demo', tool 'crash': ")
    assert after.is_error and "MCP server 'demo', tool 'add': " in text_of(after.content)
    assert harness.messages[-1].text == "the server is gone"
    assert listing.startswith("demo: stopped (the connection broke")


def test_a_stopped_server_starts_again_on_the_next_call(project, make):
    script = [Reply(tool_calls=[("mcp__demo__add", {"a": 1, "b": 2})]), Reply(text="3")]

    async def scenario():
        harness, _, _ = await make(script)
        first = pid_of(project)
        await harness.notify(pi_mcp_shutdown())  # the session ends; the harness goes on
        stopped = gone(first)
        await harness.prompt("again")
        second = pid_of(project)
        await harness.close()
        return harness, first, second, stopped

    harness, first, second, stopped = run(scenario())
    assert stopped and first != second
    assert text_of(results(harness)[0].content) == "3"


def pi_mcp_shutdown():
    from pi_core import SessionShutdown

    return SessionShutdown()


def test_a_server_that_never_answers_is_given_up_after_its_startup_timeout(project, make):
    sleeper = f"import os, pathlib, time; pathlib.Path({str(project.parent / 'demo.pid')!r}).write_text(str(os.getpid())); time.sleep(60)"
    write_config(project, {"slow": {"command": sys.executable, "args": ["-c", sleeper], "startupTimeout": 1}})

    async def scenario():
        started = time.monotonic()
        harness, provider, ui = await make([Reply(text="no tools, still fine")])
        waited = time.monotonic() - started
        await harness.prompt("hello")
        await harness.close()
        return harness, provider, ui, waited

    harness, provider, ui, waited = run(scenario())
    assert ui.notes == [("warning", "pi-mcp: server 'slow' failed to start: did not start within 1 s")]
    assert provider.requests[0].tools == [] and harness.messages[-1].text == "no tools, still fine"
    assert waited < 12  # the SDK's import takes seconds on a busy machine; the server's wait takes 1 s
    assert gone(pid_of(project)), "the server that never answered is not left running"
