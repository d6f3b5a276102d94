"""pi-sandbox in a real harness with the built-in tools: the scripted model (and the
user's ``!cmd``) run commands under bubblewrap in a temp workspace."""

import asyncio
import json
import os
import shutil
import socket
import threading
import uuid
from pathlib import Path

import pi_sandbox
import pytest
from pi_sandbox.environment import SandboxEnvironment

from pi_core import Settings, create_harness
from pi_core.testing import Reply, ScriptedProvider, assert_light_import, scripted_model

needs_bwrap = pytest.mark.requires("bwrap")


def run(coro):
    return asyncio.run(coro)


@pytest.fixture
def elsewhere():
    """A folder outside both the workspace and /tmp (the sandbox's /tmp is its own, so
    a sibling of a workspace under /tmp is not even visible inside)."""
    folder = Path("/var/tmp") / f"pi-sandbox-test-{uuid.uuid4().hex}"
    folder.mkdir(parents=True)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def workspace(tmp_path):
    ws = tmp_path / "workspace"
    ws.mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("outside the workspace\n")
    return ws


def harness_for(workspace, script, sandbox=None):
    """A harness in ``workspace`` whose project settings hold ``sandbox``."""
    if sandbox is not None:
        (workspace / ".pi").mkdir(exist_ok=True)
        (workspace / ".pi" / "settings.json").write_text(json.dumps({"sandbox": sandbox}))
        from pi_core.testing import trust_project

        trust_project(workspace.parent / "agent", workspace)  # project settings need trust
    settings = Settings.load(workspace, workspace.parent / "agent")
    provider = ScriptedProvider(script)
    return run(create_harness(provider, pi_sandbox, builtins=True, model=scripted_model(),
                              cwd=str(workspace), settings=settings,
                              active_tools=["read", "bash", "edit", "write", "ls", "grep", "find"])), provider


def tool_results(harness):
    return [m for m in harness.messages if m.role == "toolResult"]


def text(message):
    return "".join(getattr(b, "text", "") for b in message.content)


def bash(command):
    return ("bash", {"command": command})


class Listener:
    """A TCP server on a loopback port of this machine, counting connections."""

    def __init__(self):
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen()
        self.port = self.socket.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.accepted += 1
            connection.close()

    def close(self):
        self.socket.close()


CONNECT = ("python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3); "
           "print('connected')\"")


@needs_bwrap
def test_a_write_outside_the_workspace_fails_and_tmp_is_private(workspace, elsewhere):
    outside = elsewhere
    mark = uuid.uuid4().hex
    harness, _ = harness_for(workspace, [
        Reply(tool_calls=[bash(f"echo x > {outside}/made.txt; echo y > /tmp/{mark}; ls /tmp; echo done")]),
        Reply(tool_calls=[("write", {"path": str(outside / "written.txt"), "content": "x"})]),
        Reply(text="ok"),
    ])
    run(harness.prompt("try"))
    shell, write = tool_results(harness)
    assert "Read-only file system" in text(shell) and "done" in text(shell)
    assert not (outside / "made.txt").exists()
    assert not os.path.exists(f"/tmp/{mark}")  # the sandbox's /tmp is its own
    assert write.is_error and "outside the workspace" in text(write)
    assert not (outside / "written.txt").exists()


@needs_bwrap
def test_tmp_is_one_per_session_kept_across_commands_and_removed_when_the_session_ends(workspace):
    mark = uuid.uuid4().hex
    harness, _ = harness_for(workspace, [
        Reply(tool_calls=[bash(f"echo kept > /tmp/{mark} && echo written")]),
        Reply(tool_calls=[bash(f"cat /tmp/{mark}")]),
        Reply(text="ok"),
    ])
    run(harness.prompt("note it"))
    wrote, read = tool_results(harness)
    assert "written" in text(wrote) and text(read).strip() == "kept"
    assert run(harness.run_bash(f"cat /tmp/{mark}")).output.strip() == "kept"  # the user's !cmd too
    assert not os.path.exists(f"/tmp/{mark}")  # not the host's /tmp
    [(_, folder)] = [(k, v) for k, v in environment_module()._SESSION_TMPS.items() if k[0] == id(harness.ctx)]
    assert os.path.exists(os.path.join(folder, mark)) and (os.stat(folder).st_mode & 0o777) == 0o700

    run(harness.new_session())  # the session ends: its /tmp goes; the new one starts empty
    assert not os.path.exists(folder)
    assert "No such file" in run(harness.run_bash(f"cat /tmp/{mark}")).output
    [(_, second)] = [(k, v) for k, v in environment_module()._SESSION_TMPS.items() if k[0] == id(harness.ctx)]
    run(harness.close())
    assert not os.path.exists(second)


