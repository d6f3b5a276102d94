"""Guards fail closed: a decide hook that guards an action and raises blocks the action;
the model or the user is told which plugin failed, and the run goes on."""

import pytest
import json
import textwrap

from pi_core import hookimpl
from pi_core.testing import Reply

from support.agents import run
from support.harnesses import make
from support.llm_server import Reply as ServerReply

BROKEN_GATE = textwrap.dedent('''
    from pi_core import hookimpl

    @hookimpl
    def before_tool_call(event, ctx):
        raise RuntimeError("policy file is corrupt")
''')


class BrokenGate:
    @hookimpl
    def before_tool_call(self, event):
        raise RuntimeError("policy file is corrupt")

    @hookimpl
    def user_bash(self, event):
        raise RuntimeError("policy file is corrupt")

    @hookimpl
    def session_before_switch(self, event):
        raise RuntimeError("policy file is corrupt")

    @hookimpl
    def session_before_fork(self, event):
        raise RuntimeError("policy file is corrupt")

    @hookimpl
    def session_before_compact(self, event):
        raise RuntimeError("policy file is corrupt")


def test_a_raising_gate_blocks_the_tool_call_the_model_reads_why_and_the_run_goes_on(tmp_path):
    ran = []
    from pi_core import tool

    @tool(parameters={"type": "object", "properties": {}})
    def danger(args, run):
        """Do something that needs permission."""
        ran.append(1)
        return "the gated command RAN"

    harness, provider, _ = make(tmp_path, [
        Reply(tool_calls=[("danger", {})]),
        Reply(text="Understood, it was blocked."),
    ], BrokenGate())
    harness.agent.tools = [danger]
    run(harness.prompt("do it"))
    assert ran == []
    result = [m for m in harness.messages if m.role == "toolResult"][0]
    text = result.content[0].text
    assert result.is_error and "BrokenGate" in text and "the permission check failed" in text
    assert harness.messages[-1].text == "Understood, it was blocked."  # the run went on
    assert [(e.plugin, e.hook) for e in harness.plugins.errors] == [("BrokenGate", "before_tool_call")]


def test_raising_guards_of_the_shell_and_of_session_changes_cancel_them(tmp_path):
    harness, *_ = make(tmp_path, [Reply(text="a")], BrokenGate())
    run(harness.prompt("hi"))
    file = harness.session.file
    assert run(harness.run_bash("echo should-not-run > ran.txt")) is None
    assert not (tmp_path / "ran.txt").exists()
    assert not run(harness.new_session()) and harness.session.file == file
    assert not run(harness.clone()) and harness.session.file == file
    assert run(harness.compact()) is None
    hooks = [e.hook for e in harness.plugins.errors]
    assert hooks == ["user_bash", "session_before_switch", "session_before_fork", "session_before_compact"]


@pytest.mark.process
def test_a_raising_gate_in_print_mode_is_reported_on_stderr_and_the_command_does_not_run(pi, server):
    (pi.cwd / "gate.py").write_text(BROKEN_GATE)
    server.push(ServerReply(tool_calls=[("bash", {"command": "echo RAN > ran.txt"})]),
                ServerReply(text="Blocked, moving on."))
    out = pi.run("-e", "gate.py", "-p", "run it")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "Blocked, moving on.\n"
    assert not (pi.cwd / "ran.txt").exists()
    assert "failed in before_tool_call" in out.stderr and "policy file is corrupt" in out.stderr
    sent = json.dumps(server.requests[1].body["messages"][-1])
    assert "the permission check failed" in sent and "gate" in sent


@pytest.mark.process
def test_a_raising_gate_over_rpc_is_an_extension_error_and_the_call_is_blocked(pi, server, start_rpc):
    (pi.cwd / "gate.py").write_text(BROKEN_GATE)
    server.push(ServerReply(tool_calls=[("bash", {"command": "echo RAN > ran.txt"})]),
                ServerReply(text="Blocked."))
    rpc = start_rpc("-e", "gate.py")
    rpc.ok("prompt", message="run it")
    rpc.event("agent_end")
    error = rpc.event("extension_error")
    assert error["event"] == "before_tool_call" and "policy file is corrupt" in error["error"]
    end = rpc.event("tool_execution_end")
    assert end["isError"] and "the permission check failed" in json.dumps(end["result"])
    assert not (pi.cwd / "ran.txt").exists()
