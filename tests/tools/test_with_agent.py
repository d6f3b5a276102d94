"""The tools inside the agent: the plugin, the allow-list, overriding a built-in,
permission and redaction hooks, and an abort in the middle of a command."""

import asyncio
import subprocess
import sys
import time

import pytest


import pi_plugins.tools
from support.gates import Gate
from support.tool_helpers import text_of, wait_dead
from pi_core import Agent, Plugins, hookimpl, tool
from pi_core.protocol.events import ToolCallDecision
from pi_core.protocol.messages import ToolResultMessage
from pi_core.protocol.tools import ToolResult
from pi_core.testing import Reply, ScriptedProvider, scripted_model
from pi_plugins.tools import ALL_TOOLS, DEFAULT_ACTIVE_TOOLS, builtin_tools


def make_agent(ws, replies, *extra_plugins):
    provider = ScriptedProvider(replies)
    plugins = Plugins()
    plugins.register(provider)
    plugins.register(pi_plugins.tools)
    for plugin in extra_plugins:
        plugins.register(plugin)
    return Agent(model=scripted_model(), plugins=plugins, cwd=str(ws)), provider


def tool_results(messages):
    return [m for m in messages if isinstance(m, ToolResultMessage)]


def test_the_plugin_registers_all_seven_tools_and_names_the_default_four(ws):
    agent, _ = make_agent(ws, [])
    asyncio.run(agent.setup())
    assert [t.name for t in agent.tools] == list(ALL_TOOLS)
    assert DEFAULT_ACTIVE_TOOLS == ("read", "bash", "edit", "write")
    assert tuple(t.name for t in agent.tools if t.default_active) == DEFAULT_ACTIVE_TOOLS


def test_every_tool_declares_its_parameters_once_and_its_execution_mode():
    for t in builtin_tools():
        assert t.schema["type"] == "object" and t.schema["properties"], t.name
        assert t.schema is t.parameters  # what the model sees is what validation uses
        assert t.execution_mode in ("parallel", "sequential")
        assert t.description


def test_the_allow_list_limits_what_the_model_is_offered(ws):
    agent, provider = make_agent(ws, [Reply(text="a"), Reply(text="b")])
    agent.set_active_tools(DEFAULT_ACTIVE_TOOLS)
    asyncio.run(agent.prompt("hi"))
    assert [t.name for t in provider.requests[0].tools] == ["read", "bash", "edit", "write"]
    agent.set_active_tools([])  # --no-tools
    asyncio.run(agent.prompt("again"))
    assert provider.requests[1].tools == []


def test_a_tool_outside_the_allow_list_cannot_be_called(ws):
    (ws / "a.txt").write_text("x\n")
    agent, _ = make_agent(ws, [Reply(tool_calls=[("ls", {})]), Reply(text="ok")])
    agent.set_active_tools(["read"])
    result = tool_results(asyncio.run(agent.prompt("go")))[0]
    assert result.is_error and "not found" in text_of(result)


def test_a_plugin_read_registered_later_replaces_the_builtin(ws):
    @tool(name="read", parameters={"type": "object", "properties": {"path": {"type": "string"}}})
    def my_read(args, run):
        """Read through my cache."""
        return f"cached {args['path']}"

    class MyTools:
        @hookimpl
        def register_tools(self):
            return [my_read]

    agent, provider = make_agent(ws, [Reply(tool_calls=[("read", {"path": "x"})]), Reply(text="ok")], MyTools())
    messages = asyncio.run(agent.prompt("go"))
    assert text_of(tool_results(messages)[0]) == "cached x"
    offered = [t.name for t in provider.requests[0].tools]
    assert offered == list(DEFAULT_ACTIVE_TOOLS)  # same place, one read
    assert provider.requests[0].tools[0].description == "Read through my cache."