def environment_module():
    import pi_sandbox.environment

    return pi_sandbox.environment


@needs_bwrap
def test_a_connection_to_a_loopback_port_fails_with_the_network_off_and_passes_when_allowed(workspace):
    listener = Listener()
    try:
        harness, _ = harness_for(workspace, [Reply(tool_calls=[bash(CONNECT.format(port=listener.port))]),
                                             Reply(text="ok")])
        run(harness.prompt("connect"))
        [result] = tool_results(harness)
        assert result.is_error and "connected" not in text(result)
        assert listener.accepted == 0

        allowed, _ = harness_for(workspace, [Reply(tool_calls=[bash(CONNECT.format(port=listener.port))]),
                                             Reply(text="ok")], sandbox={"network": True})
        run(allowed.prompt("connect"))
        [result] = tool_results(allowed)
        assert not result.is_error and "connected" in text(result)
        assert listener.accepted == 1
    finally:
        listener.close()


@needs_bwrap
def test_workspace_edits_and_reads_pass(workspace):
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("print('old')\n")
    harness, _ = harness_for(workspace, [
        Reply(tool_calls=[("read", {"path": "src/app.py"})]),
        Reply(tool_calls=[("edit", {"path": "src/app.py", "edits": [{"oldText": "old", "newText": "new"}]})]),
        Reply(tool_calls=[("write", {"path": "notes/todo.md", "content": "- ship it\n"})]),
        Reply(tool_calls=[bash("python3 src/app.py && cat notes/todo.md && echo built > out.txt")]),
        Reply(tool_calls=[("ls", {"path": "."})]),
        Reply(text="done"),
    ])
    run(harness.prompt("work"))
    results = tool_results(harness)
    assert [r.is_error for r in results] == [False] * 5, [text(r) for r in results]
    assert "print('old')" in text(results[0])
    assert (workspace / "src" / "app.py").read_text() == "print('new')\n"
    assert "new" in text(results[3]) and "- ship it" in text(results[3])
    assert (workspace / "out.txt").read_text() == "built\n"
    assert "notes/" in text(results[4]) and "out.txt" in text(results[4])


@needs_bwrap
def test_the_full_output_of_a_long_command_stays_readable(workspace):
    harness, provider = harness_for(workspace, [Reply(tool_calls=[bash("seq 1 5000")]), Reply(text="long")])
    run(harness.prompt("count"))
    [shell] = tool_results(harness)
    path = shell.details["fullOutputPath"]
    assert not path.startswith(str(workspace))  # pi keeps it in its own temp folder
    provider.script += [Reply(tool_calls=[("read", {"path": path, "limit": 3})]), Reply(text="read")]
    run(harness.prompt("read all of it"))
    read = tool_results(harness)[-1]
    assert not read.is_error and text(read).startswith("1\n2\n3"), text(read)


def test_the_file_tools_refuse_paths_outside_the_workspace_symlinks_included(workspace):
    secret = workspace.parent / "outside" / "secret.txt"
    (workspace / "link.txt").symlink_to(secret)
    (workspace / "linked-dir").symlink_to(secret.parent)
    harness, _ = harness_for(workspace, [
        Reply(tool_calls=[("read", {"path": "../outside/secret.txt"})]),
        Reply(tool_calls=[("read", {"path": "link.txt"})]),
        Reply(tool_calls=[("write", {"path": "linked-dir/new.txt", "content": "x"})]),
        Reply(tool_calls=[("ls", {"path": "linked-dir"})]),
        Reply(tool_calls=[("edit", {"path": "link.txt", "edits": [{"oldText": "outside", "newText": "in"}]})]),
        Reply(text="refused"),
    ])
    run(harness.prompt("peek"))
    results = tool_results(harness)
    assert all(r.is_error for r in results), [text(r) for r in results]
    assert all("outside the workspace" in text(r) for r in results)
    assert "outside the workspace\n" not in "".join(text(r) for r in results[:2])
    assert secret.read_text() == "outside the workspace\n"
    assert not (secret.parent / "new.txt").exists()


