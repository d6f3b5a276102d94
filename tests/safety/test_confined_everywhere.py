"""Every way a command starts goes through the one runner, and so runs confined: the
bash tool, the user's ``!cmd``, ``ctx.exec``, a subagent's bash and a ``pi batch`` task's
bash each run in a cgroup of their own under this pi process's (where the machine
allows cgroups; pi-sandbox's own test checks its commands the same way)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys

import pytest

from pi_plugins.sdk import create_harness
from pi_core.app.settings import Settings
from pi_core.session import Session
from pi_core.testing.programs import require
from pi_plugins.tools import cgroups, processes, warden
from support.agents import run
from support.harnesses import make
from support.llm_server import Reply
from support.tool_helpers import invoke

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

SHOW = "cat /proc/self/cgroup"


@pytest.fixture(autouse=True)
def writable_cgroups():
    require(cgroups.own_folder() is not None, "a cgroup v2 this process may create cgroups under")


def command_cgroup(listing: str) -> str:
    """The cgroup of a command, as it printed it: its cgroup v2 line."""
    [line] = [line[3:] for line in listing.splitlines() if line.startswith("0::")]
    return line


def assert_confined(listing: str) -> None:
    """``listing`` (a command's /proc/self/cgroup) names a command cgroup of this pi."""
    path = command_cgroup(listing)
    folder = warden.warden(processes.MARKER).folder
    assert folder is not None and re.fullmatch(r".*/command-[0-9a-f]{12}", path), path
    assert folder.endswith(os.path.dirname(path)), (folder, path)


def test_the_bash_tool(tmp_path):
    result = run(invoke("bash", {"command": SHOW}, tmp_path))
    assert_confined(result.content[0].text)


def test_the_users_command_and_ctx_exec(tmp_path):
    harness, *_ = make(tmp_path, [])
    assert_confined(run(harness.run_bash(SHOW)).output)
    assert_confined(run(harness.ctx.exec(SHOW)).stdout)
    assert_confined(run(harness.ctx.exec(["cat", "/proc/self/cgroup"])).stdout)


def test_a_subagents_bash(tmp_path, server, monkeypatch):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    (tmp_path / "agent").mkdir()
    work = tmp_path / "work"
    work.mkdir()
    server.push(Reply(tool_calls=[("subagent", {"task": "show your cgroup"})]),
                Reply(tool_calls=[("bash", {"command": f"{SHOW} > child.txt"})]),
                Reply(text="child done"), Reply(text="parent done"))

    async def scenario():
        harness = await create_harness(
            model=server.model("openai-completions"), session=Session.create(work, tmp_path / "sessions"),
            cwd=str(work), builtins=True, settings=Settings({}), active_tools=["bash", "subagent"])
        await harness.prompt("delegate")
        await harness.close()
        return harness

    harness = asyncio.run(scenario())
    assert harness.messages[-1].text == "parent done"
    assert_confined((work / "child.txt").read_text())


def test_a_batch_tasks_bash(tmp_path, server, monkeypatch):
    from pi_plugins.batch.runner import run_batch

    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "models.json").write_text(json.dumps(server.models_json("local")))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    work = tmp_path / "project"
    work.mkdir()
    server.push(Reply(tool_calls=[("bash", {"command": f"{SHOW} > task.txt"})]), Reply(text="task done"))
    [result] = asyncio.run(run_batch([{"id": "t", "prompt": "show it", "cwd": str(work),
                                       "model": "local/test-model"}], out=tmp_path / "out.jsonl"))
    assert result["text"] == "task done", result
    assert_confined((work / "task.txt").read_text())