def test_a_before_tool_call_plugin_blocks_rm_rf(ws):
    victim = ws / "important.txt"
    victim.write_text("keep me\n")

    class Guard:
        @hookimpl
        def before_tool_call(self, event):
            if event.tool_name == "bash" and "rm -rf" in event.arguments.get("command", ""):
                return ToolCallDecision(block=True, reason="rm -rf is not allowed here; delete single files instead")

    agent, provider = make_agent(
        ws, [Reply(tool_calls=[("bash", {"command": f"rm -rf {ws}/*"})]), Reply(text="ok")], Guard()
    )
    result = tool_results(asyncio.run(agent.prompt("clean up")))[0]
    assert result.is_error and text_of(result) == "rm -rf is not allowed here; delete single files instead"
    assert victim.read_text() == "keep me\n"


def test_an_after_tool_call_plugin_redacts_output_before_the_model_sees_it(ws):
    class Redact:
        @hookimpl
        def after_tool_call(self, result):
            text = text_of(result)
            if "SECRET" in text:
                import re

                return ToolResult.text(re.sub(r"SECRET\w*", "[redacted]", text), result.details, is_error=result.is_error)

    agent, provider = make_agent(
        ws, [Reply(tool_calls=[("bash", {"command": "echo token=SECRET_abc123"})]), Reply(text="ok")], Redact()
    )
    result = tool_results(asyncio.run(agent.prompt("show the token")))[0]
    assert text_of(result) == "token=[redacted]\n"
    sent = [m for m in provider.requests[1].messages if isinstance(m, ToolResultMessage)]
    assert [text_of(m) for m in sent] == ["token=[redacted]\n"]


def test_bad_arguments_come_back_as_an_error_the_model_can_fix(ws):
    agent, _ = make_agent(ws, [Reply(tool_calls=[("read", {"file": "a.txt"})]), Reply(text="ok")])
    result = tool_results(asyncio.run(agent.prompt("go")))[0]
    assert result.is_error and "path" in text_of(result) and "Validation failed" in text_of(result)


def test_abort_in_the_middle_of_bash_kills_its_process_group(ws):
    pids = ws / "pids"
    command = f"sleep 300 & echo $! > {pids}; echo $$ >> {pids}; echo started; sleep 300"
    agent, _ = make_agent(ws, [Reply(tool_calls=[("bash", {"command": command})]), Reply(text="never")])
    seen = []

    def on_event(event):
        if event.type == "tool_execution_update" and "started" in text_of(event.partial_result):
            seen.append(event)
            agent.abort()

    agent.subscribe(on_event)
    began = time.monotonic()
    messages = asyncio.run(asyncio.wait_for(agent.prompt("run it"), 20))
    assert seen and time.monotonic() - began < 10
    result = tool_results(messages)[0]
    assert result.is_error and text_of(result) == "Tool execution was aborted"
    assert wait_dead([int(p) for p in pids.read_text().split()]) == []


def test_two_bash_calls_run_side_by_side(ws, tmp_path):
    """Each call waits for the other at a named pipe: one at a time, neither could finish."""
    a_to_b, b_to_a = Gate(tmp_path / "a_to_b").path, Gate(tmp_path / "b_to_a").path
    calls = [("bash", {"command": f"echo hi > {a_to_b}; read _ < {b_to_a}; echo a"}),
             ("bash", {"command": f"read _ < {a_to_b}; echo hi > {b_to_a}; echo b"})]
    agent, _ = make_agent(ws, [Reply(tool_calls=calls), Reply(text="ok")])
    results = tool_results(asyncio.run(asyncio.wait_for(agent.prompt("go"), 10)))
    assert [text_of(r) for r in results] == ["a\n", "b\n"]


def test_the_plugin_is_a_built_in_of_the_distribution():
    from pi_core.app.builtins import BUILTINS

    assert BUILTINS.get("tools") == "pi_plugins.tools"


@pytest.mark.process
def test_importing_the_plugin_loads_no_tool_module_or_heavy_library():
    probe = (
        "import sys, pi_plugins.tools; "
        "print(sorted(m for m in sys.modules if m.startswith(('pi_plugins.tools.', 'pathspec', 'difflib', 'jsonschema'))))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