@needs_bwrap
def test_the_users_shell_command_runs_in_the_sandbox_too(workspace, elsewhere):
    outside = elsewhere
    harness, _ = harness_for(workspace, [])
    message = run(harness.run_bash(f"touch {outside}/by-user; touch by-user; echo $?"))
    assert not (outside / "by-user").exists() and (workspace / "by-user").exists()
    assert "Read-only file system" in message.output


@needs_bwrap
def test_sandboxed_commands_see_neither_the_key_variables_nor_auth_json(workspace, elsewhere, monkeypatch):
    agent = elsewhere / "agent"  # outside /tmp, which is the sandbox's own
    agent.mkdir()
    (agent / "auth.json").write_text(json.dumps({"acme": {"type": "api_key", "key": "acme-key-0123456789"}}))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.setenv("ACME_API_KEY", "env-key-0123456789")
    monkeypatch.setenv("PLAIN_VALUE", "shown-as-is")
    harness, _ = harness_for(workspace, [])
    message = run(harness.run_bash(f"env; echo auth: $(wc -c < {agent}/auth.json)"))
    assert "PLAIN_VALUE=shown-as-is" in message.output and "ACME_API_KEY" not in message.output
    assert "auth: 0" in message.output
    assert "0123456789" not in message.output


@needs_bwrap
def test_an_aborted_sandboxed_command_leaves_no_process(workspace):
    mark = uuid.uuid4().hex
    env = SandboxEnvironment(str(workspace))

    async def scenario():
        from pi_core import AbortSignal

        signal = AbortSignal()
        task = asyncio.ensure_future(env.run(
            f"export SANDBOX_MARK={mark}; (setsid sleep 311 &); sleep 312 & echo started; sleep 313",
            signal=signal))
        for _ in range(2000):  # bubblewrap is slow to start on a loaded machine
            if len(marked(mark)) >= 3:
                break
            await asyncio.sleep(0.01)
        assert len(marked(mark)) >= 3
        signal.abort()
        return await task

    result = run(scenario())
    assert result.aborted and result.output == "started\n"
    assert marked(mark) == []


@needs_bwrap
def test_a_sandboxed_command_runs_in_a_cgroup_of_pis_own_like_every_command(workspace):
    import re

    from pi_core.testing.programs import require

    result = run(SandboxEnvironment(str(workspace)).run("cat /proc/self/cgroup"))
    [path] = [line[3:] for line in result.output.splitlines() if line.startswith("0::")]
    # pi names its cgroup folder after its pid; there is none where cgroups are not writable
    require(f"/pi-{os.getpid()}-" in path, "a cgroup v2 this process may create cgroups under")
    assert re.fullmatch(rf".*/pi-{os.getpid()}-[0-9a-f]+/command-[0-9a-f]+", path), path


def marked(mark):
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/environ", "rb") as f:
                    if f"SANDBOX_MARK={mark}".encode() in f.read().split(b"\0"):
                        found.append(int(name))
            except OSError:
                pass
    return found


def test_without_bwrap_commands_fail_clearly_and_never_run_unsandboxed(workspace, monkeypatch):
    monkeypatch.setenv("PATH", str(workspace / "no-programs-here"))
    harness, _ = harness_for(workspace, [
        Reply(tool_calls=[bash("touch ran-unsandboxed")]),
        Reply(text="ok"),
    ])
    run(harness.prompt("run"))
    [result] = tool_results(harness)
    assert result.is_error and "bubblewrap (bwrap) is not installed" in text(result)
    assert not (workspace / "ran-unsandboxed").exists()
    with pytest.raises(OSError, match="bubblewrap"):
        run(harness.run_bash("touch ran-unsandboxed"))
    assert not (workspace / "ran-unsandboxed").exists()


def test_settings_are_per_project_and_enabled_false_turns_the_sandbox_off(workspace, tmp_path):
    from pi_sandbox import sandbox_settings

    harness, _ = harness_for(workspace, [], sandbox={"enabled": False})
    env = run(harness.ctx.environment())
    assert not isinstance(env, SandboxEnvironment)

    other = tmp_path / "other-project"
    other.mkdir()
    harness, _ = harness_for(other, [], sandbox={"network": "yes please", "writable": "/"})
    env = run(harness.ctx.environment())
    assert isinstance(env, SandboxEnvironment) and env.network is False and env.writable == []
    _, problems = sandbox_settings(harness.ctx)
    assert len(problems) == 2  # a bad value falls back to the strict default, and is reported


def test_loading_the_plugin_imports_nothing_heavy():
    assert_light_import("pi_sandbox", also=("pi_plugins.tools.environment", "pi_sandbox.environment"))
